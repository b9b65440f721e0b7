"""bin/load's audit (tools/queries/load_audit.sql, tools/load/audit.py) finds
planted damage: a lost job, a doubled job, a delivery acknowledged but never
stored, pending work once the load has drained, and a doubled comment or check
run on the code host. Deliveries go through the real intake."""
from __future__ import annotations

import json

from tests.helpers.paths import webhook_fixture
from tests.helpers.service import make_lifecycle_jobs, post_webhook
from tools.load.audit import empty_host_view, run_audit

FIXTURE = "pull_request.labeled.8.json"


def deliver(client, count: int, owner=None) -> list[str]:
    """Deliveries through the real intake; with `owner`, their jobs made as a worker's claim makes them."""
    body = webhook_fixture(FIXTURE)
    ids = [f"load-audit-{index}" for index in range(count)]
    for delivery_id in ids:
        assert post_webhook(client, body, "pull_request", delivery_id=delivery_id).status_code == 202
    if owner is not None:
        make_lifecycle_jobs(owner)
    return ids


def test_stored_deliveries_pass_the_audit(client, db_url):
    ids = deliver(client, 3)
    audit = run_audit(db_url, ids, empty_host_view(), settled=False)
    assert audit.passed, audit.checks
    assert audit.checks["deliveries_stored_once"]["accepted"] == 3
    assert audit.checks["one_job_per_delivery"]["deliveries"] == 3


def test_a_lost_job_fails_the_audit(client, owner, db_url):
    ids = deliver(client, 3, owner)
    owner.execute("DELETE FROM lifecycle_jobs WHERE id = (SELECT min(id) FROM lifecycle_jobs)")
    audit = run_audit(db_url, ids, empty_host_view(), settled=False)
    assert not audit.passed
    assert audit.failed == ["one_job_per_delivery"]
    assert audit.checks["one_job_per_delivery"]["lost"] == 1


def test_a_doubled_job_fails_the_audit(client, owner, db_url):
    ids = deliver(client, 3, owner)
    # The unique indexes would refuse it: the audit must not rely on them (a migration may drop one).
    owner.execute("ALTER TABLE lifecycle_jobs DROP CONSTRAINT IF EXISTS lifecycle_jobs_inbox_id_key, "
                  "DROP CONSTRAINT IF EXISTS lifecycle_jobs_idempotency_key_key")
    owner.execute("INSERT INTO lifecycle_jobs (inbox_id, idempotency_key, installation_id, kind, action, status, "
                  "run_after, created_at, updated_at) SELECT inbox_id, idempotency_key, installation_id, kind, action, "
                  "status, run_after, created_at, updated_at FROM lifecycle_jobs ORDER BY id LIMIT 1")
    audit = run_audit(db_url, ids, empty_host_view(), settled=False)
    assert audit.failed == ["one_job_per_delivery"]
    assert audit.checks["one_job_per_delivery"]["doubled"] == 1
    assert audit.checks["one_job_per_delivery"]["same_key_twice"] == 1


def test_an_acknowledged_delivery_that_was_not_stored_fails_the_audit(client, db_url):
    ids = deliver(client, 2)
    audit = run_audit(db_url, ids + ["load-audit-never-stored"], empty_host_view(), settled=False)
    assert audit.failed == ["deliveries_stored_once"]
    assert audit.checks["deliveries_stored_once"]["missing"] == 1


def test_pending_work_counts_as_lost_once_the_load_has_drained(client, owner, db_url):
    # No worker runs here: one delivery's job is made and stays pending, the
    # other delivery still awaits its job.
    ids = deliver(client, 1, owner) + ["load-audit-awaiting"]
    assert post_webhook(client, webhook_fixture(FIXTURE), "pull_request", delivery_id=ids[1]).status_code == 202
    assert run_audit(db_url, ids, empty_host_view(), settled=False).passed
    audit = run_audit(db_url, ids, empty_host_view(), settled=True)
    assert audit.failed == ["jobs_completed"]
    assert audit.checks["jobs_completed"]["pending"] == 2


def test_a_doubled_comment_or_check_run_on_the_code_host_fails_the_audit(client, db_url):
    ids = deliver(client, 1)
    repository = json.loads(webhook_fixture(FIXTURE))["repository"]["id"]
    view = empty_host_view()
    view["comments"] = [{"id": 1, "repository_id": repository, "issue_number": 7},
                        {"id": 2, "repository_id": repository, "issue_number": 7}]
    view["check_runs"] = [{"id": n, "repository_id": repository, "head_sha": "a" * 40, "external_id": "x",
                           "status": "completed", "conclusion": "success"} for n in (3, 4)]
    audit = run_audit(db_url, ids, view, settled=False)
    assert sorted(audit.failed) == ["at_most_one_comment_per_pull_request", "one_check_run_per_head"]
    assert audit.checks["at_most_one_comment_per_pull_request"]["doubled"] == 1
    assert audit.checks["one_check_run_per_head"]["doubled"] == 1
