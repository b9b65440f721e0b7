"""POST /api/host/webhook: the app's lifecycle webhook into the durable inbox.

A delivery that removes access (membership, repositories, the installation)
also ends the sessions and tokens it concerns at once (app/web/membership.py).
"""
from __future__ import annotations

import time

import falcon

from app import channels
from app.config import WEBHOOK_MAX_BODY_BYTES
from app.jsonlog import log
from app.lifecycle_events import normalize
from app.payload import InvalidPayload
from app.wakeup import Waker
from app.web import membership
from app.web.bodies import parse_strict_json_object
from app.web.errors import ApiError
from app.web.intake_batch import Delivery, IntakeBatcher
from app.web.signed_delivery import read_signed_delivery

PROVIDER = "host"


class LifecycleWebhook:
    def __init__(self, config, pool):
        self.config = config
        self.pool = pool
        self.waker = Waker(pool, channels.LIFECYCLE_JOBS)
        self.batcher = IntakeBatcher(pool, config, PROVIDER)

    def on_post(self, req, resp):
        started = time.monotonic()  # the acceptance time the SLO's p95 is computed from (stored below)
        # Only the normalized actions are kept, and normalize() checks each
        # field it reads (NUL, integer ranges): a pass over the rest of a
        # 25 KiB pull request payload cost more Python time than the rest of
        # the request (tools/bench_intake.py, docs/benchmarks.md).
        delivery = read_signed_delivery(req, self.config.webhook_secret, "HOST_WEBHOOK_SECRET",
                                        WEBHOOK_MAX_BODY_BYTES, parse=parse_strict_json_object)
        try:
            event = normalize(delivery.event, delivery.payload)
            removed = membership.removal(delivery.event, event.action, delivery.payload, event.actions)
        except InvalidPayload as exc:
            raise ApiError(400, exc.code, f"{exc.field} {exc.message}") from None

        # Stored with the deliveries that arrive with it, in one transaction
        # (app/web/intake_batch.py); idempotent by delivery id.
        row = self.batcher.store(Delivery(
            delivery.delivery_id, delivery.event, event.action, event.installation_id, event.actions,
            delivery.raw_sha256, delivery.raw_bytes, acceptance_ms=round((time.monotonic() - started) * 1000)))

        log("webhook.delivery", deliveryId=delivery.delivery_id, hostEvent=delivery.event, action=event.action,
            outcome=row["outcome"], inboxId=row["inbox_id"], awaitsJob=row["awaits_job"])
        if removed is not None:   # again on a redelivery: idempotent
            membership.apply(self.pool, self.config, removed, delivery.delivery_id)
        if row["awaits_job"]:  # a worker makes the job from the inbox row (sql/functions/jobs.sql)
            self.waker.poke()
        resp.status = falcon.HTTP_202 if row["outcome"] == "accepted" else falcon.HTTP_200
        resp.media = {"ok": True, "outcome": row["outcome"], "deliveryId": delivery.delivery_id}
