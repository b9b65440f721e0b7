"""The docs stay true to the tree: docs/design.md names only files and folders
that exist, and the README front page stays under 250 lines (detail goes in
docs/*.md)."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: A name that stands for many (a migration's NNNN_name.sql, <release>.sql) is no file.
PLACEHOLDER = re.compile(r"NNNN|<|\*|\{")


def named_paths(text: str) -> set[str]:
    """Paths in `text`: backticked ones with a slash (`app/web/runs.py`,
    `sql/functions/`) and bare file names (intake.sql, runs.py)."""
    quoted = {p for p in re.findall(r"`([A-Za-z0-9_./<>*{}\-]+)`", text)
              if "/" in p and "://" not in p and not p.startswith("/")}     # a route is no path
    bare = set(re.findall(r"(?<![\w/.<>-])([A-Za-z0-9_\-]+\.(?:sql\.j2|sql|py|md|json|yml|toml|html|css))\b", text))
    return {p for p in quoted | bare if not PLACEHOLDER.search(p)}


def missing_paths(text: str, root: Path) -> list[str]:
    """The named paths that exist neither from the root, docs/ or tests/ (a
    slashed path), nor anywhere in the tree (a bare file name)."""
    names = {path.name for path in root.rglob("*") if ".venv" not in path.parts and ".git" not in path.parts}
    missing = []
    for path in sorted(named_paths(text)):
        if "/" in path:
            # A migration may be named by its number alone (`sql/schema/0001`).
            if not any((base / path.rstrip("/")).exists() or any((base / path).parent.glob(Path(path).name + "_*"))
                       for base in (root, root / "docs", root / "tests")):
                missing.append(path)
        elif path not in names:
            missing.append(path)
    return missing


def test_design_names_only_files_that_exist():
    assert missing_paths((ROOT / "docs" / "design.md").read_text(encoding="utf-8"), ROOT) == []


def test_the_check_finds_a_file_that_is_gone():
    text = "The intake is `sql/functions/intake.sql`; the queue once lived in `sql/functions/jobs_v0.sql` and " \
           "outbox_v0.py; migrations are `sql/schema/NNNN_name.sql`."
    assert missing_paths(text, ROOT) == ["outbox_v0.py", "sql/functions/jobs_v0.sql"]


def test_the_readme_stays_under_250_lines():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").count("\n")
    assert lines < 250, f"README.md has {lines} lines: move detail to docs/*.md"


def interface_operations(text: str) -> set[tuple[str, str]]:
    """(METHOD, path) of every `METHOD /path` docs/interface.md names (a query string or a bracket cut off)."""
    return {(method, path) for method, path in re.findall(r"`(GET|POST|PUT|PATCH|DELETE) (/[^`?\s\[]*)", text)}


def contract_operations() -> set[tuple[str, str]]:
    import json

    document = json.loads((ROOT / "contracts" / "openapi.json").read_text(encoding="utf-8"))
    return {(method.upper(), path) for path, item in document["paths"].items() for method in item
            if method in ("get", "post", "put", "patch", "delete")}


def test_interface_names_the_contracts_operations_and_no_other():
    """docs/interface.md is checked against contracts/openapi.json: it names
    every operation of the contract, and none the contract does not have."""
    named, contract = interface_operations((ROOT / "docs" / "interface.md").read_text(encoding="utf-8")), \
        contract_operations()
    assert sorted(named - contract) == [], "docs/interface.md names an operation the contract does not have"
    assert sorted(contract - named) == [], "docs/interface.md does not describe an operation of the contract"


def test_interface_says_what_the_contract_says_of_a_wrong_content_type():
    """The contract answers a wrong content type with 415 on its JSON routes; the page says so too."""
    text = (ROOT / "docs" / "interface.md").read_text(encoding="utf-8")
    assert "400 `invalid_content_type`" not in text
    assert "| 415 | `invalid_content_type` |" in text
