"""The operator API: an installation's dead letters, and their replay.

    GET  /api/v1/operator/installations/{installationId}/dead-letters?limit=&before=
    POST /api/v1/operator/installations/{installationId}/dead-letters/{itemType}/{itemId}/replay

Enabled only when SERVICE_OPERATOR_API_TOKEN and SERVICE_OPERATOR_ACTOR_ID
are both set and valid; otherwise 503 `unavailable`. Checks, in order: the
client's operator failure limiter (429 with Retry-After before the token is
compared, even the correct one), then the token (byte length, then a
constant-time comparison; 401 `invalid_operator_token`, counted). The audit
actor is always the configured actor id.
"""
from __future__ import annotations

import datetime as dt
import hmac
import uuid

import falcon

from app import queries, sql_api
from app.jsonlog import log
from app.web import auth_throttle, db
from app.web.errors import ApiError
from app.web.keyset import limit_param
from app.web.params import idempotency_key, path_id, positive_id, utc_instant
from app.web.tokens import iso

ITEM_TYPES = ("job", "outbox", "supply")   # supply: work_items (component supply work)
DEFAULT_PAGE, MAX_PAGE = 50, 100
CHALLENGE = {"WWW-Authenticate": 'Bearer realm="boardready-operator"'}


class OperatorGate:
    def __init__(self, config, pool):
        self.config = config
        self.pool = pool

    @property
    def enabled(self) -> bool:
        return self.config.operator_api_token is not None and self.config.operator_actor_id is not None

    def authenticate(self, req) -> str:
        """The audit actor, `operator:<configured actor id>`, once the caller proved it holds the operator token."""
        if not self.enabled:
            raise ApiError(503, "unavailable", "the operator API is not configured")
        if not (req.get_header("Authorization") or "").strip():
            # No credential at all is neither counted nor limited (a cross-site
            # request cannot lock the operator out).
            raise ApiError(401, "invalid_operator_token", "a valid operator token is required", headers=CHALLENGE)
        key = auth_throttle.client_key(req)
        at = auth_throttle.now()
        with db.connection(self.pool, self.config) as conn:
            auth_throttle.refuse_if_limited(conn, auth_throttle.OPERATOR, key,
                                            self.config.operator_rate_limit_per_minute, at)
            if not self._matches(req.get_header("Authorization")):
                auth_throttle.record_failure(conn, auth_throttle.OPERATOR, key, at)
                raise ApiError(401, "invalid_operator_token", "a valid operator token is required",
                               headers=CHALLENGE)
        return f"operator:{self.config.operator_actor_id}"

    def _matches(self, header: str | None) -> bool:
        if not header:
            return False
        scheme, _, presented = header.strip().partition(" ")
        if scheme.lower() != "bearer":
            return False
        try:
            presented_bytes = presented.strip().encode("ascii")
        except UnicodeEncodeError:
            return False
        expected = self.config.operator_api_token.reveal().encode("ascii")
        # Lengths first (compare_digest needs equal lengths to be constant
        # time); the length of a fixed configured token is no secret worth keeping.
        return len(presented_bytes) == len(expected) and hmac.compare_digest(presented_bytes, expected)


def _before(raw: str | None) -> dt.datetime | None:
    if raw is None:
        return None
    value = utc_instant(raw)
    if value is None:
        raise ApiError(400, "invalid_before", "before must be an ISO 8601 timestamp with an offset (nextBefore)")
    return value


class OperatorResource:
    """A resource of the operator API: it checks the operator token itself
    (`self.gate.authenticate(req)`), so the bearer middleware leaves it alone."""

    auth = "operator"

    def __init__(self, config, pool, gate: OperatorGate):
        self.config, self.pool, self.gate = config, pool, gate

    def page_rows(self, req, query: str, parse_before, **params) -> tuple[list[dict], int]:
        """A listing's rows below the request's `before` cursor (read by
        parse_before) from the named query, and the page size: limit + 1 rows,
        so that the caller can tell whether another page follows."""
        limit = limit_param(req, DEFAULT_PAGE, MAX_PAGE)
        before = parse_before(req.get_param("before"))
        with db.connection(self.pool, self.config) as conn:
            return queries.fetch_all(conn, query, before=before, limit=limit + 1, **params), limit


def page_of(rows: list[dict], limit: int) -> tuple[list[dict], dt.datetime | None]:
    """Cut one page and its nextBefore from up to limit + 1 rows, newest first.

    The cursor is a timestamp (the spec's nextBefore), so a page does not end
    in the middle of a group of items that failed at the same instant: the
    group moves to the next page, whose cursor is the instant plus one
    microsecond. A group larger than a whole page (one claim dead-letters every
    expired lease with one failed_at) is cut, and the page's last item is the
    tie-breaker (`dead_letter_tie`, nextBeforeId) that reaches the rest.
    """
    if len(rows) <= limit:
        return rows, None
    page, boundary = rows[:limit], rows[limit - 1]["failed_at"]
    if rows[limit]["failed_at"] != boundary:
        return page, boundary
    whole_groups = [r for r in page if r["failed_at"] != boundary]
    if whole_groups:
        return whole_groups, boundary + dt.timedelta(microseconds=1)
    return page, boundary


def dead_letter_tie(page: list[dict], next_before: dt.datetime | None) -> str | None:
    """nextBeforeId: the last item, when the page was cut inside one instant (nextBefore is that instant)."""
    if next_before is None or not page or page[-1]["failed_at"] != next_before:
        return None
    return f"{page[-1]['item_type']}:{page[-1]['item_id']}"


def _before_id(raw: str | None, before: dt.datetime | None) -> tuple[str | None, int | None]:
    if raw is None:
        return None, None
    kind, _, number = raw.partition(":")
    item = positive_id(number)
    if kind not in ITEM_TYPES or item is None or before is None:
        raise ApiError(400, "invalid_before_id", "beforeId must be the nextBeforeId of the previous page, with before")
    return kind, item


class DeadLetters(OperatorResource):
    def on_get(self, req, resp, installation_id):
        self.gate.authenticate(req)
        installation = path_id(installation_id, "invalid_installation_id", "installationId")
        before_type, before_id = _before_id(req.get_param("beforeId"), _before(req.get_param("before")))
        rows, limit = self.page_rows(req, "dead_letters_page", _before, installation_id=installation,
                                     before_type=before_type, before_id=before_id)
        page, next_before = page_of(rows, limit)
        resp.media = {
            "ok": True,
            "items": [{
                "itemType": r["item_type"], "itemId": str(r["item_id"]), "repository": r["repository"],
                "reasonCode": r["reason_code"], "errorClass": r["error_class"], "attempts": r["attempts"],
                "failedAt": iso(r["failed_at"]), "replaySafe": bool(r["replay_safe"]),
            } for r in page],
            "nextBefore": iso(next_before),
        }
        tie = dead_letter_tie(page, next_before)
        if tie is not None:   # only when the page ended inside one instant
            resp.media["nextBeforeId"] = tie


_REPLAY_ERRORS = {
    "not_found": (404, "not_found", "no such dead-letter item in this installation"),
    "not_replayable": (409, "not_replayable", "the item is not safe to replay; reconcile or handle it manually"),
    "idempotency_key_reused": (409, "idempotency_key_reused",
                               "this Idempotency-Key was already used for another replay request"),
}


class Replay(OperatorResource):
    def on_post(self, req, resp, installation_id, item_type, item_id):
        actor = self.gate.authenticate(req)
        installation = path_id(installation_id, "invalid_installation_id", "installationId")
        if item_type not in ITEM_TYPES:
            raise ApiError(400, "invalid_item_type", "itemType must be job, outbox or supply")
        item = path_id(item_id, "invalid_item_id", "itemId")
        key = idempotency_key(req)

        operation_id = str(uuid.uuid4())
        with db.connection(self.pool, self.config) as conn:
            row = sql_api.dead_letter_replay(conn, installation_id=installation, item_type=item_type, item_id=item,
                                             idempotency_key=key, actor=actor, operation_id=operation_id)
        log("operator.replay", installationId=installation, itemType=item_type, itemId=item_id,
            outcome=row["outcome"], operationId=operation_id, actor=actor,
            auditEventId=str(row["audit_event_id"]) if row["audit_event_id"] else None)
        if row["outcome"] in _REPLAY_ERRORS:
            raise ApiError(*_REPLAY_ERRORS[row["outcome"]])
        resp.status = falcon.HTTP_200
        resp.media = {"ok": True, "outcome": row["outcome"], "auditEventId": str(row["audit_event_id"]),
                      "itemType": item_type, "itemId": item_id}
