"""app/sql_api.py, the SQL API's Python client, against pg_proc: one Python
function per public function (the boardready schema's) with its argument
names and types, none without a SQL function, the outcome vocabularies the
functions' own words, the committed module what tools/sql_api.py writes, the
API role allowed exactly the public functions, and the code and the tests
calling them through the client, not by names in strings."""
from __future__ import annotations

import ast
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
    # The previous release's own (sql/compat) are gone from a database migrated from empty: its contract ran.
    assert sorted(set(sql_api.PREVIOUS_RELEASE_ONLY) & set(functions)) == [], "kept for the previous release"
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


#: Where code names a public SQL function in a string on purpose: (file, function) -> why. Helpers of
#: boardready_private are not looked for: the client has no function for them (the API role cannot call
#: one), so the tests of a helper (release_decision, supply_price_breaks, ...) call it by name as the owner.
BY_NAME = {
    ("tools/intake_db_cost.py", "intake_accept_deliveries"):
        "measures the database's own cost of the intake call: a prepared statement, positional arguments",
    ("tests/sql/test_call_cursor.py", "health_probe"): "tests database.call() itself, the layer under the client",
    ("tests/migrations/test_work_items_move.py", "outbox_report"):
        "the previous release's workers report, positionally as they call, on leases held across the move",
    ("tests/migrations/test_migrations.py", "health_probe"):
        "drops the function and asks the catalog whether migrate put it back: DDL, not a call",
}
#: Files not looked at, and why.
NOT_CHECKED = {"app/sql_api.py": "the client", "app/database.py": "the layer under it",
               "tests/sql/test_sql_api.py": "this check, and its examples of what it finds"}
#: A public function called from a string of SQL: by its qualified name, or after a keyword that calls it.
_PUBLIC = "|".join(sorted(sql_api.PUBLIC_FUNCTIONS, key=len, reverse=True))
SQL_CALL = re.compile(rf"(?<![\w.])boardready\.({_PUBLIC})\s*\(|\b(?:SELECT|FROM|JOIN|LATERAL|CALL|PERFORM)\s+"
                      rf"(?:\*\s+FROM\s+)?({_PUBLIC})\s*\(", re.IGNORECASE)
#: The layer under the client, which takes a function's name: database.call(conn, "name", ...).
BY_NAME_CALLS = {("database", "call"), ("database", "call_one"), ("db", "call_one")}


def named_calls(text: str) -> set[str]:
    """The SQL functions `text` (Python source) calls by a name in a string ("?": a name it computes)."""
    tree = ast.parse(text)
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            names.update(qualified or keyword for qualified, keyword in SQL_CALL.findall(node.value))
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and isinstance(node.func.value, ast.Name) and (node.func.value.id, node.func.attr) in BY_NAME_CALLS):
            name = node.args[1] if len(node.args) > 1 else None
            names.add(name.value if isinstance(name, ast.Constant) else "?")
    return names


def test_the_code_and_the_tests_call_sql_functions_through_the_client():
    """app, workers, tools and tests call app/sql_api.py's functions, not names in strings."""
    found = set()
    for folder in ("app", "workers", "tools", "tests"):
        for path in (ROOT / folder).rglob("*.py"):
            name = str(path.relative_to(ROOT))
            if name in NOT_CHECKED:
                continue
            found.update((name, function) for function in named_calls(path.read_text(encoding="utf-8")))
    assert sorted(found - set(BY_NAME)) == [], "call app/sql_api.py's function instead"
    assert sorted(set(BY_NAME) - found) == [], "allowed, but no longer called by name: take it off BY_NAME"


def test_the_client_check_finds_each_way_of_calling_by_name():
    found = named_calls('''
def f(conn, owner, function):
    """Not a call: boardready.token_list(...) in a docstring."""
    database.call_one(conn, "token_list", p_repository_id=1)
    database.call(conn, function)
    owner.execute("SELECT * FROM boardready.token_revoke_v2(%s, %s)", (1, 2))
    owner.execute("SELECT outcome FROM watched_board_get(%s)", (1,))
    owner.execute("SELECT boardready_private.release_decision(%s) AS d, count(*) FROM runs")
    owner.execute("INSERT INTO boardready.accounts (id, login) VALUES (1, 'a')")
    owner.execute("DROP FUNCTION boardready.health_probe()")
    sql_api.token_create(conn, repository_id=1)
''')
    assert found == {"token_list", "?", "token_revoke_v2", "watched_board_get", "health_probe"}
