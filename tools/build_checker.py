"""bin/build-checker: the boardready-checker wheel (packaging/checker/pyproject.toml).

    bin/build-checker [--out dist]

Built from a copy of the tree's checker/ and contracts/ laid out as in the
repository, so that the build's scratch folders never land in the working
tree, and prints the wheel's path. What the distribution holds and needs is
in packaging/checker/pyproject.toml.
"""
from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGING = ROOT / "packaging" / "checker"
SOURCES = ("checker", "contracts")


def build_wheel(out_dir: Path, python: str = sys.executable) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="boardready-checker-build-") as scratch:
        tree = Path(scratch)
        shutil.copytree(PACKAGING, tree / "packaging" / "checker",
                        ignore=shutil.ignore_patterns("build", "*.egg-info", "dist"))
        for name in SOURCES:
            shutil.copytree(ROOT / name, tree / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        before = set(out_dir.glob("boardready_checker-*.whl"))
        subprocess.run([python, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", str(out_dir),
                        str(tree / "packaging" / "checker")], check=True)
    built = sorted(set(out_dir.glob("boardready_checker-*.whl")) - before) or \
        sorted(out_dir.glob("boardready_checker-*.whl"), key=lambda p: p.stat().st_mtime)[-1:]
    return built[-1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bin/build-checker", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="dist", help="folder of the wheel (default: dist)")
    parser.add_argument("--cwd", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    out = Path(args.out)
    if not out.is_absolute() and args.cwd:
        out = Path(args.cwd) / out
    print(build_wheel(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
