"""app/sql_api.py, the SQL API's Python client, against pg_proc: one Python
function per public function (the boardready schema's) with its argument
names and types, none without a SQL function, the outcome vocabularies the
functions' own words, the committed module what tools/sql_api.py writes, and
the API role allowed exactly the public functions."""
from __future__ import annotations

import inspect
import re
from pathlib import Path

import psycopg
import pytest

from app import sql_api
from tools import sql_api as generator

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def catalog(pg_server, template_db):
    with psycopg.connect(pg_server.url(template_db)) as conn:
        functions = {f.name: f for f in generator.read_functions(conn)}
        bodies = dict(conn.execute(
            "SELECT p.proname, p.prosrc FROM pg_proc p WHERE p.pronamespace IN "
            "('boardready'::regnamespace, 'boardready_private'::regnamespace)").fetchall())
        executable = {row[0] for row in conn.execute(
            "SELECT p.proname FROM pg_proc p WHERE p.pronamespace = 'boardready'::regnamespace "
            "AND has_function_privilege('boardready_api', p.oid, 'EXECUTE')")}
        private_usage = conn.execute(
            "SELECT has_schema_privilege('boardready_api', 'boardready_private', 'USAGE')").fetchone()[0]
        module = generator.render(conn, generator.MODULE.read_text(encoding="utf-8"))
    return {"functions": functions, "bodies": bodies, "executable": executable, "private_usage": private_usage,
            "module": module}


def client_functions() -> dict[str, object]:
    """The module's functions that call a SQL function (their first argument is the connection)."""
    return {name: value for name, value in vars(sql_api).items()
            if inspect.isfunction(value) and value.__module__ == sql_api.__name__
            and next(iter(inspect.signature(value).parameters), None) == "conn"}


def test_every_public_function_has_a_python_function_and_every_python_function_a_sql_function(catalog):
    functions = catalog["functions"]
    expected = set(functions) - set(sql_api.PREVIOUS_RELEASE_ONLY)
    client = set(client_functions())
    assert sorted(expected - client) == [], "public SQL functions without a Python function: run python -m tools.sql_api"
    assert sorted(client - expected) == [], "Python functions without a public SQL function"
    assert sorted(set(sql_api.PREVIOUS_RELEASE_ONLY) - set(functions)) == [], "kept for the previous release, but gone"
    for old, successor in sql_api.PREVIOUS_RELEASE_ONLY.items():
        assert successor in client, (old, successor)
    assert sql_api.PUBLIC_FUNCTIONS == {name: f.identity for name, f in functions.items()}


def test_each_python_function_takes_its_sql_functions_arguments_by_name_and_type(catalog):
    for name, function in client_functions().items():
        sql = catalog["functions"][name]
        parameters = list(inspect.signature(function).parameters.values())[1:]
        assert [p.name for p in parameters] == [generator.python_name(n) for n, _ in sql.inputs], name
        assert [p.annotation for p in parameters] == [generator.python_type(t, argument=True) for _, t in sql.inputs], \
            name
        optional = [p.default is sql_api.DEFAULT for p in parameters]
        assert optional == [i >= len(sql.inputs) - sql.defaults for i in range(len(sql.inputs))], name
        assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in parameters), name


def test_the_committed_client_is_what_the_generator_writes(catalog):
    assert catalog["module"] == generator.MODULE.read_text(encoding="utf-8"), \
        "app/sql_api.py is out of date: run python -m tools.sql_api"


def called_functions(name: str, bodies: dict[str, str], seen: set[str] | None = None) -> set[str]:
    """`name` and every function its body calls, transitively."""
    seen = set() if seen is None else seen
    seen.add(name)
    for other in bodies:
        if other not in seen and re.search(rf"(?<![a-z0-9_]){other}\s*\(", bodies.get(name, "")):
            called_functions(other, bodies, seen)
    return seen


def test_every_outcome_vocabulary_is_its_functions_words(catalog):
    functions, bodies = catalog["functions"], catalog["bodies"]
    by_type = {f.type_name + "Outcome": f for f in functions.values()}
    vocabularies = {name: value for name, value in vars(sql_api).items() if name.endswith("Outcome")}
    assert vocabularies, "no outcome vocabulary"
    for type_name, vocabulary in vocabularies.items():
        function = by_type.get(type_name)
        assert function is not None, f"{type_name} names no public function"
        assert ("outcome", "text") in function.columns, f"{function.name} has no outcome column"
        words = set(re.findall(r"'([a-z_]+)'", "\n".join(bodies[n] for n in called_functions(function.name, bodies))))
        literal = set(_literal_values(vocabulary))
        assert sorted(literal - words) == [], f"{type_name}: not a word of {function.name}"


def _literal_values(vocabulary) -> list[str]:
    values = []
    for argument in vocabulary.__args__:
        values.extend(_literal_values(argument) if hasattr(argument, "__args__") else [argument])
    return values


def test_the_api_role_executes_the_public_functions_and_cannot_reach_the_private_schema(catalog):
    public = set(catalog["functions"])
    assert catalog["executable"] == public
    assert not catalog["private_usage"], "the API role must not have USAGE on boardready_private"


#: Code that still names SQL functions as strings, and why.
BY_NAME = {
    # Measures the database's own cost of the intake call: a prepared statement, positional arguments.
    "tools/intake_db_cost.py": "measurement",
}
BY_NAME_CALL = re.compile(r"\bdatabase\.call(?:_one)?\(|\bdb\.call_one\(|\bboardready\.[a-z][a-z0-9_]*\(")


def test_the_code_calls_sql_functions_through_the_client():
    """app, workers and tools call app/sql_api.py's functions, not names in strings."""
    found = set()
    for folder in ("app", "workers", "tools"):
        for path in (ROOT / folder).rglob("*.py"):
            name = str(path.relative_to(ROOT))
            if name in ("app/sql_api.py", "app/database.py"):
                continue
            text = path.read_text(encoding="utf-8")
            if any(BY_NAME_CALL.search(line) for line in text.splitlines() if not line.lstrip().startswith("#")):
                found.add(name)
    assert sorted(found - set(BY_NAME)) == [], "call app/sql_api.py's function instead"
