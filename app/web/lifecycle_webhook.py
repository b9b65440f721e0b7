"""POST /api/host/webhook: the app's lifecycle webhook into the durable inbox."""
from __future__ import annotations

import falcon
import psycopg

from app import database
from app.config import WEBHOOK_MAX_BODY_BYTES
from app.jsonlog import log
from app.lifecycle_events import InvalidPayload, normalize
from app.web.errors import ApiError
from app.web.signed_delivery import read_signed_delivery

PROVIDER = "host"


class LifecycleWebhook:
    def __init__(self, config, pool):
        self.config = config
        self.pool = pool

    def on_post(self, req, resp):
        delivery = read_signed_delivery(req, self.config.webhook_secret, "HOST_WEBHOOK_SECRET",
                                        WEBHOOK_MAX_BODY_BYTES)
        try:
            event = normalize(delivery.event, delivery.payload)
        except InvalidPayload as exc:
            raise ApiError(400, "missing_or_invalid_field", f"{exc.field} {exc.message}") from None

        try:
            with self.pool.connection(timeout=self.config.db_acquire_timeout_ms / 1000) as conn:
                row = database.call_one(
                    conn, "intake_accept_delivery",
                    p_provider=PROVIDER, p_delivery_id=delivery.delivery_id, p_event=delivery.event,
                    p_action=event.action, p_installation_id=event.installation_id,
                    p_actions=psycopg.types.json.Jsonb(event.actions),
                    p_payload_sha256=delivery.raw_sha256, p_payload_bytes=delivery.raw_bytes,
                )
        except Exception as exc:  # pool timeout, connection lost, server down
            log("webhook.persist_failed", level="error", deliveryId=delivery.delivery_id,
                errorClass=type(exc).__name__)
            raise ApiError(503, "persistence_unavailable",
                           "the delivery could not be stored; it was not acknowledged, send it again") from None

        log("webhook.delivery", deliveryId=delivery.delivery_id, hostEvent=delivery.event, action=event.action,
            outcome=row["outcome"], inboxId=row["inbox_id"], jobId=row["job_id"])
        resp.status = falcon.HTTP_202 if row["outcome"] == "accepted" else falcon.HTTP_200
        resp.media = {"ok": True, "outcome": row["outcome"], "deliveryId": delivery.delivery_id}
