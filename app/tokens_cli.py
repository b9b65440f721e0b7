"""`bin/token`: create, list and revoke repository API tokens, directly against
the database. This is how the first admin token comes to exist; after that,
the token endpoints work too.

    bin/token create --repository-id ID --name NAME [--scope S ...] [--duration-days N]
    bin/token list --repository-id ID
    bin/token revoke --token-id ID

`create` prints the token value once, alone on the last line of stdout; only
its SHA-256 is stored. Exit codes: 0 done, 1 refused (unknown repository,
canceled account, unknown token), 2 usage.
"""
from __future__ import annotations

import argparse
import getpass
import re
import sys

import psycopg
from psycopg.rows import dict_row

from app import api_tokens, runtime, sql_api
from app import config as config_module
from app.web.tokens import iso

CREATOR = re.compile(r"[^A-Za-z0-9._@-]")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="bin/token", description="Manage repository API tokens.")
    sub = parser.add_subparsers(dest="command", required=True)
    create = sub.add_parser("create", help="create a token and print its value once")
    create.add_argument("--repository-id", required=True, help="the code host's repository id")
    create.add_argument("--name", required=True)
    create.add_argument("--scope", action="append", dest="scopes", choices=api_tokens.SCOPES,
                        help="repeat for several; default: " + " ".join(api_tokens.DEFAULT_SCOPES))
    create.add_argument("--duration-days", type=int, help="1 to 365; omitted: never expires")
    listing = sub.add_parser("list", help="list a repository's tokens (never their values)")
    listing.add_argument("--repository-id", required=True)
    revoke = sub.add_parser("revoke", help="revoke a token, immediately and permanently")
    revoke.add_argument("--token-id", required=True)
    return parser


def _creator() -> str:
    try:
        user = getpass.getuser()
    except Exception:  # no user name in this environment
        user = "unknown"
    return "cli:" + (CREATOR.sub("_", user)[:100] or "unknown")


def _create(conn, args) -> int:
    repository_id = api_tokens.repository_id(args.repository_id)
    name = api_tokens.name(args.name)
    scopes = api_tokens.scopes(args.scopes)
    duration = api_tokens.duration_days(args.duration_days)
    new = api_tokens.generate()
    row = sql_api.token_create(conn, repository_id=repository_id, name=name, scopes=scopes,
                               duration_days=duration, token_sha256=new.sha256, token_prefix=new.prefix,
                               created_by=_creator())
    if row["outcome"] != "created":
        sys.stderr.write(f"error: {row['outcome']}: repository {repository_id} cannot get a token\n")
        return 1
    print(f"token id: {row['token_id']}")
    print(f"repository id: {repository_id}")
    print(f"scopes: {' '.join(scopes)}")
    print(f"expires at: {iso(row['expires_at']) or 'never'}")
    print("the value below is shown once and cannot be retrieved again:")
    print(new.value)
    return 0


def _list(conn, args) -> int:
    repository_id = api_tokens.repository_id(args.repository_id)
    rows = sql_api.token_list(conn, repository_id=repository_id)
    print("id\tname\tprefix\tscopes\tstatus\texpires_at\tlast_used_at")
    for r in rows:
        print("\t".join([str(r["token_id"]), r["name"], r["token_prefix"], ",".join(r["scopes"]), r["status"],
                         iso(r["expires_at"]) or "never", iso(r["last_used_at"]) or "never"]))
    return 0


def _revoke(conn, args) -> int:
    token_id = api_tokens.token_id(args.token_id)
    row = sql_api.token_revoke(conn, token_id=token_id, repository_id=None, reason="operator_cli")
    if row["outcome"] == "not_found":
        sys.stderr.write(f"error: no token {token_id}\n")
        return 1
    print(f"{row['outcome']}: {token_id} at {iso(row['revoked_at'])}")
    return 0


COMMANDS = {"create": _create, "list": _list, "revoke": _revoke}


def main(argv: list[str] | None = None, url: str | None = None) -> int:
    args = _parser().parse_args(argv)
    if url is None:
        # Never migrates: during an upgrade window that would apply the new
        # release's migrations behind the operator's back (bin/migrate does).
        url = runtime.configured_database_url(config_module.load(), "bin/token")
    try:
        with psycopg.connect(url, autocommit=True, row_factory=dict_row) as conn:
            return COMMANDS[args.command](conn, args)
    except api_tokens.InvalidTokenRequest as exc:
        sys.stderr.write(f"error: {exc.code}: {exc.message}\n")
        return 2
    except psycopg.errors.InsufficientPrivilege:
        sys.stderr.write("error: this role may not manage tokens: use the migration role's "
                         "SERVICE_DATABASE_URL (/etc/boardready/migrate.env)\n")
        return 1
    except (psycopg.errors.UndefinedFunction, psycopg.errors.InvalidSchemaName):
        sys.stderr.write("error: the database is not migrated to this release: run bin/migrate first\n")
        return 1


if __name__ == "__main__":
    sys.exit(main())
