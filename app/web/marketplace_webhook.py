"""POST /api/host/marketplace/webhook: marketplace_purchase and ping.

Same reading rules as the lifecycle webhook (app/web/signed_delivery.py) with
its own secret, HOST_MARKETPLACE_WEBHOOK_SECRET. The account state changes
synchronously: storing the delivery and applying it is one SQL statement
(marketplace_apply_event), so the answer is 200 with what happened.
"""
from __future__ import annotations

import falcon

from app import sql_api
from app.config import WEBHOOK_MAX_BODY_BYTES
from app.jsonlog import log
from app.marketplace_events import normalize
from app.payload import InvalidPayload
from app.web import db
from app.web.errors import ApiError
from app.web.signed_delivery import read_signed_delivery


class MarketplaceWebhook:
    def __init__(self, config, pool):
        self.config = config
        self.pool = pool

    def on_post(self, req, resp):
        delivery = read_signed_delivery(req, self.config.marketplace_webhook_secret,
                                        "HOST_MARKETPLACE_WEBHOOK_SECRET", WEBHOOK_MAX_BODY_BYTES)
        if delivery.event == "ping":
            # Reachability and signature only: nothing is stored.
            resp.media = {"ok": True, "outcome": "pong", "deliveryId": delivery.delivery_id}
            return
        if delivery.event != "marketplace_purchase":
            raise ApiError(400, "unsupported_event", "this endpoint handles marketplace_purchase and ping")
        try:
            event = normalize(delivery.payload)
        except InvalidPayload as exc:
            raise ApiError(400, exc.code, f"{exc.field} {exc.message}") from None

        # Idempotent by delivery id: a retry after a lost connection answers `duplicate`.
        row = db.call(
            self.pool, self.config, sql_api.marketplace_apply_event, idempotent=True, refusal=db.NOT_STORED,
            event="marketplace.persist_failed", log_fields={"deliveryId": delivery.delivery_id},
            delivery_id=delivery.delivery_id, action=event.action, account_id=event.account_id,
            account_login=event.account_login, account_type=event.account_type,
            effective_date=event.effective_date, payload_sha256=delivery.raw_sha256,
            payload_bytes=delivery.raw_bytes,
        )

        log("marketplace.delivery", deliveryId=delivery.delivery_id, action=event.action,
            accountId=event.account_id, outcome=row["outcome"], accountState=row["account_state"],
            tokensRevoked=row["tokens_revoked"], erasureRequestId=row["erasure_request_id"])
        resp.status = falcon.HTTP_200
        body = {"ok": True, "outcome": row["outcome"], "deliveryId": delivery.delivery_id}
        if row["account_state"] is not None:
            body["accountState"] = row["account_state"]
        resp.media = body
