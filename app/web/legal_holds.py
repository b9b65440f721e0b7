"""The operator API for legal holds on an account.

    GET    /api/v1/operator/accounts/{accountId}/legal-holds?limit=&before=
    POST   /api/v1/operator/accounts/{accountId}/legal-holds            {"reason", "reference"?}
    DELETE /api/v1/operator/accounts/{accountId}/legal-holds/{holdId}

An active hold keeps everything of its account: retention skips it and a due
erasure is blocked until the last hold is released (sql/functions/legal_holds.sql).
The same gate as the dead-letter API (app/web/operator.py: 503 unless
configured, the operator limiter's 429 before the token is compared, 401);
placing and releasing each need an Idempotency-Key, are one SQL call, and are
audited with the configured operator actor. The reason is the operator's own
text: it is kept on the hold, shown to operators, and never logged or put in
an audit event.
"""
from __future__ import annotations

import re

import falcon

from app import sql_api
from app.jsonlog import log
from app.web import db
from app.web.bodies import SMALL_MAX_BYTES, read_json_object
from app.web.errors import ApiError
from app.web.operator import OperatorGate, OperatorResource
from app.web.params import idempotency_key, path_id
from app.web.tokens import iso

REASON_MAX, REFERENCE_MAX = 1000, 200
# Printable text: no control characters (they would reach psql and logs of readers).
CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def _text(body: dict, name: str, maximum: int, required: bool) -> str | None:
    if name not in body and not required:
        return None
    value = body.get(name)
    if not isinstance(value, str) or not value.strip() or len(value) > maximum or CONTROL.search(value):
        raise ApiError(400, f"invalid_{name}",
                       f"{name} must be 1 to {maximum} characters of text without control characters")
    return value


def _before(raw: str | None) -> int | None:
    return None if raw is None else path_id(raw, "invalid_before", "before")


def _hold(row: dict) -> dict:
    return {"holdId": str(row["hold_id"]), "active": row["active"], "reason": row["reason"],
            "reference": row["reference"], "placedBy": row["placed_by"], "placedAt": iso(row["placed_at"]),
            "releasedBy": row["released_by"], "releasedAt": iso(row["released_at"])}


def _account_not_found() -> ApiError:
    return ApiError(404, "account_not_found", "the service knows no such account")


_REUSED = ApiError(409, "idempotency_key_reused", "this Idempotency-Key was already used for another request")


class LegalHolds(OperatorResource):
    def on_get(self, req, resp, account_id):
        self.gate.authenticate(req)
        account = path_id(account_id, "invalid_account_id", "accountId")
        rows, limit = self.page_rows(req, "legal_holds_page", _before, account_id=account)
        if not rows:
            raise _account_not_found()
        holds = [r for r in rows if r["hold_id"] is not None]
        page = holds[:limit]
        resp.media = {"ok": True, "accountId": str(account), "items": [_hold(r) for r in page],
                      "nextBefore": str(page[-1]["hold_id"]) if len(holds) > limit else None}

    def on_post(self, req, resp, account_id):
        actor = self.gate.authenticate(req)
        account = path_id(account_id, "invalid_account_id", "accountId")
        key = idempotency_key(req)
        body = read_json_object(req, SMALL_MAX_BYTES)
        # Unknown properties are dropped, as the spec's versioning section says.
        reason = _text(body, "reason", REASON_MAX, required=True)
        reference = _text(body, "reference", REFERENCE_MAX, required=False)
        # Keyed by the Idempotency-Key: a retry after a lost connection answers already_applied.
        row = db.call(self.pool, self.config, sql_api.legal_hold_place, idempotent=True, account_id=account,
                      reason=reason, reference=reference, idempotency_key=key, actor=actor)
        log("operator.legal_hold_placed", accountId=account, outcome=row["outcome"], holdId=row["hold_id"],
            actor=actor, auditEventId=str(row["audit_event_id"]) if row["audit_event_id"] else None)
        if row["outcome"] == "account_not_found":
            raise _account_not_found()
        if row["outcome"] == "idempotency_key_reused":
            raise _REUSED
        resp.status = falcon.HTTP_201 if row["outcome"] == "placed" else falcon.HTTP_200
        resp.media = {"ok": True, "outcome": row["outcome"], "accountId": str(account), "holdId": str(row["hold_id"]),
                      "auditEventId": str(row["audit_event_id"]), "placedAt": iso(row["placed_at"])}


class LegalHold(OperatorResource):
    def on_delete(self, req, resp, account_id, hold_id):
        actor = self.gate.authenticate(req)
        account = path_id(account_id, "invalid_account_id", "accountId")
        hold = path_id(hold_id, "invalid_hold_id", "holdId")
        key = idempotency_key(req)
        row = db.call(self.pool, self.config, sql_api.legal_hold_release, idempotent=True, account_id=account,
                      hold_id=hold, idempotency_key=key, actor=actor)
        log("operator.legal_hold_released", accountId=account, holdId=hold, outcome=row["outcome"], actor=actor,
            erasureRequestId=row["erasure_request_id"], erasureResumed=row["erasure_resumed"],
            auditEventId=str(row["audit_event_id"]) if row["audit_event_id"] else None)
        if row["outcome"] == "not_found":
            raise ApiError(404, "not_found", "no such legal hold on this account")
        if row["outcome"] == "idempotency_key_reused":
            raise _REUSED
        resp.media = {"ok": True, "outcome": row["outcome"], "accountId": str(account), "holdId": str(hold),
                      "auditEventId": str(row["audit_event_id"]) if row["audit_event_id"] else None,
                      "releasedAt": iso(row["released_at"]), "erasureResumed": bool(row["erasure_resumed"])}


def add_routes(app: falcon.App, config, pool, gate: OperatorGate) -> None:
    base = "/api/v1/operator/accounts/{account_id}/legal-holds"
    app.add_route(base, LegalHolds(config, pool, gate))
    app.add_route(base + "/{hold_id}", LegalHold(config, pool, gate))
