"""Writes docs/configuration.md and .env.example from what app/config.py reads.

    python -m tools.config_docs            # write both files
    python -m tools.config_docs --check    # exit 1 when either is out of date

The facts come from the code, not from a copy of it: the configuration is
loaded with its reader recording every variable it looks at (and, for
integers, the default and range it passes), once with nothing set (what is
required) and once per variable with a value no setting accepts (what an
invalid value does: not ready, or ignored with the default used). A scan of
the service's sources for variable names catches a module that reads the
environment another way. The words come from tools/config_reference.py.
"""
from __future__ import annotations

import argparse
import ast
import inspect
import sys
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from tools.config_reference import GROUPS, Variable, variables

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "configuration.md"
ENV_EXAMPLE = ROOT / ".env.example"
SERVICE_SOURCES = ("app", "workers")
VARIABLE_NAME_PREFIXES = ("SERVICE_", "HOST_")
BAD_VALUE = "\x01not valid"
SECRET_READERS = ("required_secret", "matching_secret", "text_or_file")


@dataclass
class Read:
    """What the reader was asked about one variable."""
    integer: dict | None = None       # default, minimum, maximum, required_valid
    as_secret: bool = False


@dataclass
class Facts:
    reads: dict[str, Read] = field(default_factory=dict)
    required: set[str] = field(default_factory=set)
    invalid_effect: dict[str, str] = field(default_factory=dict)


@contextmanager
def _recording(reads: dict[str, Read]):
    """Wraps the reader's methods on the class, so every module that uses it
    (app/config.py and the settings modules built on it) is recorded."""
    from app.config import _Reader

    originals = {name: getattr(_Reader, name) for name in ("text", "integer", *SECRET_READERS)
                 if hasattr(_Reader, name)}

    def wrap(method_name, original):
        signature = inspect.signature(original)

        def recorded(self, *args, **kwargs):
            bound = signature.bind(self, *args, **kwargs)
            bound.apply_defaults()
            name = bound.arguments["name"]
            read = reads.setdefault(name, Read())
            if method_name == "integer":
                read.integer = {key: bound.arguments.get(key)
                                for key in ("default", "minimum", "maximum", "required_valid")}
            elif method_name in SECRET_READERS and method_name != "text_or_file":
                read.as_secret = True
            elif method_name == "text_or_file":
                read.as_secret = True
                reads.setdefault(name + "_FILE", Read())
            return original(self, *args, **kwargs)
        return recorded

    try:
        for name, original in originals.items():
            setattr(_Reader, name, wrap(name, original))
        yield
    finally:
        for name, original in originals.items():
            setattr(_Reader, name, original)


def _load(env: dict[str, str]):
    from app import config
    return config.load(env)


def collect() -> Facts:
    facts = Facts()
    with _recording(facts.reads):
        baseline = _load({})
    facts.required = set(baseline.missing)
    for name in sorted(facts.reads):
        probe = _load({name: "/nonexistent/boardready" if name.endswith("_FILE") else BAD_VALUE})
        if set(probe.missing) - set(baseline.missing) or (name in baseline.missing and name in probe.missing):
            facts.invalid_effect[name] = "not ready"
        elif set(probe.invalid) - set(baseline.invalid):
            facts.invalid_effect[name] = "default used, reported"
        else:
            facts.invalid_effect[name] = "not checked"
    return facts


def names_in_sources() -> set[str]:
    """Every string constant in the service's modules that is a whole variable
    name: a module reading os.environ directly shows up here."""
    found = set()
    for folder in SERVICE_SOURCES:
        for path in sorted((ROOT / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                        and node.value.startswith(VARIABLE_NAME_PREFIXES) \
                        and node.value.replace("_", "").isalnum() and node.value.isupper() \
                        and not node.value.endswith("_"):
                    found.add(node.value)
    return found


def read_by_service(facts: Facts) -> set[str]:
    return set(facts.reads) | names_in_sources()


def _integer_range(read: Read) -> str:
    spec = read.integer
    if spec["maximum"] is None:
        return f"integer from {spec['minimum']}"
    return f"integer {spec['minimum']}-{spec['maximum']}"


def _default(name: str, v: Variable, facts: Facts) -> str:
    read = facts.reads.get(name)
    if name in facts.required:
        return "required"
    if read and read.integer:
        return str(read.integer["default"])
    return v.default or "unset"


def _accepted(name: str, v: Variable, facts: Facts) -> str:
    read = facts.reads.get(name)
    if read and read.integer:
        return _integer_range(read)
    return v.values or "text"


def _is_secret(name: str, v: Variable, facts: Facts) -> bool:
    read = facts.reads.get(name)
    return v.secret or bool(read and read.as_secret and not name.endswith("_FILE"))


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def render_doc(facts: Facts) -> str:
    out = [
        "# Configuration",
        "",
        "<!-- Generated by `python -m tools.config_docs` from app/config.py and",
        "     tools/config_reference.py; edit those, then run it again. -->",
        "",
        "Environment variables only, read and validated in `app/config.py`. A variable",
        "that is required, or that shapes a public contract, and is absent or invalid",
        "makes readiness answer 503 `missing-configuration` naming it (\"not ready\"",
        "below); the process still starts so that an operator can see why. A tuning",
        "knob with an invalid value keeps its default and is reported (\"default used\").",
        "Secrets are never logged; a `..._FILE` variable names a file that holds the",
        "secret instead (mode 0600, readable by the service's user only).",
        "",
        "[`.env.example`](../.env.example) lists the same variables in the format of",
        "systemd's `EnvironmentFile=` and of `docker run --env-file`; `bin/register-app`",
        "writes the code host app's part of it ([deploy.md](deploy.md)). The operator",
        "tools' own variables (`SERVICE_LOAD_*` of `bin/load`) are in",
        "[operations.md](operations.md#load-validation); the runner's (`SERVICE_URL`,",
        "`SERVICE_OIDC_AUDIENCE`) in the workflow, `workflow/readiness-runner.yml`.",
        "",
    ]
    for title, group in GROUPS:
        out += [f"## {title}", "",
                "| variable | default | accepted | invalid value | secret | what it changes |",
                "|---|---|---|---|---|---|"]
        for name, v in group.items():
            out.append("| `{}` | {} | {} | {} | {} | {} |".format(
                name, _cell(_default(name, v, facts)), _cell(_accepted(name, v, facts)),
                facts.invalid_effect.get(name, "not read at start"),
                "secret" if _is_secret(name, v, facts) else "no", _cell(v.meaning)))
        out.append("")
    return "\n".join(out)


def _plain(text: str) -> str:
    return text.replace("`", "")


def render_env_example(facts: Facts) -> str:
    out = [
        "# boardready: every environment variable the service reads.",
        "# Generated by `python -m tools.config_docs` (docs/configuration.md says more).",
        "# Required variables are uncommented; the others show their default.",
        "# The filled-in copy is /etc/boardready/boardready.env, mode 0640, owner root,"
        " group boardready (docs/deploy.md).",
        "",
    ]
    for title, group in GROUPS:
        out += [f"# --- {title} ---", ""]
        for name, v in group.items():
            default = _default(name, v, facts)
            notes = [_plain(v.meaning), "accepted: " + _plain(_accepted(name, v, facts))]
            if _is_secret(name, v, facts):
                notes.append("secret")
            out += ["# " + "; ".join(notes)]
            if default == "required":
                out.append(f"{name}={v.example or ''}")
            else:
                value = "" if default == "unset" else _plain(default)
                out.append(f"# {name}={v.example if v.example and not value else value}")
            out.append("")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when a generated file is out of date")
    args = parser.parse_args(argv)
    facts = collect()
    undocumented = sorted(read_by_service(facts) - set(variables()))
    if undocumented:
        print("read by the service but not in tools/config_reference.py: " + ", ".join(undocumented),
              file=sys.stderr)
        return 1
    stale = []
    for path, text in ((DOC, render_doc(facts)), (ENV_EXAMPLE, render_env_example(facts))):
        if args.check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(str(path.relative_to(ROOT)))
        else:
            path.write_text(text, encoding="utf-8")
    if stale:
        print("out of date (run python -m tools.config_docs): " + ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
