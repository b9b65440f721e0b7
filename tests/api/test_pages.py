"""The review pages through the Falcon app: the shell and its headers, sign-in
redirects that remember the page, the run listing's pages and filters, the
run page, its forms (CSRF, self-approval, break-glass, waivers) going through
the API's functions, the 404 that names nothing and the canceled account."""
from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.helpers.service import make_config
from tests.helpers.sessions import AUTHOR_ID, Session, decided_run, finding, seed_repositories

PAGE_HEADERS = {"content-security-policy": "default-src 'self'; frame-ancestors 'none'; form-action 'self'; "
                                           "base-uri 'none'",
                "x-frame-options": "DENY", "referrer-policy": "same-origin", "x-content-type-options": "nosniff"}

FP_ERROR, FP_MEDIUM, FP_HIGH = "e0" * 8, "a1" * 8, "b2" * 8


def assert_page(response, status=200):
    assert response.status_code == status, response.text[:500]
    assert response.headers["content-type"].startswith("text/html")
    for name, value in PAGE_HEADERS.items():
        assert response.headers[name] == value, name
    assert "<script" not in response.text


def form_post(client, session, path, fields, csrf=True):
    body = dict(fields)
    if csrf:
        body["csrf_token"] = session.csrf if csrf is True else csrf
    return client.simulate_post(path, body="&".join(f"{k}={v}" for k, v in body.items()),
                                headers={"Content-Type": "application/x-www-form-urlencoded",
                                         **session.headers(csrf=False)})


@pytest.fixture
def config():
    return make_config(HOST_OAUTH_CLIENT_ID="Iv1.pages", HOST_OAUTH_CLIENT_SECRET="pages-secret")


@pytest.fixture
def repos(owner):
    return seed_repositories(owner, 2)


def test_home_sign_in_stylesheet_and_headers(client):
    home = client.simulate_get("/")
    assert_page(home)
    assert 'href="/sign-in"' in home.text
    sign_in = client.simulate_get("/sign-in", params={"returnTo": "/release-runs/5"})
    assert_page(sign_in)
    css = client.simulate_get("/static/boardready.css")
    assert css.status_code == 200 and css.headers["content-type"].startswith("text/css")


def test_a_page_without_a_session_sends_the_viewer_to_sign_in_and_back(client):
    response = client.simulate_get("/release-runs/12", params={"findings": "x"})
    assert response.status_code == 303
    location = urlsplit(response.headers["location"])
    assert location.path == "/sign-in"
    assert parse_qs(location.query)["returnTo"] == ["/release-runs/12?findings=x"]
    # The sign-in page's button carries it on to the OAuth flow; another host is never a target.
    page = client.simulate_get(location.path, query_string=location.query)
    assert "/auth/sign-in?returnTo=/release-runs/12%3Ffindings%3Dx" in page.text
    assert "returnTo=/runs" in client.simulate_get("/sign-in", params={"returnTo": "//evil.example"}).text


def test_a_stale_cookie_is_cleared_and_the_viewer_signs_in_again(client):
    response = client.simulate_get("/runs", headers={"Cookie": "boardready_session=" + "x" * 43})
    assert response.status_code == 303 and response.headers["location"] == "/sign-in?returnTo=/runs"
    assert response.headers["set-cookie"].startswith('boardready_session="";')


def test_unknown_paths_and_other_tenants_runs_are_the_same_404(client, owner, pool, repos):
    theirs = seed_repositories(owner, 1, first_id=8_900_001, installation_id=7_700_009, account_id=7_100_009,
                               login="other")
    run = decided_run(owner, pool, theirs[0])
    session = Session(pool, repos)
    pages = [client.simulate_get(path, headers=session.headers(csrf=False))
             for path in (f"/release-runs/{run['id']}", "/release-runs/99999999", "/release-runs/abc", "/nowhere")]
    for page in pages:
        assert_page(page, 404)
    assert len({p.text for p in pages[:3]}) == 1   # (an unknown path has no resource to read the session)
    assert "There is nothing here" in pages[3].text
    assert "other/" not in pages[0].text
    # The API keeps its JSON.
    assert client.simulate_get("/api/v1/nowhere").json["code"] == "not_found"


def test_runs_page_lists_filters_and_pages_through_the_viewer_runs(client, owner, pool, repos):
    import datetime as dt
    start = dt.datetime(2025, 3, 1, tzinfo=dt.timezone.utc)
    for i in range(30):
        decided_run(owner, pool, repos[i % 2], pr_number=i + 1, started_at=start + dt.timedelta(minutes=i),
                    readiness="ready" if i % 3 else "at-risk")
    session = Session(pool, repos)
    first = client.simulate_get("/runs", headers=session.headers(csrf=False))
    assert_page(first)
    assert first.text.count('href="/release-runs/') == 25
    assert "#30" in first.text and "Newer" not in first.text
    older = re.search(r'href="(/runs\?[^"]*)" rel="next"', first.text).group(1).replace("&amp;", "&")
    second = client.simulate_get(older.split("?")[0], query_string=older.split("?")[1],
                                 headers=session.headers(csrf=False))
    assert_page(second)
    assert second.text.count('href="/release-runs/') == 5 and 'rel="next"' not in second.text
    newer = re.search(r'href="(/runs[^"]*)" rel="prev"', second.text).group(1).replace("&amp;", "&")
    assert newer == "/runs"
    filtered = client.simulate_get("/runs", params={"decision": "CONDITIONAL", "repositoryId": str(repos[0])},
                                   headers=session.headers(csrf=False))
    assert_page(filtered)
    assert filtered.text.count('href="/release-runs/') == 5   # i in 0, 6, 12, 18, 24
    assert client.simulate_get("/runs", params={"status": "nope"},
                               headers=session.headers(csrf=False)).status_code == 400


def test_canceled_account_page_says_so(client, owner, pool, repos):
    owner.execute("INSERT INTO marketplace_accounts (account_id, state, effective_date, last_delivery_id, "
                  "canceled_at, created_at, updated_at) VALUES (%s, 'canceled', now(), 'd-1', now(), now(), now())",
                  (7_100_001,))
    session = Session(pool, repos)
    page = client.simulate_get("/runs", headers=session.headers(csrf=False))
    assert_page(page, 403)
    assert "Account canceled" in page.text and "<strong>acme</strong>" in page.text


def _run_with_findings(owner, pool, repos):
    return decided_run(owner, pool, repos[0], readiness="blocked",
                       findings=[finding(0, "error", FP_ERROR), finding(1, "medium", FP_MEDIUM),
                                 finding(2, "high", FP_HIGH)])


def test_run_page_shows_decision_findings_and_links(client, owner, pool, repos):
    run = _run_with_findings(owner, pool, repos)
    session = Session(pool, repos)
    page = client.simulate_get(f"/release-runs/{run['id']}", headers=session.headers(csrf=False))
    assert_page(page)
    assert 'class="badge d-fail">FAIL' in page.text
    assert "2 error or high finding(s) are not waived" in page.text
    assert f"/acme/board-0/blob/{run['head_sha']}/board.kicad_pcb#L1" in page.text
    assert page.text.index("sev-error") < page.text.index("sev-high") < page.text.index("sev-medium")
    assert page.text.count('name="csrf_token"') >= 5   # sign-out, approve, three waivers


def test_forms_waive_and_approve_through_the_api_functions(client, owner, pool, repos):
    run = _run_with_findings(owner, pool, repos)
    reviewer, author = Session(pool, repos), Session(pool, repos, viewer_id=AUTHOR_ID, login="author")
    path = f"/release-runs/{run['id']}"
    # Without the CSRF token nothing is stored.
    refused = form_post(client, reviewer, path + "/waivers", {"fingerprint": FP_ERROR, "reason": "ok"}, csrf=False)
    assert refused.status_code == 403
    assert owner.execute("SELECT count(*) AS n FROM waivers").fetchone()["n"] == 0
    for fingerprint in (FP_ERROR, FP_HIGH):
        done = form_post(client, reviewer, path + "/waivers", {"fingerprint": fingerprint, "reason": "reviewed+on+the+bench"})
        assert done.status_code == 303 and done.headers["location"] == f"{path}?done=waived#review"
    again = form_post(client, reviewer, path + "/waivers", {"fingerprint": FP_ERROR, "reason": "twice"})
    assert_page(again, 409)
    assert "already covers this fingerprint" in again.text
    # The author approving is refused on the page; break-glass needs its reason.
    own = form_post(client, author, path + "/approvals", {"status": "approved"})
    assert_page(own, 409)
    assert "Break glass" in own.text and "<details class=\"glass\" open>" in own.text
    approved = form_post(client, reviewer, path + "/approvals", {"status": "approved"})
    assert approved.status_code == 303 and "done=approved" in approved.headers["location"]
    page = client.simulate_get(path, params={"done": "approved"}, headers=reviewer.headers(csrf=False))
    assert 'class="badge d-pass">PASS' in page.text and "Your approval is recorded." in page.text
    assert f"host-user:{reviewer.viewer_id}" in page.text and "waived" in page.text
    glass = form_post(client, author, path + "/approvals",
                      {"status": "approved", "break_glass": "on", "reason": "hotfix+for+the+fab+run"})
    assert glass.status_code == 303
    assert owner.execute("SELECT break_glass_reason FROM review_approvals WHERE approver_id = %s",
                         (author.actor,)).fetchone()["break_glass_reason"] == "hotfix for the fab run"
    history = client.simulate_get(path, headers=author.headers(csrf=False)).text
    assert "break glass" in history and "hotfix for the fab run" in history


def test_sign_out_form_ends_the_session(client, pool, repos):
    session = Session(pool, repos)
    response = form_post(client, session, "/auth/sign-out", {})
    assert response.status_code == 303 and response.headers["location"] == "/"
    assert client.simulate_get("/runs", headers=session.headers(csrf=False)).status_code == 303


def test_runs_page_shows_score_findings_review_state_and_which_run_is_newest(client, owner, pool, repos):
    import datetime as dt
    start = dt.datetime(2025, 3, 1, tzinfo=dt.timezone.utc)
    older = decided_run(owner, pool, repos[0], pr_number=7, readiness="blocked", started_at=start,
                        findings=[finding(0, "error", FP_ERROR), finding(1, "medium", FP_MEDIUM)])
    newer = decided_run(owner, pool, repos[0], pr_number=7, readiness="at-risk", started_at=start + dt.timedelta(hours=1),
                        findings=[finding(1, "medium", FP_MEDIUM)])
    ready = decided_run(owner, pool, repos[1], pr_number=8, readiness="ready", started_at=start + dt.timedelta(hours=2))
    session = Session(pool, repos)
    page = client.simulate_get("/runs", headers=session.headers(csrf=False))
    assert_page(page)
    rows = {}
    for row in re.findall(r"<tr class=\"(?:newest|superseded)\">.*?</tr>", page.text, re.S):
        rows[int(re.search(r'href="/release-runs/(\d+)"', row).group(1))] = row
    assert set(rows) == {older["id"], newer["id"], ready["id"]}
    # The older run of pull request 7 is superseded by the newer; each run says its score and findings.
    assert "superseded" in rows[older["id"]] and "newest" not in rows[older["id"]]
    assert "newest" in rows[newer["id"]] and "newest" in rows[ready["id"]]
    assert ">20<" in rows[older["id"]] and "1 blocking</span> / 2" in rows[older["id"]]
    assert ">71<" in rows[newer["id"]] and "0 blocking</span> / 1" in rows[newer["id"]]
    assert 'class="badge d-conditional">CONDITIONAL' in rows[newer["id"]]
    assert ">wanted<" in rows[newer["id"]] and "not needed" in rows[ready["id"]]
    assert "acme/board-0" in rows[newer["id"]] and newer["head_sha"][:7] in rows[newer["id"]]
    assert "<time datetime=" in rows[newer["id"]]
    # An approval shows in the listing; a waiver of the error finding unblocks the older run's count.
    reviewer = Session(pool, repos)
    assert form_post(client, reviewer, f"/release-runs/{newer['id']}/approvals",
                     {"status": "approved"}).status_code == 303
    assert form_post(client, reviewer, f"/release-runs/{older['id']}/waivers",
                     {"fingerprint": FP_ERROR, "reason": "bench+tested"}).status_code == 303
    again = client.simulate_get("/runs", headers=session.headers(csrf=False)).text
    assert re.search(rf'href="/release-runs/{newer["id"]}".*?>approved<', again, re.S)
    assert re.search(rf'href="/release-runs/{older["id"]}".*?0 blocking</span> / 2', again, re.S)


def test_run_page_names_people_waivers_and_their_scope_and_links_to_the_code_host(client, owner, pool, repos):
    run = _run_with_findings(owner, pool, repos)
    rita = Session(pool, repos, viewer_id=2_200_000_003, login="rita-reviewer")
    path = f"/release-runs/{run['id']}"
    page = client.simulate_get(path, headers=rita.headers(csrf=False)).text
    # The waive form says what a waiver covers, and takes an optional last day.
    assert "A waiver covers this finding in every pull request of\n            acme/board-0" in page
    assert "until it is revoked or its last day has passed" in page and 'name="expires_on" type="date"' in page
    # Links to the pull request and the check run on the code host.
    web = "https://github.com/acme/board-0"
    assert f'href="{web}/pull/1"' in page and f'href="{web}/runs/42000001"' in page
    # Waive the error finding until a day; the page names the waiver's author by login, its reason and last day.
    import datetime as dt
    last_day = (dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=20)).date().isoformat()
    done = form_post(client, rita, path + "/waivers", {"fingerprint": FP_ERROR, "reason": "bench+tested",
                                                        "expires_on": last_day})
    assert done.status_code == 303, re.findall(r'role="alert">([^<]*)', done.text)
    assert owner.execute("SELECT expires_at FROM waivers").fetchone()["expires_at"].isoformat() \
        == f"{last_day}T23:59:59+00:00"
    page = client.simulate_get(path, headers=rita.headers(csrf=False)).text
    assert "Waived by rita-reviewer: “bench tested”" in page and f"until {last_day} 23:59 UTC" in page
    # The history names the finding and the person, not a fingerprint and an actor id.
    history = page[page.index('id="history"'):]
    assert "rita-reviewer" in history and "host-user:2200000003</span>" not in history
    assert "waived <strong>rule.error</strong>" in history and "(board.kicad_pcb:1)" in history
    assert FP_ERROR[:12] not in history.replace(f'value="{FP_ERROR}"', "")
    # A date that is not one is refused on the page, nothing stored.
    bad = form_post(client, rita, path + "/waivers", {"fingerprint": FP_HIGH, "reason": "x", "expires_on": "soon"})
    assert_page(bad, 400)
    assert "the last day must be a date" in bad.text
    # Revoke: the finding counts again and the history says who revoked what.
    waiver_id = owner.execute("SELECT id FROM waivers WHERE deleted_at IS NULL").fetchone()["id"]
    revoked = form_post(client, rita, path + "/waivers", {"revoke": str(waiver_id)})
    assert revoked.status_code == 303 and "done=revoked" in revoked.headers["location"]
    page = client.simulate_get(path, params={"done": "revoked"}, headers=rita.headers(csrf=False)).text
    assert "The waiver is revoked" in page and "Revoke waiver" not in page
    assert "revoked the waiver of <strong>rule.error</strong>" in page
    assert owner.execute("SELECT deleted_by FROM waivers WHERE id = %s", (waiver_id,)).fetchone()["deleted_by"] \
        == rita.actor
    # Approve is not offered to a viewer who approved; requesting changes still is.
    assert 'value="approved"' in page
    assert form_post(client, rita, path + "/approvals", {"status": "approved"}).status_code == 303
    page = client.simulate_get(path, headers=rita.headers(csrf=False)).text
    assert "You approved this run." in page and 'value="approved"' not in page and 'value="changes_requested"' in page
    assert "rita-reviewer" in page[page.index('id="history"'):]


def test_request_changes_with_a_comment_is_recorded_and_says_when_the_code_host_cannot_take_it(client, owner, pool,
                                                                                                repos):
    run = _run_with_findings(owner, pool, repos)
    reviewer = Session(pool, repos)
    path = f"/release-runs/{run['id']}"
    page = client.simulate_get(path, headers=reviewer.headers(csrf=False)).text
    assert 'name="comment"' in page and "posted on the pull request with Request changes" in page
    # The code host is not reachable here: the request is recorded, the page says the comment was not posted
    # and keeps it to send again.
    answer = form_post(client, reviewer, path + "/approvals",
                       {"status": "changes_requested", "comment": "Move+C3+closer+to+U1"})
    assert_page(answer, 502)
    assert "Your request for changes is recorded, but the code host did not take the comment" in answer.text
    assert ">Move C3 closer to U1</textarea>" in answer.text
    assert owner.execute("SELECT status FROM review_approvals").fetchone()["status"] == "changes_requested"
    # A comment too long is refused before anything changes.
    long = form_post(client, reviewer, path + "/approvals", {"status": "changes_requested", "comment": "x" * 4001})
    assert_page(long, 400)
    assert "at most 4000 characters" in long.text
