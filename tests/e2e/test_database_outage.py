"""The database goes away: the webhook answers 503 and acknowledges nothing;
once it is back, the re-sent delivery is stored exactly once."""
from __future__ import annotations

import time

from falcon import testing
from psycopg.conninfo import conninfo_to_dict

from app import database
from app.web.wsgi import create_app
from tests.helpers.paths import webhook_fixture
from tests.helpers.service import count, make_lifecycle_jobs, webhook_headers
from tests.helpers.tcp_proxy import TcpProxy


def test_outage_then_redelivery(db_url, owner, config):
    info = conninfo_to_dict(db_url)
    proxy = TcpProxy(info.get("host") or "127.0.0.1", int(info.get("port") or 5432))
    pool = database.create_pool(
        f"postgresql://{info.get('user', 'postgres')}@127.0.0.1:{proxy.port}/{info['dbname']}",
        max_size=4, name="outage", open_wait_seconds=10)
    client = testing.TestClient(create_app(config, pool))
    body = webhook_fixture("pull_request.opened.12.json")
    headers = webhook_headers(body, "pull_request", delivery_id="outage-1")
    try:
        proxy.cut()
        down = client.simulate_post("/api/host/webhook", body=body, headers=headers)
        assert down.status_code == 503
        assert down.json["code"] == "persistence_unavailable"
        assert client.simulate_get("/api/health/ready").json["reason"] == "database-unavailable"
        assert count(owner, "webhook_inbox") == 0

        proxy.restore()
        # The code host re-sends an unacknowledged delivery; the pool reconnects with backoff.
        deadline = time.monotonic() + 60
        while (again := client.simulate_post("/api/host/webhook", body=body, headers=headers)).status_code == 503:
            assert time.monotonic() < deadline, "the service did not recover"
            time.sleep(0.2)
        assert again.status_code == 202
        assert client.simulate_post("/api/host/webhook", body=body, headers=headers).status_code == 200
        assert count(owner, "webhook_inbox") == 1
        assert make_lifecycle_jobs(owner) == 1
    finally:
        pool.close(timeout=1)
        proxy.close()
