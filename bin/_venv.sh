# Sourced by the entry points in bin/. Two kinds:
# - the operator tools (serve, worker, migrate, psql, token, register-app) set
#   BOARDREADY_OPERATOR_TOOL=1 first: they run on a production install and
#   never change it. They use .venv as it is when there is one, else the
#   python3 that has boardready installed, and install nothing.
# - everything else (bin/test, the benchmarks, the demo, the emulator) creates
#   or refreshes .venv with the dev extras, so that a fresh clone needs nothing
#   but python3.11 (and root for Debian packages in bin/test). The venv is
#   rebuilt only when pyproject.toml changes (a stamp holds its hash).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"
PYTHON_BIN="${PYTHON_BIN:-$(command -v python3.11 || command -v python3)}"
if [ "${BOARDREADY_OPERATOR_TOOL:-}" = 1 ]; then
  if [ -x "$VENV/bin/python" ]; then
    BOARDREADY_PYTHON="$VENV/bin/python"
  elif ! "$PYTHON_BIN" -c 'import app.config, psycopg' 2>/dev/null; then
    echo "error: boardready is not installed: python3 -m venv $VENV && $VENV/bin/pip install $ROOT" >&2
    exit 2
  else
    BOARDREADY_PYTHON="$PYTHON_BIN"
  fi
else
  want="$(sha256sum "$ROOT/pyproject.toml" | cut -d' ' -f1)"
  have="$(cat "$VENV/.boardready-stamp" 2>/dev/null || true)"
  if [ ! -x "$VENV/bin/python" ] || [ "$want" != "$have" ]; then
    echo "bootstrapping $VENV (pyproject.toml changed or venv missing)" >&2
    [ -x "$VENV/bin/python" ] || "$PYTHON_BIN" -m venv "$VENV"
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check --upgrade pip >&2
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check -e "$ROOT[dev]" >&2
    echo "$want" > "$VENV/.boardready-stamp"
  fi
  export PATH="$VENV/bin:$PATH"
  BOARDREADY_PYTHON="$VENV/bin/python"
fi
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"
cd "$ROOT"
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp}"
