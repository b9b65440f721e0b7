"""POST /api/host/webhook: the app's lifecycle webhook into the durable inbox."""
from __future__ import annotations

import time

import falcon
from psycopg.types.json import Jsonb

from app.config import WEBHOOK_MAX_BODY_BYTES
from app.jsonlog import log
from app.lifecycle_events import normalize
from app.payload import InvalidPayload
from app.wakeup import Waker
from app.web import db
from app.web.errors import ApiError
from app.web.signed_delivery import read_signed_delivery

PROVIDER = "host"


class LifecycleWebhook:
    def __init__(self, config, pool):
        self.config = config
        self.pool = pool
        self.waker = Waker(pool, "lifecycle_jobs")

    def on_post(self, req, resp):
        started = time.monotonic()  # the acceptance time the SLO's p95 is computed from (stored below)
        # Only the normalized actions are kept, and normalize() checks each
        # field it reads (NUL, integer ranges): a pass over the rest of a
        # 25 KiB pull request payload cost more Python time than the rest of
        # the request (tools/bench_intake.py, README Benchmarks).
        delivery = read_signed_delivery(req, self.config.webhook_secret, "HOST_WEBHOOK_SECRET",
                                        WEBHOOK_MAX_BODY_BYTES, fields_checked_when_read=True)
        try:
            event = normalize(delivery.event, delivery.payload)
        except InvalidPayload as exc:
            raise ApiError(400, exc.code, f"{exc.field} {exc.message}") from None

        # Idempotent by delivery id: a retry after a lost connection answers `duplicate`.
        row = db.call_one(
            self.pool, self.config, "intake_accept_delivery", idempotent=True, refusal=db.NOT_STORED,
            event="webhook.persist_failed", log_fields={"deliveryId": delivery.delivery_id},
            p_provider=PROVIDER, p_delivery_id=delivery.delivery_id, p_event=delivery.event,
            p_action=event.action, p_installation_id=event.installation_id,
            p_actions=Jsonb(event.actions), p_payload_sha256=delivery.raw_sha256, p_payload_bytes=delivery.raw_bytes,
            p_acceptance_ms=round((time.monotonic() - started) * 1000),
        )

        log("webhook.delivery", deliveryId=delivery.delivery_id, hostEvent=delivery.event, action=event.action,
            outcome=row["outcome"], inboxId=row["inbox_id"], awaitsJob=row["awaits_job"])
        if row["awaits_job"]:  # a worker makes the job from the inbox row (sql/functions/jobs.sql)
            self.waker.poke()
        resp.status = falcon.HTTP_202 if row["outcome"] == "accepted" else falcon.HTTP_200
        resp.media = {"ok": True, "outcome": row["outcome"], "deliveryId": delivery.delivery_id}
