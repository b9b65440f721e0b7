"""The previous release's database, upgraded by this release's migrations:
every SQL function that release's code calls is still in the boardready
schema with the same arguments (names, types, defaults) and result, and the
API role may still execute it; the helpers only other functions call may move
(to boardready_private). The upgraded schema is the one a database migrated
from empty gets (no drift between the two paths).

The previous release is the one CHANGELOG.md names; its tree is checked out
with `git worktree` and its own bin/migrate builds the database.
"""
from __future__ import annotations

import uuid
from contextlib import contextmanager

import pytest

from app import migrations
from tests.helpers.releases import (catalog, checked_out, every_function, function_signatures, functions_called_by,
                                    migrate_with, previous_release)


@contextmanager
def empty_database(pg_server):
    janitor = pg_server.janitor(f"boardready_up_{uuid.uuid4().hex[:10]}")
    janitor.init()
    try:
        yield pg_server.url(janitor.dbname)
    finally:
        janitor.drop()


@pytest.fixture(scope="module")
def databases(pg_server):
    """The functions the previous release calls, and the upgraded and the fresh database's catalogs and functions."""
    _, commit = previous_release()
    with checked_out(commit) as tree, empty_database(pg_server) as upgraded, empty_database(pg_server) as fresh:
        migrate_with(tree, upgraded)
        previous = function_signatures(upgraded)
        before = functions_called_by(tree, previous)
        every_before = every_function(upgraded)
        migrations.migrate(upgraded)          # as under the previous release's running processes
        after = function_signatures(upgraded)
        every_after = every_function(upgraded)
        migrations.apply_contract(upgraded)   # once they have stopped
        migrations.migrate(fresh)
        yield {"previous": previous, "before": before, "after": after,
               "every_before": every_before, "every_after": every_after,
               "upgraded": catalog(upgraded), "fresh": catalog(fresh), "fresh_functions": function_signatures(fresh)}


def test_every_function_the_previous_release_calls_survives_the_upgrade(databases):
    before, after = databases["before"], databases["after"]
    assert len(before) > 50, "the previous release's code calls its functions"
    missing = sorted(set(before) - set(after))
    changed = sorted(name for name in set(before) & set(after) if before[name] != after[name])
    print(f"previous release calls {len(before)} functions; after the upgrade boardready has {len(after)}; "
          f"missing {len(missing)}, arguments, result or grant changed {len(changed)}")
    assert not missing, f"functions the previous release calls were dropped or re-signed: {missing}"
    assert not changed, {name: (before[name], after[name]) for name in changed}


#: What this release's migrations may take from under the previous release's
#: running processes, and why that is safe ('schema.name(arguments)', as
#: every_function keys them). Empty: from 0.7.0 nothing moves before the
#: contract. (0.6.0 -> 0.7.0 had trigger functions moved under a lock that
#: waited out every transaction that could fire them.)
TAKEN_UNDER_LOCK: set[str] = set()


def test_no_function_of_the_previous_release_moves_before_the_contract(databases):
    """A call under way in a previous-release process fails the moment a
    function its body names moves or goes (PostgreSQL plans the statement again
    against the catalog of that moment): until the contract migrations, every
    function the previous release had, in boardready and boardready_private,
    keeps its schema, name and arguments."""
    previous, after = databases["every_before"], databases["every_after"]
    gone = sorted(set(previous) - set(after) - TAKEN_UNDER_LOCK)
    assert sum(name.startswith("boardready.") for name in previous) > 80, "the previous release's public functions"
    assert sum(name.startswith("boardready_private.") for name in previous) > 90, "and its private helpers"
    assert not gone, f"gone from under the previous release's running processes: {gone}"
    assert TAKEN_UNDER_LOCK <= set(previous), sorted(TAKEN_UNDER_LOCK - set(previous))


def test_a_database_built_from_empty_has_the_functions_the_previous_release_calls(databases):
    before, fresh = databases["before"], databases["fresh_functions"]
    missing = sorted(set(before) - set(fresh))
    assert not missing, f"a fresh database lacks what a previous-release process still calls: {missing}"
    changed = sorted(name for name in before if before[name] != fresh[name])
    assert not changed, {name: (before[name], fresh[name]) for name in changed}


def test_upgraded_and_fresh_databases_have_one_schema(databases):
    upgraded, fresh = databases["upgraded"], databases["fresh"]
    drift = {}
    for part in fresh:
        only_upgraded = sorted(set(upgraded[part]) - set(fresh[part]))
        only_fresh = sorted(set(fresh[part]) - set(upgraded[part]))
        if only_upgraded or only_fresh:
            drift[part] = {"only upgraded": only_upgraded, "only fresh": only_fresh}
    print({part: len(items) for part, items in fresh.items()})
    assert not drift, drift


def test_the_compat_file_keeps_the_previous_release_functions_as_they_were(databases):
    """sql/compat defines only functions the previous release had, each with
    its arguments and result (a different signature would be a new overload
    beside the old one, which nothing current may call)."""
    before, after = databases["every_before"], databases["every_after"]
    for name in migrations.compat_functions():
        had = {signature: shape for signature, shape in before.items() if signature.split("(")[0] == name}
        has = {signature: shape for signature, shape in after.items() if signature.split("(")[0] == name}
        assert had, f"{name}: the previous release had no such function"
        assert has == had, (name, had, has)
