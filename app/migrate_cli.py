"""`bin/migrate`: apply migrations and re-apply the SQL functions; with
--contract, then drop what only the previous release used (docs/deploy.md,
Upgrades)."""
from __future__ import annotations

import argparse

from app import config as config_module
from app import migrations, runtime


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="bin/migrate", description=__doc__)
    parser.add_argument("--rollback-all", action="store_true",
                        help="roll back every migration (disposable databases only)")
    parser.add_argument("--contract", action="store_true",
                        help="also apply the contract migrations: run it once no process of the previous "
                             "release is left")
    args = parser.parse_args(argv)
    url = runtime.database_url(config_module.load())
    if args.rollback_all:
        print("rolled back:", ", ".join(migrations.rollback_all(url)) or "nothing")
        return
    done = runtime.migrate(url, contract=True if args.contract else None)
    print("migrations applied:", ", ".join(done["migrations"]) or "none pending")
    if done.get("newer_migrations"):
        # A newer release migrated this database: its functions stay (rolling upgrade).
        print("functions kept: the database has newer migrations:", ", ".join(done["newer_migrations"]))
    else:
        print("functions applied:", ", ".join(done["functions"]))
        print("contract migrations applied:", ", ".join(done["contract"]) or "none")


if __name__ == "__main__":
    main()
