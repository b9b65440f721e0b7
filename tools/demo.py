"""`bin/demo`: a pull request through the whole loop on one machine.

Starts the database (embedded unless SERVICE_DATABASE_URL is set), the code
host emulator, the API and the workers. The emulator installs the app on a
repository whose content is a small KiCad project (tools/demo_board.py), opens a
pull request and delivers the signed webhooks (plus a duplicate and a forged
one); the service creates the check run and dispatches readiness-runner.yml;
the emulator runs it as the code host would, executing `bin/check --runner
--base-ref <the pull request's base commit>` (tools/demo_runner.py, as
readiness-runner.yml does: the repository's history is a base commit and the
pull request's head), which calls back with a signed result and the report
whose board diff the run page draws; the service decides, completes the
check run with annotations and comments on the pull request. A second user
of the emulator follows the check run's link to the run page, signs in with
the code host (OAuth with PKCE) and lands back on that page, lists the runs
and approves the at-risk run: the check run turns from neutral to success.
Then a repair:
a push whose dispatch the emulator answers 204 (no run id) is found by its run
name by the workflow reconciler, and its check run still completes. Then it
prints the run page and /runs for a person to open in a browser and keeps
serving until Ctrl-C (`--once` exits after the walkthrough and prints no
address of the server it stopped).

Everything is on: report artifacts (the run page links the checker's HTML
report) and the operator API with /metrics, with a signing key and an
operator token the demo makes once and keeps in the data folder
(tools/demo_setup.py). Each set-up step (database, migrations, emulator,
service) prints a line, and a wait says what it waits for and, past its time,
what is wrong. `--reset` empties the data folder first. Waivers a person made
on an earlier demo's run pages are revoked at start, so a rerun decides as
the first run did.
"""
from __future__ import annotations

import argparse
import atexit
import contextlib
import hashlib
import hmac
import html
import json
import os
import re
import secrets
import shutil
import signal
import socket
import sys
import tempfile
import uuid
from pathlib import Path

import httpx
import psycopg
from psycopg.rows import dict_row

import emulator
from app import attestation, runtime
from app import config as config_module
from app.jsonlog import capture_library_logs
from app.serve import Service
from checker import TOOL_VERSION
from tools import build_checker, demo_board, demo_setup, demo_supply
from tools import named_queries as queries
from tools.demo_setup import say, step

REPOSITORY = "acme-hw/blinky-board"
OIDC_AUDIENCE = "boardready-demo"
ROOT = Path(__file__).resolve().parent.parent


def _port_free(bind: str) -> bool:
    host, port = bind.rsplit(":", 1)
    if int(port) == 0:
        return False  # the demo prints its address: it needs to know the port
    with socket.socket() as s:
        return s.connect_ex((host, int(port))) != 0


def _free_bind() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{s.getsockname()[1]}"


def print_table(rows: list[dict], columns: list[str]) -> None:
    widths = {c: max(len(c), *(len(str(r[c])) for r in rows)) if rows else len(c) for c in columns}
    print("  " + "  ".join(c.ljust(widths[c]) for c in columns))
    print("  " + "  ".join("-" * widths[c] for c in columns))
    for row in rows:
        print("  " + "  ".join(str(row[c]).ljust(widths[c]) for c in columns))


def forged_delivery(base_url: str, event: str, payload: dict) -> httpx.Response:
    """A delivery signed with the wrong secret, as an attacker would send it."""
    body = json.dumps(payload).encode()
    signature = hmac.new(b"not-the-secret", body, hashlib.sha256).hexdigest()
    return httpx.post(f"{base_url}/api/host/webhook", content=body, timeout=10, headers={
        "Content-Type": "application/json", "X-Hub-Signature-256": f"sha256={signature}",
        "X-GitHub-Delivery": str(uuid.uuid4()), "X-GitHub-Event": event})


wait_for = demo_setup.wait_for


def last_service_error(log_path: str | None) -> str | None:
    """The service log's last warning or error, as `event: message`."""
    if not log_path or not os.path.exists(log_path):
        return None
    with open(log_path, encoding="utf-8", errors="replace") as log:
        lines = log.readlines()[-400:]
    for line in reversed(lines):
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and record.get("level") in ("warning", "error", "critical"):
            details = {k: v for k, v in record.items() if k not in ("ts", "level", "event")}
            return f"{record.get('event')} {json.dumps(details)[:300]}"
    return None


def explain_head(host, url: str, head_sha: str, log_path: str | None = None) -> str:
    """What is known about a head commit's release run when a wait ran out:
    its state in the database, the code host's workflow run and the service
    log's last complaint."""
    with psycopg.connect(url, row_factory=dict_row) as conn:
        runs = queries.fetch_all(conn, "demo_release_runs_for_head", head_sha=head_sha)
    if not runs:
        said = "no release run exists for this commit: the pull request's webhook was not taken"
    else:
        run = runs[-1]
        said = (f"release run {run['id']} is {run['status']} (dispatch {run['dispatch_state']}, "
                f"decision {run['decision']}, conclusion {run['conclusion']})")
        for workflow in host.runs(REPOSITORY):
            if workflow["id"] == run["workflow_run_id"]:
                attempt = workflow["attempts"][-1] if workflow.get("attempts") else {}
                said += (f"; workflow run {workflow['id']} is {workflow['status']}/{workflow['conclusion']}"
                         f" (runner exit code {attempt.get('exit_code')})")
    error = last_service_error(log_path)
    return said + (f"; the service log's last complaint: {error}" if error else "; the service log has no warning")


def walkthrough(host, service, url: str, log_path: str) -> str | None:
    """The whole loop; returns the run page the check run links to."""

    def explain(head: str) -> str:
        return explain_head(host, url, head, log_path)

    print(f"\n== the code host (emulator at {host.url}) installs the app and opens a pull request")
    installation = host.create_installation("acme-hw", account_type="Organization", deliver=True)
    # The emulator serves the repository from this folder until the demo exits.
    board_folder = tempfile.mkdtemp(prefix="blinky-board-")
    atexit.register(shutil.rmtree, board_folder, ignore_errors=True)
    content = demo_board.write(Path(board_folder))
    # The repository holds the readiness workflow, as the README tells engineers to add it.
    (content / ".github" / "workflows").mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / "workflow" / "readiness-runner.yml", content / ".github" / "workflows")
    # Its history: main (the base) and the pull request's head, which routes VIN closer under the
    # parts; the runner checks the base too (tools/demo_runner.py), so the run page draws the diff.
    commits = demo_board.commit_history(content)
    base_sha, head_sha = commits or (None, None)
    if commits is None:
        print("  (git is not available: the pull request's board diff is left out)")
    host.create_repository(REPOSITORY, installation_id=installation["id"], content_dir=str(content),
                           head_sha=base_sha, deliver=True)
    pr = host.open_pull_request(REPOSITORY, title="Rev B: VIN routed closer under the parts", head_sha=head_sha,
                                deliver=True)
    if commits:
        print(f"  pull request #{pr['number']}: base {pr['base']['sha'][:7]} (main) <- head {pr['head']['sha'][:7]}")
    deliveries = host.deliveries()
    for delivery in deliveries:
        print(f"  {delivery['event']:<26} {delivery.get('action') or '':<10} -> {delivery['status']}")
    again = host.redeliver(deliveries[-1]["delivery_id"])
    print(f"  {'the same delivery again':<37} -> {again['status']} (duplicate: no second job)")
    forged = forged_delivery(service.base_url, "pull_request", {"action": "opened"})
    print(f"  {'a forged signature':<37} -> {forged.status_code} {forged.json()['code']} (nothing stored)")

    print("\n== the service queues a check run, dispatches readiness-runner.yml; the run executes "
          "bin/check --runner --base-ref <the pull request's base commit>")
    completed = wait_for(lambda: [c for c in host.check_runs(REPOSITORY)
                                  if c["head_sha"] == pr["head"]["sha"] and c["status"] == "completed"], 120,
                         "the check run to complete (the workflow runs bin/check, the service decides)",
                         lambda: explain(pr["head"]["sha"]))
    with psycopg.connect(url, row_factory=dict_row) as conn:
        print_table(queries.fetch_all(conn, "demo_recent_deliveries", limit=3),
                    ["delivery", "event", "action", "inbox", "job_status"])
        print()
        runs = queries.fetch_all(conn, "demo_release_runs_for_head", head_sha=pr["head"]["sha"])
        print_table(runs, ["id", "repository", "pr_number", "status", "decision", "conclusion", "dispatch_state",
                           "workflow_run_id"])
    for run in host.runs(REPOSITORY):
        attempt = run["attempts"][-1] if run.get("attempts") else {}
        print(f"\n  workflow run {run['id']}: {run['status']} / {run['conclusion']} "
              f"(runner exit code {attempt.get('exit_code')})")
    if not completed:
        return None
    check_run = completed[0]
    print(f"\n== the check run as the code host shows it: {check_run['name']}")
    print(f"  status {check_run['status']}, conclusion {check_run['conclusion']}")
    print(f"  title: {check_run['title']}")
    print("  summary:\n    " + check_run["summary"].replace("\n", "\n    "))
    for annotation in host.annotations(check_run["id"]):
        print(f"  annotation {annotation['annotation_level']:<8} {annotation['path']}:{annotation['start_line']}  "
              f"{annotation['message'][:90]}")
    comments = wait_for(lambda: host.comments(REPOSITORY), 20, "the pull request comment",
                        lambda: "the check run completed but no comment arrived; " + (
                            last_service_error(log_path) or "the service log has no warning")) or []
    for comment in comments:
        print("\n== the pull request comment\n    " + comment["body"].replace("\n", "\n    "))
    links = review_links(service, [check_run["summary"]] + [c["body"] for c in comments])
    review_walkthrough(host, service, check_run, links, explain)
    repair_walkthrough(host, url, pr, explain)
    demo_supply.walkthrough(host, service, url, content, wait_for, explain)
    report_walkthrough(url, pr["head"]["sha"])
    return links[0] if links else None


def review_links(service, texts: list[str]) -> list[str]:
    """The review page links the check run and the comment carry (each names the same run page)."""
    pattern = re.compile(re.escape(service.base_url) + r"/release-runs/\d+")
    return [link for text in texts for link in pattern.findall(text or "")]


def review_walkthrough(host, service, check_run: dict, links: list[str], explain) -> None:
    """A reviewer follows the check run's link, signs in through the code host and
    lands on that run page; lists the runs and approves the at-risk one; the
    decision becomes PASS and the check run is updated."""
    print("\n== a reviewer follows the check run's link, signs in with the code host and approves the at-risk run")
    host.create_user("rita-reviewer", name="Rita Reviewer", organizations=["acme-hw"])
    with httpx.Client(base_url=service.base_url, follow_redirects=True, timeout=30) as browser:
        if links:
            print(f"  the check run and the comment link to {', '.join(sorted(set(links)))}")
            # Not signed in: the run page sends the browser to /sign-in, which remembers the run.
            sign_in_page = browser.get(links[0])
            button = re.search(r'href="(/auth/sign-in\?returnTo=[^"]+)"', sign_in_page.text)
            landed = browser.get(html.unescape(button.group(1))) if button else sign_in_page
            print(f"  {links[0]} -> {sign_in_page.url.path} -> the code host's authorize page -> "
                  f"{landed.url.path} {landed.status_code} after sign-in")
            show_board_diff(browser, links[0], landed.text)
        session = browser.get("/api/v1/session")
        if session.status_code != 200:
            print(f"  sign-in answered {session.status_code}: {session.text[:200]}")
            return
        viewer = session.json()
        print(f"  signed in as {viewer['viewer']['login']} ({viewer['actor']}); the session cookie is HttpOnly, "
              f"the CSRF token comes from GET /api/v1/session")
        runs = browser.get("/api/v1/runs").json()["items"]
        print_table([{**r, "repository": r["repository"]["fullName"]} for r in runs],
                    ["id", "repository", "pullRequestNumber", "status", "decision", "reviewId"])
        at_risk = next((r for r in runs if r["decision"] == "CONDITIONAL" and r["reviewId"]), None)
        if at_risk is None:
            print("  no at-risk run with a review to approve")
            return
        approved = browser.post(f"/api/v1/reviews/{at_risk['reviewId']}/approvals", json={"status": "approved"},
                                headers={"X-CSRF-Token": viewer["csrfToken"]})
        body = approved.json()
        print(f"  POST /api/v1/reviews/{at_risk['reviewId']}/approvals -> {approved.status_code} "
              f"{body.get('outcome') or body.get('code')}; review {body.get('review', {}).get('decision')}, "
              f"release decision {body.get('releaseRun', {}).get('decision')}")
    updated = wait_for(lambda: [c for c in host.check_runs(REPOSITORY)
                                if c["id"] == check_run["id"] and c["conclusion"] != check_run["conclusion"]], 60,
                       "the check run to show the approval",
                       lambda: explain(check_run["head_sha"]))
    if updated:
        print(f"  the check run: conclusion {check_run['conclusion']} -> {updated[0]['conclusion']} "
              f"(\"{updated[0]['title']}\")")


def show_board_diff(browser: httpx.Client, run_page: str, page_html: str) -> None:
    """What the run page draws: the board and what the pull request changed against its base."""
    drawing = browser.get(run_page + "/board.json") if "data-board-view" in page_html else None
    if drawing is None or drawing.status_code != 200:
        print(f"  the run page draws no board ({drawing.status_code if drawing is not None else 'no report'})")
        return
    summary = drawing.json().get("summary") or []
    if drawing.json().get("diff"):
        print(f"  the run page draws the board diff against the base commit: {', '.join(summary)}")
    else:
        print("  the run page draws the board, without a diff (the checker had no base)")


def repair_walkthrough(host, url: str, pr: dict, explain) -> None:
    """A dispatch answered 204 (no run id): reconciliation finds the run by its
    run name, and the pull request still gets its check run completed."""
    print("\n== a repair: the code host answers the next dispatch with 204, without the run's id")
    # The runner is busy for a few seconds, so the run is found while it is still queued.
    host.set_run_mode(REPOSITORY, mode="execute", queue_seconds=8)
    host.add_fault(operation_id="actions/create-workflow-dispatch", status=204, after=True, count=1)
    pushed = host.synchronize_pull_request(REPOSITORY, pr["number"], deliver=True)
    head = pushed["head"]["sha"]
    dispatches = wait_for(lambda: [r for r in host.requests(operation_id="actions/create-workflow-dispatch")
                                   if r["status"] is not None][1:], 60, "the service to dispatch the workflow",
                          lambda: explain(head)) or [{"status": None}]
    print(f"  pushed {head[:12]}; the dispatch was answered {dispatches[-1]['status']}")

    def head_run():
        with psycopg.connect(url, row_factory=dict_row) as conn:
            rows = queries.fetch_all(conn, "demo_release_runs_for_head", head_sha=head)
        return rows[0] if rows and rows[0]["workflow_run_id"] else None

    found = wait_for(head_run, 60, "reconciliation to find the workflow run by its name",
                     lambda: explain(head))
    if not found:
        return
    [workflow_run] = [r for r in host.runs(REPOSITORY) if r["id"] == found["workflow_run_id"]]
    print(f"  reconciliation listed readiness-runner.yml's runs on main and matched the run name "
          f"\"{workflow_run['display_title']}\"")
    print(f"  -> workflow run {found['workflow_run_id']} persisted on the attempt (status {workflow_run['status']})")
    completed = wait_for(lambda: [c for c in host.check_runs(REPOSITORY)
                                  if c["head_sha"] == head and c["status"] == "completed"], 120,
                         "the repaired run's check run to complete",
                         lambda: explain(head))

    def items():
        with psycopg.connect(url, row_factory=dict_row) as conn:
            return queries.fetch_all(conn, "demo_reconciliation_items", head_sha=head)

    # The signed result closed the attempt; the item's next look sees that and closes too.
    wait_for(lambda: all(i["status"] == "completed" for i in items()), 10, "the reconciliation items to close",
             lambda: "some stay open: " + ", ".join(f"{i['kind']} {i['status']}" for i in items()))
    with psycopg.connect(url, row_factory=dict_row) as conn:
        print()
        print_table(queries.fetch_all(conn, "demo_reconciliation_items", head_sha=head),
                    ["id", "kind", "subject_id", "reason_code", "status", "outcome", "observations"])
        print()
        print_table(queries.fetch_all(conn, "demo_release_runs_for_head", head_sha=head),
                    ["id", "repository", "pr_number", "status", "decision", "conclusion", "dispatch_state",
                     "workflow_run_id"])
    if not completed:
        return
    print(f"\n  the repaired run's check run: status {completed[0]['status']}, "
          f"conclusion {completed[0]['conclusion']}")


def host_environment(host, app: dict, base_url: str, audience: str) -> dict:
    """The service's variables for an app registered on the emulator (`host.register_app`):
    the app's id and key, the emulator as the REST API and the OIDC issuer of
    workflow ID tokens, and sign-in with the code host (the emulator serves its
    OAuth pages too). bin/load starts its service with the same."""
    return dict(HOST_APP_ID=str(app["id"]), HOST_APP_PRIVATE_KEY=app["private_key_pem"], HOST_API_URL=host.url,
                SERVICE_OIDC_ISSUER=host.oidc_issuer, SERVICE_OIDC_AUDIENCE=audience,
                HOST_WEB_URL=host.url, HOST_OAUTH_CLIENT_ID=app["client_id"],
                HOST_OAUTH_CLIENT_SECRET=app["client_secret"], SERVICE_PUBLIC_URL=base_url)


def point_webhooks(host, base_url: str, env: dict) -> None:
    """The emulator delivers the app's and the marketplace's webhooks to the service, signed with its secrets."""
    host.configure_webhooks(f"{base_url}/api/host/webhook", env["HOST_WEBHOOK_SECRET"],
                            f"{base_url}/api/host/marketplace/webhook", env["HOST_MARKETPLACE_WEBHOOK_SECRET"])


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def report_walkthrough(url: str, head_sha: str) -> None:
    """The checker's HTML report went up with the signed result (artifacts are on in the demo)."""
    with psycopg.connect(url, row_factory=dict_row) as conn:
        artifacts = queries.fetch_all(conn, "demo_run_artifacts", head_sha=head_sha)
    print("\n== the checker's HTML report, uploaded by the workflow beside its signed result")
    if artifacts:
        art = artifacts[-1]
        print(f"  report artifact {art['id']} ({art['size_bytes']} bytes) of release run {art['release_run_id']}: "
              f"the run page links it through a short-lived signed link")
    else:
        print("  no report was uploaded for this commit (the workflow's upload step is in the service log)")


def metrics_walkthrough(base_url: str, kept: demo_setup.DemoSecrets) -> None:
    """GET /metrics with the demo's operator token, as a scraper does."""
    answer = httpx.get(f"{base_url}/metrics", headers={"Authorization": f"Bearer {kept.operator_token}"},
                       timeout=30)
    lines = answer.text.splitlines()
    families = sorted({line.split()[2] for line in lines if line.startswith("# TYPE ")})
    print(f"\n== the operator's view: GET /metrics -> {answer.status_code}, {len(families)} metric families, e.g.")
    shown = ("boardready_http_requests_total{", "boardready_host_requests_total{", "boardready_queue_depth{")
    for prefix in shown:
        for line in [line for line in lines if line.startswith(prefix)][:3]:
            print(f"  {line}")


def how_to_use(kept: demo_setup.DemoSecrets, data_dir: str) -> None:
    print("\n== what the demo keeps in its data folder (bin/demo --reset starts again from nothing)")
    print(f"  {os.path.join(data_dir, 'demo-artifact-signing-key')}: signs the run page's links to reports "
          f"(SERVICE_ARTIFACT_SIGNING_KEY)")
    print(f"  {kept.token_file}: the operator token (SERVICE_OPERATOR_API_TOKEN), for /metrics and the operator API")


def metrics_command(base_url: str, kept: demo_setup.DemoSecrets) -> str:
    return f"curl -H \"Authorization: Bearer $(cat {kept.token_file})\" {base_url}/metrics"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="bin/demo", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--once", action="store_true", help="exit after the walkthrough")
    parser.add_argument("--reset", action="store_true",
                        help="empty the data folder (SERVICE_DATA_DIR, .data) first: a new database and new keys")
    args = parser.parse_args(argv)
    sys.stdout.reconfigure(line_buffering=True)   # progress reaches a pipe as it happens
    capture_library_logs()

    env = {}
    for name in ("HOST_WEBHOOK_SECRET", "HOST_MARKETPLACE_WEBHOOK_SECRET"):
        env[name] = os.environ.get(name) or secrets.token_urlsafe(24)  # demo-only secrets, never printed
    bind = os.environ.get("SERVICE_BIND") or "127.0.0.1:8000"
    env["SERVICE_BIND"] = bind if _port_free(bind) else _free_bind()
    # Reconciliation at demo speed: a run without an id is looked for after 2 s, not 5 minutes.
    for name, value in (("SERVICE_RECONCILIATION_OBSERVATION_SECONDS", "2"),
                        ("SERVICE_RECONCILIATION_DETECT_INTERVAL_MS", "500"),
                        ("SERVICE_RECONCILIATION_POLL_MS", "500"), ("SERVICE_RECONCILIATION_NEXT_CHECK_SECONDS", "1")):
        env[name] = os.environ.get(name) or value
    data_dir = config_module.load({**os.environ, **env}).data_dir
    if args.reset:
        demo_setup.reset(data_dir)
        if os.environ.get("SERVICE_DATABASE_URL"):
            say("   (SERVICE_DATABASE_URL is set: that database is not emptied, only the folder)")
    kept = demo_setup.demo_secrets(data_dir)
    env.update(demo_setup.service_variables(kept))
    # The key that signs release records, generated into the data folder (docs/release-record.md).
    env.setdefault("SERVICE_ATTESTATION_KEY", os.environ.get("SERVICE_ATTESTATION_KEY")
                   or os.path.join(data_dir, "attestation-key.pem"))
    attestation.ensure_key(env["SERVICE_ATTESTATION_KEY"].split(":")[0])
    config = config_module.load({**os.environ, **env})
    embedded = not config.database_url
    with step("the database: " + ("starting the embedded PostgreSQL in " + os.path.join(data_dir, "pg")
                                  if embedded else "connecting to SERVICE_DATABASE_URL"),
              "; a first start initialises the cluster" if embedded else ""):
        url = runtime.database_url(config)
    with step("the migrations: bringing the schema and the SQL functions up to date"):
        runtime.migrate(url)
        retired = demo_setup.retire_earlier_waivers(url, REPOSITORY)
    if retired:
        say(f"   {retired} waiver(s) from an earlier demo revoked, so this run decides as the first did")
    checker_dir = Path(data_dir) / "checker"
    if not list(checker_dir.glob(f"boardready_checker-{TOOL_VERSION}-*.whl")):
        # As at deploy (bin/build-checker --out $SERVICE_DATA_DIR/checker): the runner installs it from /simple/.
        with step("the checker distribution: building the wheel the service's index serves at /simple/"):
            build_checker.build_wheel(checker_dir)
    log_path = os.path.join(config.data_dir, "demo-service.log")
    base_url = f"http://{env['SERVICE_BIND']}"

    # The readiness workflow, as the code host would run it: the checker in runner mode.
    with contextlib.ExitStack() as running:
        with step("the code host emulator: starting it and registering the app"):
            host = running.enter_context(emulator.start(
                # As the workflow: bin/check --runner --base-ref <the pull request's base commit>.
                runner_command=[sys.executable, str(ROOT / "tools" / "demo_runner.py")],
                runner_env={"SERVICE_URL": base_url, "SERVICE_OIDC_AUDIENCE": OIDC_AUDIENCE}))
            app = host.register_app(callback_urls=[f"{base_url}/auth/callback"])
        with step("the service: starting the API and the workers"):
            env.update(host_environment(host, app, base_url, OIDC_AUDIENCE),
                       # The supply worker asks the emulator's component provider (tools/demo_supply.py).
                       SERVICE_COMPONENT_PROVIDER_URL=host.provider_url,
                       SERVICE_COMPONENT_PROVIDER_TOKEN_URL=host.provider_token_url,
                       SERVICE_COMPONENT_PROVIDER_CLIENT_ID=emulator.provider.CLIENT_ID,
                       SERVICE_COMPONENT_PROVIDER_CLIENT_SECRET=emulator.provider.CLIENT_SECRET)
            config = config_module.load({**os.environ, **env})
            service = Service(config, url, extra_env=env, log_path=log_path).start()
        point_webhooks(host, base_url, env)
        try:
            print(f"boardready listening on {service.base_url} (service logs: {log_path})")
            run_page = walkthrough(host, service, url, log_path)
            metrics_walkthrough(service.base_url, kept)
            how_to_use(kept, data_dir)
            if args.once:
                print("\n== --once: the service and the emulator stop now; run bin/demo without --once to "
                      "open the pages in a browser")
                return
            # Signing in from a browser signs in the emulator's test user (rita-reviewer).
            print("\n== open in a browser (sign in with the code host: the emulator signs in rita-reviewer)")
            print(f"  the run page:      {run_page or '(no run completed)'}")
            print(f"  the release runs:  {service.base_url}/runs")
            print(f"  the metrics:       {metrics_command(service.base_url, kept)}")
            print(f"\nserving on {service.base_url}, code host emulator on {host.url}, until Ctrl-C")
            # A TERM (kill, a closed terminal's supervisor) stops it as Ctrl-C does: the
            # service and its workers stop with it instead of outliving the demo.
            signal.signal(signal.SIGTERM, _interrupt)
            try:
                service.wait()
            except KeyboardInterrupt:
                pass
        finally:
            service.stop()


if __name__ == "__main__":
    main()
