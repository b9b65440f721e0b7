"""The differential corpus: real public KiCad projects the checker is judged on.

The projects' files are too large for the repository: they live in a
git-ignored cache, ``.corpus/<id>/`` at the repository root, each entry's files
at their paths in its own repository. What is committed is
``tests/corpus/manifest.toml`` (per entry: repository, commit, the project's
paths, licence, KiCad format, copper layers and the SHA-256 of every file) and
KiCad 9's own reports of each entry under ``tests/corpus/kicad9/<id>/``, so
anyone with the files can re-run the comparison (``bin/corpus``,
tools/corpus_compare.py) without KiCad.

``python -m tools.corpus verify`` checks the cache against the manifest;
``materialize`` (re)writes it from the fetched repositories under
``/work/.mirror`` (bare git directories, ``owner+name/repo``); ``add REPO
BOARD...`` takes a project from a fetched repository into the manifest and the
cache; ``oracle [--only ID]`` runs kicad-cli 9 on entries and commits-ready
writes their reports (one at a time, at low priority).
"""
from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from checker.project_settings import DRC_DEFAULTS, ERC_DEFAULTS
from checker.versions import major_for

from . import kicad_oracle

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "corpus"
MANIFEST = CORPUS / "manifest.toml"
REPORTS = CORPUS / "kicad9"
CACHE = ROOT / ".corpus"
MIRROR = Path(os.environ.get("CORPUS_MIRROR", "/work/.mirror"))
GZIP_ABOVE_BYTES = 64 * 1024           # a report larger than this (compact JSON) is committed gzipped
KICAD_TIMEOUT_S = 900
# Files of a project besides its board: the project file, every sheet, custom rules,
# and the libraries the project itself carries (lib_symbol_mismatch compares with them).
LIBRARY_TABLES = ("sym-lib-table", "fp-lib-table")


@dataclass
class Entry:
    id: str
    repository: str                 # owner/name on GitHub
    commit: str
    board: str                      # path of the .kicad_pcb in the repository
    schematic: str | None           # the root sheet, if the project has one
    project: str | None             # the .kicad_pro
    licence: str
    kicad_format: int               # the board's (version ...)
    kicad_major: int
    copper_layers: int
    sheets: int
    features: list[str] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)     # repository path -> sha256

    @property
    def folder(self) -> Path:
        """The entry's files in the cache, at their repository paths."""
        return CACHE / self.id

    @property
    def target(self) -> Path:
        """What the checker is given: the .kicad_pro, else the board's folder, in the cache."""
        return self.folder / (self.project or str(PurePosixPath(self.board).parent))

    @property
    def reports(self) -> Path:
        return REPORTS / self.id


def load_manifest(path: Path = MANIFEST) -> list[Entry]:
    if not path.exists():
        return []
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    entries = []
    for raw in data.get("project", []):
        entries.append(Entry(id=raw["id"], repository=raw["repository"], commit=raw["commit"], board=raw["board"],
                             schematic=raw.get("schematic") or None, project=raw.get("project") or None,
                             licence=raw.get("licence", "unknown"), kicad_format=int(raw["kicad_format"]),
                             kicad_major=int(raw["kicad_major"]), copper_layers=int(raw["copper_layers"]),
                             sheets=int(raw.get("sheets", 0)), features=list(raw.get("features", [])),
                             files=dict(raw.get("files", {}))))
    return entries


def _toml_string(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)      # a JSON string is a TOML basic string


def write_manifest(entries: list[Entry], path: Path = MANIFEST) -> None:
    lines = ["# The differential corpus (tools/corpus.py): real public KiCad projects, their files kept",
             "# in the git-ignored cache .corpus/<id>/ at their repository paths, KiCad 9's reports of",
             "# each under tests/corpus/kicad9/<id>/. `python -m tools.corpus materialize` rebuilds the",
             "# cache from fetched repositories, `verify` checks it against the hashes below.", ""]
    for e in sorted(entries, key=lambda e: e.id):
        lines += ["[[project]]",
                  f"id = {_toml_string(e.id)}",
                  f"repository = {_toml_string(e.repository)}",
                  f"commit = {_toml_string(e.commit)}",
                  f"board = {_toml_string(e.board)}"]
        if e.schematic:
            lines.append(f"schematic = {_toml_string(e.schematic)}")
        if e.project:
            lines.append(f"project = {_toml_string(e.project)}")
        lines += [f"licence = {_toml_string(e.licence)}",
                  f"kicad_format = {e.kicad_format}",
                  f"kicad_major = {e.kicad_major}",
                  f"copper_layers = {e.copper_layers}",
                  f"sheets = {e.sheets}",
                  "features = [" + ", ".join(_toml_string(f) for f in e.features) + "]",
                  "[project.files]"]
        lines += [f"{_toml_string(p)} = {_toml_string(h)}" for p, h in sorted(e.files.items())]
        lines.append("")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines), encoding="utf-8")


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def verify(entry: Entry) -> list[str]:
    """What is wrong with the entry's cached files (empty: all there, all matching)."""
    problems = []
    for path, digest in entry.files.items():
        local = entry.folder / path
        if not local.is_file():
            problems.append(f"{path}: missing")
        elif sha256(local.read_bytes()) != digest:
            problems.append(f"{path}: SHA-256 differs")
    problems += [f"{path}: not in the manifest" for path in _extra_files(entry)]
    return problems


def _extra_files(entry: Entry) -> list[str]:
    """Files in the entry's cache folder the manifest does not list (KiCad and the checker would read them)."""
    if not entry.folder.is_dir():
        return []
    return sorted(str(p.relative_to(entry.folder)) for p in entry.folder.rglob("*")
                  if p.is_file() and str(p.relative_to(entry.folder)) not in entry.files)


# -- the fetched repositories (bare git directories) --

def git_dir(repository: str, mirror: Path = MIRROR) -> Path | None:
    top = mirror / repository.replace("/", "+") / "repo"
    for candidate in (top / ".git", top):
        if (candidate / "HEAD").exists():
            return candidate
    return None


def _git(directory: Path, *args: str) -> bytes:
    done = subprocess.run(["git", "--git-dir", str(directory), *args], capture_output=True, timeout=300)
    if done.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)}: {done.stderr.decode(errors='replace').strip()[:300]}")
    return done.stdout


def blob(directory: Path, commit: str, path: str) -> bytes:
    return _git(directory, "show", f"{commit}:{path}")


def tree(directory: Path, commit: str) -> dict[str, int]:
    """Every file of the commit: path -> size (-1 when the snapshot lacks its content). Symbolic
    links and submodules are left out: a checkout has no file of theirs to take."""
    out = {}
    for line in _git(directory, "ls-tree", "-r", "-l", "-z", commit).split(b"\0"):
        if not line:
            continue
        meta, path = line.split(b"\t", 1)
        mode, _, _, size = meta.split()
        if mode not in (b"100644", b"100755"):
            continue
        out[path.decode("utf-8", "surrogateescape")] = int(size) if size.isdigit() else -1
    return out


def materialize(entry: Entry, mirror: Path = MIRROR) -> list[str]:
    """(Re)write the entry's files into the cache from its fetched repository."""
    directory = git_dir(entry.repository, mirror)
    if directory is None:
        return [f"{entry.repository} is not fetched under {mirror}"]
    for path in _extra_files(entry):
        (entry.folder / path).unlink()
    problems = []
    for path, digest in entry.files.items():
        data = blob(directory, entry.commit, path)
        if sha256(data) != digest:
            problems.append(f"{path}: SHA-256 differs at {entry.commit[:12]}")
            continue
        local = entry.folder / path
        local.parent.mkdir(parents=True, exist_ok=True)
        local.write_bytes(data)
    return problems


# -- taking a project in --

_VERSION = re.compile(rb"\(kicad_pcb\s*\(version\s+(\d+)")
_SHEETFILE = re.compile(r'\(property\s+"Sheet ?[Ff]ile"\s+"([^"]+)"')
_LIB_URI = re.compile(r'\(uri\s+"?\$\{KIPRJMOD\}/([^")]+)"?\)')
_COPPER = re.compile(r'\(\d+\s+"?[^\s"]*\.Cu"?\s+(?:signal|power|mixed|jumper)')


def copper_layers(board_text: str) -> int:
    start = board_text.find("(layers")
    end = board_text.find("(setup", start)
    return len(_COPPER.findall(board_text[start:end if end > 0 else start + 20000]))


def sheet_files(directory: Path, commit: str, files: dict[str, int], root_sheet: str) -> list[str]:
    """The root sheet and every sheet it reaches (KiCad resolves sheet files from the project folder)."""
    project_dir = PurePosixPath(root_sheet).parent
    seen, todo = [], [root_sheet]
    while todo:
        sheet = todo.pop()
        if sheet in seen or sheet not in files or files[sheet] < 0:
            continue
        seen.append(sheet)
        text = blob(directory, commit, sheet).decode("utf-8", "replace")
        for name in _SHEETFILE.findall(text):
            for base in (project_dir, PurePosixPath(sheet).parent):
                candidate = os.path.normpath(str(base / name.replace("\\", "/")))
                if candidate in files:
                    todo.append(candidate)
                    break
    return seen


def project_files(directory: Path, commit: str, board: str) -> tuple[list[str], str | None, str | None]:
    files = tree(directory, commit)
    folder = PurePosixPath(board).parent
    stem = PurePosixPath(board).stem
    chosen = [board]
    pro = str(folder / f"{stem}.kicad_pro") if str(folder) != "." else f"{stem}.kicad_pro"
    sch = pro[: -len(".kicad_pro")] + ".kicad_sch"
    pro = pro if pro in files else None
    sch = sch if sch in files and files[sch] >= 0 else None
    if pro:
        chosen.append(pro)
    dru = board[: -len(".kicad_pcb")] + ".kicad_dru"
    if dru in files and files[dru] >= 0:
        chosen.append(dru)
    if sch:
        chosen += [s for s in sheet_files(directory, commit, files, sch) if s not in chosen]
    for table in LIBRARY_TABLES:
        path = str(folder / table) if str(folder) != "." else table
        if path in files and files[path] >= 0:
            chosen.append(path)
            text = blob(directory, commit, path).decode("utf-8", "replace")
            for relative in _LIB_URI.findall(text):
                lib = os.path.normpath(str(folder / relative))
                if table == "sym-lib-table" and lib in files and 0 <= files[lib] < 4 * 1024 * 1024:
                    chosen.append(lib)
    return list(dict.fromkeys(chosen)), sch, pro


LICENCES = [  # (what a licence text says, its SPDX-like name), first match wins
    ("CERN-OHL-S", "CERN-OHL-S-2.0"), ("CERN-OHL-W", "CERN-OHL-W-2.0"), ("CERN-OHL-P", "CERN-OHL-P-2.0"),
    ("CERN Open Hardware Licence Version 2 - Strongly", "CERN-OHL-S-2.0"),
    ("CERN Open Hardware Licence Version 2 - Weakly", "CERN-OHL-W-2.0"),
    ("CERN Open Hardware Licence Version 2 - Permissive", "CERN-OHL-P-2.0"),
    ("CERN OHL v1.2", "CERN-OHL-1.2"), ("CERN Open Hardware Licence v1.2", "CERN-OHL-1.2"),
    ("Solderpad Hardware License", "SHL"), ("TAPR Open Hardware License", "TAPR-OHL-1.0"),
    ("Attribution-ShareAlike 4.0", "CC-BY-SA-4.0"), ("Attribution-ShareAlike 3.0", "CC-BY-SA-3.0"),
    ("Attribution-NonCommercial-ShareAlike", "CC-BY-NC-SA"), ("Attribution 4.0 International", "CC-BY-4.0"),
    ("CC BY-SA 4.0", "CC-BY-SA-4.0"), ("CC-BY-SA-4.0", "CC-BY-SA-4.0"), ("CC0", "CC0-1.0"),
    ("GNU GENERAL PUBLIC LICENSE\n                       Version 3", "GPL-3.0"),
    ("GNU GENERAL PUBLIC LICENSE\n                       Version 2", "GPL-2.0"),
    ("GNU LESSER GENERAL PUBLIC LICENSE", "LGPL"), ("GNU GENERAL PUBLIC LICENSE", "GPL"),
    ("Apache License", "Apache-2.0"), ("MIT License", "MIT"),
    ("Permission is hereby granted, free of charge", "MIT"), ("Mozilla Public License", "MPL-2.0"),
    ("Redistribution and use in source and binary forms", "BSD"), ("The Unlicense", "Unlicense"),
    ("unlicense.org", "Unlicense"),
]


def licence_of(directory: Path, commit: str, board: str) -> str:
    """The project's licence: a LICENSE/COPYING file in its folder or an ancestor, else the README's word."""
    files = tree(directory, commit)
    folders = [PurePosixPath(board).parent, *PurePosixPath(board).parent.parents]
    for readme_too in (False, True):
        for folder in folders:
            prefix = "" if str(folder) == "." else f"{folder}/"
            for path, size in sorted(files.items()):
                name = path[len(prefix):] if path.startswith(prefix) else None
                if not name or "/" in name or size < 0 or size > 1_000_000:
                    continue
                upper = name.upper()
                if readme_too != upper.startswith("README") or not (
                        readme_too or upper.startswith(("LICENSE", "LICENCE", "COPYING"))):
                    continue
                text = blob(directory, commit, path).decode("utf-8", "replace")
                for needle, spdx in LICENCES:
                    if needle.lower() in text.lower():
                        return spdx
                if not readme_too:
                    return "see " + path
    return "unknown"


def _changed_severities(pro: str) -> bool:
    """Whether the project sets a DRC or ERC severity away from KiCad 9's default."""
    try:
        settings = json.loads(pro) if pro else {}
    except ValueError:
        return False
    drc = ((settings.get("board") or {}).get("design_settings") or {}).get("rule_severities") or {}
    erc = (settings.get("erc") or {}).get("rule_severities") or {}
    return (any(DRC_DEFAULTS.get(k, v) != v for k, v in drc.items())
            or any(ERC_DEFAULTS.get(k, v) != v for k, v in erc.items()))


def features_of(texts: dict[str, str]) -> list[str]:
    """What KiCad features a project uses (for the corpus's spread)."""
    board = next((t for p, t in texts.items() if p.endswith(".kicad_pcb")), "")
    pro = next((t for p, t in texts.items() if p.endswith(".kicad_pro")), "")
    sheets = [t for p, t in texts.items() if p.endswith(".kicad_sch")]
    found = []
    checks = [
        ("custom-rules", any(p.endswith(".kicad_dru") for p in texts)),
        ("rule-severities", _changed_severities(pro)),
        ("drc-exclusions", bool(re.search(r'"drc_exclusions":\s*\[\s*"', pro))),
        ("erc-exclusions", bool(re.search(r'"erc_exclusions":\s*\[\s*\[?\s*"', pro))),
        ("net-tie", "net_tie_pad_groups" in board or "(net_tie" in board),
        ("diff-pairs", bool(re.search(r'\(net \d+ "[^"]*(?:_P|\+)"\)', board))
         and bool(re.search(r'\(net \d+ "[^"]*(?:_N|-)"\)', board))),
        ("teardrops", "(teardrop" in board),
        ("castellated", "pad_prop_castellated" in board or "(property pad_prop_castellated)" in board),
        ("keepout", "(keepout" in board),
        ("zones", "(zone" in board),
        ("buses", any("(bus " in s or "(bus_entry" in s for s in sheets)),
        ("hierarchical", len(sheets) > 1),
        ("multi-unit", any(re.search(r"\(unit [2-9]\)", s) for s in sheets)),
    ]
    for name, present in checks:
        if present:
            found.append(name)
    return found


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60]


def take(repository: str, board: str, entry_id: str | None = None, mirror: Path = MIRROR) -> Entry:
    """An entry for ``board`` of the fetched ``repository`` at its newest commit, its files cached."""
    directory = git_dir(repository, mirror)
    if directory is None:
        raise RuntimeError(f"{repository} is not fetched under {mirror}")
    commit = _git(directory, "rev-parse", "HEAD").decode().strip()
    paths, sch, pro = project_files(directory, commit, board)
    data = {p: blob(directory, commit, p) for p in paths}
    for path, content in data.items():
        if content.startswith(b"version https://git-lfs"):
            raise RuntimeError(f"{path} is a Git LFS pointer")
    version = _VERSION.search(data[board][:4096])
    if version is None:
        raise RuntimeError(f"{board} has no (kicad_pcb (version ...)) header")
    texts = {p: d.decode("utf-8", "replace") for p, d in data.items() if not p.endswith(".kicad_sym")}
    fmt = int(version.group(1))
    name, stem = slug(repository.split("/")[1]), slug(PurePosixPath(board).stem)
    entry = Entry(id=entry_id or (name if stem in name else f"{name}-{stem}"),
                  repository=repository, commit=commit, board=board, schematic=sch, project=pro,
                  licence=licence_of(directory, commit, board), kicad_format=fmt,
                  kicad_major=major_for("board", fmt) or 0, copper_layers=copper_layers(texts[board]),
                  sheets=sum(p.endswith(".kicad_sch") for p in paths), features=features_of(texts),
                  files={p: sha256(d) for p, d in data.items()})
    for path, content in data.items():
        local = entry.folder / path
        local.parent.mkdir(parents=True, exist_ok=True)
        local.write_bytes(content)
    return entry


# -- KiCad 9's reports --

def read_report(entry: Entry, kind: str) -> dict | None:
    """KiCad's committed ``drc``/``erc`` report of the entry (None when KiCad gave none)."""
    for name in (f"{kind}.json", f"{kind}.json.gz"):
        path = entry.reports / name
        if path.exists():
            raw = path.read_bytes()
            return json.loads(gzip.decompress(raw) if name.endswith(".gz") else raw)
    return None


def read_timing(entry: Entry) -> dict:
    path = entry.reports / "kicad.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def kicad_cli_command(cli: str) -> list[str]:
    """``--kicad-cli`` as a command: a path, or words (``chroot /opt/kicad10-sid kicad-cli``)."""
    return cli.split()


def run_kicad(entry: Entry, kind: str, cli: list[str], nice: int = 10,
              extra_files: dict[str, bytes] | None = None) -> tuple[dict | None, float, str]:
    """kicad-cli's ``drc``/``erc`` report of the entry, run on a scratch copy of its cache folder
    (so nothing KiCad writes lands in the cache), with ``extra_files`` (repository path -> bytes)
    written into the copy first; with the wall time, process start included."""
    source = entry.board if kind == "drc" else entry.schematic
    if source is None:
        return None, 0.0, "no source file"
    scratch_parent = None
    if cli[0] == "chroot" and len(cli) > 1:       # a chroot's kicad-cli sees only the chroot's files
        scratch_parent = Path(cli[1]) / "tmp"
    with tempfile.TemporaryDirectory(prefix="corpus-kicad-", dir=scratch_parent) as scratch:
        copy = Path(scratch) / "p"
        shutil.copytree(entry.folder, copy)
        for path, data in (extra_files or {}).items():
            (copy / path).write_bytes(data)
        report = Path(scratch) / "report.json"
        inner = lambda p: ("/" + str(p.relative_to(scratch_parent.parent))) if scratch_parent else str(p)  # noqa: E731
        command = kicad_oracle.command(kind, "KICAD", Path(inner(copy / source)), Path(inner(report)),
                                       parity=entry.schematic is not None)
        command = ["nice", "-n", str(nice), *cli, *command[1:]]
        start = time.perf_counter()
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=KICAD_TIMEOUT_S,
                                  cwd=copy / str(PurePosixPath(source).parent))
        except subprocess.TimeoutExpired:
            return None, time.perf_counter() - start, f"timed out after {KICAD_TIMEOUT_S} s"
        seconds = time.perf_counter() - start
        if not report.exists():
            return None, seconds, f"exit {done.returncode}: {(done.stderr or done.stdout).strip()[-300:]}"
        return json.loads(report.read_text(encoding="utf-8")), seconds, ""


def write_report(entry: Entry, kind: str, report: dict) -> Path:
    entry.reports.mkdir(parents=True, exist_ok=True)
    for stale in (entry.reports / f"{kind}.json", entry.reports / f"{kind}.json.gz"):
        stale.unlink(missing_ok=True)
    compact = json.dumps(report, separators=(",", ":"), sort_keys=False).encode("utf-8")
    if len(compact) > GZIP_ABOVE_BYTES:
        path = entry.reports / f"{kind}.json.gz"
        path.write_bytes(gzip.compress(compact, mtime=0))
    else:
        path = entry.reports / f"{kind}.json"
        path.write_bytes(compact)
    return path


def oracle(entries: list[Entry], cli: str) -> int:
    command = kicad_cli_command(cli)
    version = kicad_oracle.kicad_version(command[0]) if len(command) == 1 else cli
    failures = 0
    for entry in entries:
        timing = {"kicad_cli": version, "load_average": round(os.getloadavg()[0], 2)}
        for kind in ("drc", "erc"):
            if (entry.board if kind == "drc" else entry.schematic) is None:
                continue
            report, seconds, problem = run_kicad(entry, kind, command)
            timing[f"{kind}_seconds"] = round(seconds, 3)
            if problem:
                timing[f"{kind}_problem"] = problem
                failures += 1
                print(f"FAILED {entry.id} {kind}: {problem}", flush=True)
                continue
            path = write_report(entry, kind, report)
            print(f"wrote  {path.relative_to(ROOT)} ({seconds:.1f} s)", flush=True)
        entry.reports.mkdir(parents=True, exist_ok=True)
        (entry.reports / "kicad.json").write_text(json.dumps(timing, indent=1) + "\n", encoding="utf-8")
    return 1 if failures else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.corpus", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("verify", help="check the cache against the manifest's hashes")
    sub.add_parser("materialize", help="(re)write the cache from the fetched repositories")
    sub.add_parser("features", help="recompute every entry's features from its cached files")
    add = sub.add_parser("add", help="take projects of a fetched repository into the corpus")
    add.add_argument("repository")
    add.add_argument("boards", nargs="+", help="the boards' paths in the repository")
    remove = sub.add_parser("remove", help="take entries out (KiCad cannot load them): manifest, reports, cache")
    remove.add_argument("ids", nargs="+")
    run = sub.add_parser("oracle", help="run kicad-cli on entries and write their reports")
    run.add_argument("--only", action="append", help="only this entry (repeatable)")
    run.add_argument("--missing", action="store_true", help="only entries without a DRC report yet")
    run.add_argument("--kicad-cli", default=shutil.which("kicad-cli") or "kicad-cli")
    args = parser.parse_args(argv)
    entries = load_manifest()
    if args.command == "verify":
        bad = 0
        for entry in entries:
            problems = verify(entry)
            bad += bool(problems)
            for problem in problems:
                print(f"{entry.id}: {problem}")
        print(f"{len(entries) - bad} of {len(entries)} entries complete in {CACHE}")
        return 1 if bad else 0
    if args.command == "materialize":
        bad = 0
        for entry in entries:
            problems = materialize(entry)
            bad += bool(problems)
            print(f"{entry.id}: {'; '.join(problems) if problems else 'ok'}")
        return 1 if bad else 0
    if args.command == "features":
        for entry in entries:
            if not verify(entry):
                entry.features = features_of({p: (entry.folder / p).read_text(encoding="utf-8", errors="replace")
                                              for p in entry.files if not p.endswith(".kicad_sym")})
        write_manifest(entries)
        return 0
    if args.command == "remove":
        for entry in [e for e in entries if e.id in args.ids]:
            shutil.rmtree(entry.reports, ignore_errors=True)
            shutil.rmtree(entry.folder, ignore_errors=True)
        write_manifest([e for e in entries if e.id not in args.ids])
        return 0
    if args.command == "add":
        known = {e.id: e for e in entries}
        for board in args.boards:
            try:
                entry = take(args.repository, board)
            except Exception as exc:    # noqa: BLE001 - one project's problem skips it alone
                print(f"skipped {args.repository}:{board}: {exc}")
                continue
            while entry.id in known and (known[entry.id].repository, known[entry.id].board) != (
                    entry.repository, entry.board):
                entry.id += "-2"
            if entry.id in known:       # taken again: its reports are of the files it had
                shutil.rmtree(entry.reports, ignore_errors=True)
            known[entry.id] = entry
            print(f"added {entry.id}: KiCad {entry.kicad_major}, {entry.copper_layers} layers, {entry.sheets} "
                  f"sheets, {entry.licence}, {','.join(entry.features)}")
        write_manifest(list(known.values()))
        return 0
    chosen = [e for e in entries if not args.only or e.id in args.only]
    if args.missing:
        chosen = [e for e in chosen if read_report(e, "drc") is None and not (e.reports / "kicad.json").exists()]
    return oracle(chosen, args.kicad_cli)


if __name__ == "__main__":
    sys.exit(main())
