"""Report artifacts: the workflow's upload bound like its result (OIDC, the
attempt, the workflow run) and held to the report the signed result
announced, the size cap, capability links (fresh on each view
of the run page, expired or forged: the same 403 that names nothing), the
sandbox the report is served in, and deletion with the run."""
from __future__ import annotations

import hashlib
import re
import time

import pytest
from falcon import testing

from app.web.pages.artifacts import ARTIFACT_CSP, UPLOAD_PATH, capability_url
from app.web.wsgi import create_app
from contracts import openapi_response_validator
from tests.helpers.results import DispatchedRun, envelope, finding, make_result
from tests.helpers.sessions import Session

SIGNING_KEY = "artifact-signing-key-for-tests-0123456789"
REPORT = b"<!doctype html><title>report</title><p>two parts lack an MPN</p>"


@pytest.fixture
def kit(host):
    from tests.helpers.host import make_hostkit
    return make_hostkit(host, SERVICE_OIDC_ISSUER=host.oidc_issuer, SERVICE_ARTIFACT_SIGNING_KEY=SIGNING_KEY,
                        SERVICE_ARTIFACT_MAX_BYTES="4096", SERVICE_ARTIFACT_CAPABILITY_TTL_SECONDS="60")


@pytest.fixture
def client(kit, pool):
    return testing.TestClient(create_app(kit.config, pool))


@pytest.fixture
def decided(kit, client, pool, db_url, owner):
    run = DispatchedRun(kit, client, pool, db_url, owner)
    result = make_result(run.head_sha, "at-risk", [finding(1, "medium", line=3)],
                         reportArtifact={"mediaType": "text/html", "sha256": hashlib.sha256(REPORT).hexdigest(),
                                         "bytes": len(REPORT)})
    assert run.post(client, envelope(run.attempt_ref, result)).status_code == 200
    return run


def upload(client, run, body=REPORT, token=None, attempt=None, content_type="text/html; charset=utf-8"):
    """The runner's upload; every answer checked against the contract's description of it."""
    answer = client.simulate_post(UPLOAD_PATH, params={"attemptId": attempt or run.attempt_ref}, body=body,
                                  headers={"Authorization": f"Bearer {token or run.token()}",
                                           "Content-Type": content_type})
    openapi_response_validator(UPLOAD_PATH, "post", answer.status_code).validate(answer.json)
    return answer


def test_upload_is_bound_like_the_result_and_capped(kit, client, decided, owner, pool, db_url):
    assert upload(client, decided, token="not-a-token").status_code == 401
    forged = upload(client, decided, token=decided.kit.host.mint_oidc_token("someone-else", run_id=decided.workflow_run_id))
    assert forged.status_code == 401
    unknown = upload(client, decided, attempt=decided.attempt_ref.split("-")[0] + "-" + "0" * 32)
    assert unknown.status_code == 404 and unknown.json["code"] == "attempt_not_found"
    assert upload(client, decided, content_type="application/json").status_code == 415
    too_big = upload(client, decided, body=b"x" * 4097)
    assert too_big.status_code == 413 and too_big.json["code"] == "payload_too_large"
    assert owner.execute("SELECT count(*) AS n FROM report_artifacts").fetchone()["n"] == 0
    stored = upload(client, decided)
    assert stored.status_code == 201 and stored.json["outcome"] == "stored"
    again = upload(client, decided)
    assert again.status_code == 200 and again.json["outcome"] == "unchanged"
    row = owner.execute("SELECT sha256, size_bytes, release_run_id FROM report_artifacts").fetchone()
    assert row == {"sha256": hashlib.sha256(REPORT).hexdigest(), "size_bytes": len(REPORT),
                   "release_run_id": decided.release_run_id}


def test_only_the_report_the_signed_result_announced_is_taken(kit, client, decided, owner):
    # The same size with other bytes, and other sizes: each is 409, nothing stored.
    for other in (REPORT.replace(b"two", b"six"), REPORT + b"<!-- more -->", REPORT[:-4]):
        refused = upload(client, decided, body=other)
        assert refused.status_code == 409 and refused.json["code"] == "report_mismatch"
    assert owner.execute("SELECT count(*) AS n FROM report_artifacts").fetchone()["n"] == 0
    assert upload(client, decided).status_code == 201


def test_a_result_that_announces_no_report_takes_none(kit, client, pool, db_url, owner):
    run = DispatchedRun(kit, client, pool, db_url, owner)
    assert run.post(client, envelope(run.attempt_ref, make_result(run.head_sha, "ready"))).status_code == 200
    refused = upload(client, run)
    assert refused.status_code == 409 and refused.json["code"] == "report_not_announced"
    assert owner.execute("SELECT count(*) AS n FROM report_artifacts").fetchone()["n"] == 0


def test_no_result_yet_no_report(kit, client, pool, db_url, owner):
    run = DispatchedRun(kit, client, pool, db_url, owner)
    refused = upload(client, run)
    assert refused.status_code == 409 and refused.json["code"] == "result_required"


def test_the_run_page_mints_a_fresh_link_and_the_report_is_sandboxed(kit, client, decided, owner, pool):
    upload(client, decided)
    session = Session(pool, [kit.repository["id"]])
    page = client.simulate_get(f"/release-runs/{decided.release_run_id}", headers=session.headers(csrf=False))
    link = re.search(r'href="(/artifacts/[^"]+)"', page.text).group(1).replace("&amp;", "&")
    path, query = link.split("?")
    report = client.simulate_get(path, query_string=query)   # no cookie: the link is the authority
    assert report.status_code == 200 and report.content == REPORT
    assert report.headers["content-security-policy"] == ARTIFACT_CSP
    assert report.headers["x-content-type-options"] == "nosniff"
    assert "set-cookie" not in report.headers


def test_expired_forged_and_unknown_links_are_one_403(kit, client, decided, owner):
    upload(client, decided)
    artifact_id = owner.execute("SELECT id FROM report_artifacts").fetchone()["id"]
    expired = capability_url(kit.config, artifact_id, now=time.time() - 120)
    valid = capability_url(kit.config, artifact_id)
    forged = re.sub(r"sig=.", "sig=A" if "sig=B" in valid else "sig=B", valid)
    other = valid.replace(f"/artifacts/{artifact_id}?", f"/artifacts/{artifact_id + 1}?")
    answers = [client.simulate_get(url.split("?")[0], query_string=url.split("?")[1])
               for url in (expired, forged, other, f"/artifacts/{artifact_id}?exp=9999999999&sig=x",
                           f"/artifacts/{artifact_id}?exp=%C2%B2&sig=x")]   # '²': isdigit() but not int()
    assert {a.status_code for a in answers} == {403}
    assert len({a.text for a in answers}) == 1 and f"/artifacts/{artifact_id}" not in answers[0].text


def test_the_report_goes_with_its_run(kit, client, decided, owner):
    upload(client, decided)
    # What retention does to a run's result (the cascade is the schema's, whoever deletes).
    owner.execute("DELETE FROM outbox_items WHERE release_run_id = %s", (decided.release_run_id,))
    owner.execute("DELETE FROM run_findings WHERE run_result_id IN (SELECT id FROM run_results WHERE release_run_id = %s)",
                  (decided.release_run_id,))
    owner.execute("DELETE FROM run_results WHERE release_run_id = %s", (decided.release_run_id,))
    assert owner.execute("SELECT count(*) AS n FROM report_artifacts").fetchone()["n"] == 0
