# Sourced by the entry points in bin/: create or refresh .venv so that a fresh
# clone needs nothing but python3.11 (and root for Debian packages in bin/test).
# The venv is rebuilt only when pyproject.toml changes (a stamp holds its hash).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"
PYTHON_BIN="${PYTHON_BIN:-$(command -v python3.11 || command -v python3)}"
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
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"
cd "$ROOT"
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp}"
