"""Token values never reach the database or the logs, and bin/token works
directly against the database (how the first admin token is made)."""
from __future__ import annotations

import hashlib
import subprocess

import pytest

from app import tokens_cli
from tests.helpers.access import bearer, seed_repository

REPO = 9001


@pytest.fixture
def repo(owner):
    return seed_repository(owner, account_id=101, installation_id=501, repository_id=REPO, full_name="acme/board")


def cli(capsys, db_url, *argv) -> tuple[int, list[str], str]:
    code = tokens_cli.main(list(argv), url=db_url)
    out = capsys.readouterr()
    return code, out.out.splitlines(), out.err


def dump_database(owner) -> str:
    """Every row of every table in the boardready schema, as COPY writes it."""
    tables = [r["table_name"] for r in owner.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'boardready' "
        "AND table_type = 'BASE TABLE' ORDER BY table_name")]
    assert "api_tokens" in tables and "audit_events" in tables
    chunks = []
    with owner.cursor() as cur:
        for table in tables:
            with cur.copy(f'COPY boardready."{table}" TO STDOUT') as copy:
                chunks.extend(bytes(data).decode() for data in copy)
    return "".join(chunks)


def test_bootstrap_with_bin_token_then_the_api(capsys, db_url, client, owner, repo):
    code, lines, _ = cli(capsys, db_url, "create", "--repository-id", str(REPO), "--name", "bootstrap",
                         "--scope", "admin", "--duration-days", "30")
    assert code == 0
    admin = lines[-1]                                     # alone on the last line
    assert admin.startswith("svc_live_") and len(admin) == 52 and admin.count(" ") == 0
    assert sum(admin in line for line in lines) == 1      # printed once

    created = client.simulate_post("/api/v1/tokens", json={"repositoryId": str(REPO), "name": "ci"},
                                   headers=bearer(admin))
    assert created.status_code == 201
    ci_value, ci_id = created.json["token"], created.json["tokenRecord"]["id"]
    assert client.simulate_post("/api/v1/billing/checkout", headers=bearer(ci_value)).status_code == 410

    code, lines, _ = cli(capsys, db_url, "list", "--repository-id", str(REPO))
    assert code == 0 and len(lines) == 3
    assert admin not in "\n".join(lines) and ci_value not in "\n".join(lines)
    assert any(ci_id in line and ci_value[:12] in line for line in lines)

    code, lines, _ = cli(capsys, db_url, "revoke", "--token-id", ci_id)
    assert code == 0 and lines == [lines[0]] and lines[0].startswith(f"revoked: {ci_id}")
    assert client.simulate_post("/api/v1/billing/checkout", headers=bearer(ci_value)).json["code"] == "token_revoked"
    assert owner.execute("SELECT created_by FROM api_tokens WHERE token_prefix = %s",
                         (admin[:12],)).fetchone()["created_by"].startswith("cli:")

    # Neither value is anywhere in the database, in any encoding of its bytes.
    dump = dump_database(owner)
    for value in (admin, ci_value):
        for needle in (value, value[len("svc_live_"):], value.encode().hex()):
            assert needle not in dump
        assert hashlib.sha256(value.encode()).hexdigest() in dump      # the hash is what is kept
    # ...nor in the logs of everything above.
    logs = capsys.readouterr()
    assert admin not in logs.out + logs.err and ci_value not in logs.out + logs.err


def test_logs_never_carry_token_values(client, capfd, pool, repo):
    from tests.helpers.access import create_token
    admin, _ = create_token(pool, REPO, scopes=("admin",))
    created = client.simulate_post("/api/v1/tokens", json={"repositoryId": str(REPO), "name": "x"},
                                   headers=bearer(admin))
    value = created.json["token"]
    client.simulate_post("/api/v1/billing/portal", headers=bearer(value))
    client.simulate_post("/api/v1/billing/portal", headers=bearer(value[:-1] + "A"))    # a failure
    client.simulate_delete("/api/v1/tokens", params={"tokenId": created.json["tokenRecord"]["id"]},
                           headers=bearer(admin))
    out, err = capfd.readouterr()
    assert "token.created" in err and "token.revoked" in err
    assert value not in out + err and admin not in out + err and value[9:] not in out + err


def test_cli_refusals(capsys, db_url, owner, repo):
    assert cli(capsys, db_url, "create", "--repository-id", "424242", "--name", "x")[0] == 1
    code, _, err = cli(capsys, db_url, "create", "--repository-id", "12ab", "--name", "x")
    assert code == 2 and "invalid_repository_id" in err
    assert cli(capsys, db_url, "create", "--repository-id", str(REPO), "--name", "x", "--duration-days", "0")[0] == 2
    assert cli(capsys, db_url, "revoke", "--token-id", "00000000-0000-4000-8000-000000000000")[0] == 1
    with pytest.raises(SystemExit):
        cli(capsys, db_url, "create", "--repository-id", str(REPO), "--name", "x", "--scope", "root")
    assert owner.execute("SELECT count(*) AS n FROM api_tokens").fetchone()["n"] == 0


def test_bin_token_runs_as_a_command(db_url, owner, repo, tmp_path):
    result = subprocess.run(["bin/token", "create", "--repository-id", str(REPO), "--name", "shell"],
                            env={"PATH": "/usr/bin:/bin", "SERVICE_DATABASE_URL": db_url, "HOME": str(tmp_path)},
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    value = result.stdout.splitlines()[-1]
    assert value.startswith("svc_live_") and value not in result.stderr
    assert owner.execute("SELECT token_prefix FROM api_tokens").fetchone()["token_prefix"] == value[:12]
