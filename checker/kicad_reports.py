"""KiCad's own ERC/DRC: run kicad-cli (8 or later) or import its JSON reports.

kicad-cli is used when it is on the PATH and ``kicad-cli version`` says 8 or
later; an older or unreadable one is reported once, at info, and otherwise
treated like none. Its exit code must be 0 and its report readable, or the
check is "unverified".

ERC reports nest violations under ``sheets``; DRC reports have
``violations``, ``unconnected_items`` and ``schematic_parity``. Each item
names the objects involved by UUID; we look those up in the parsed files to
give the finding a line. A report that is missing or unreadable is an
"unverified" finding, never a clean result.
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from .errors import HostileInputError
from .findings import Finding
from .model import ProjectModel
from .project import InputReader
from .project_settings import exclude

_SEVERITY = {"error": "error", "warning": "medium", "info": "info", "exclusion": "info"}


# KiCad 7's kicad-cli writes ERC/DRC reports as text only; JSON came with 8.
MINIMUM_KICAD_MAJOR = 8
VERSION_TIMEOUT_S = 30
CHECK_TIMEOUT_S = 600   # a large board's DRC with zone refill takes minutes, not hours


@dataclass(frozen=True)
class KicadCli:
    executable: str
    version: str


def find_kicad_cli() -> tuple[KicadCli | None, str | None]:
    """kicad-cli on the PATH: (it, None) when it is KiCad 8 or later; (None, why not)
    when it is older or its version cannot be read; (None, None) when there is none."""
    import shutil  # here, not at import: a --no-kicad-cli run never starts a process
    import subprocess

    found = shutil.which("kicad-cli")
    if not found:
        return None, None
    try:
        done = subprocess.run([found, "version"], capture_output=True, text=True, timeout=VERSION_TIMEOUT_S)
    except (OSError, subprocess.SubprocessError) as exc:
        return None, f"kicad-cli version could not run: {exc}"
    match = re.search(r"(\d+)\.\d+", done.stdout)
    if done.returncode != 0 or not match:
        return None, f"kicad-cli version said {(done.stdout or done.stderr).strip()[:80]!r} (exit {done.returncode})"
    version = done.stdout.strip().splitlines()[0]
    if int(match.group(1)) < MINIMUM_KICAD_MAJOR:
        return None, f"kicad-cli is KiCad {version}; JSON reports need KiCad {MINIMUM_KICAD_MAJOR} or later"
    return KicadCli(found, version), None


def too_old_for(cli: KicadCli, model: ProjectModel) -> str | None:
    """Why ``cli`` cannot check the model's files, when a newer KiCad wrote them (KiCad 9's kicad-cli
    refuses a KiCad 10 board as "newer than this version of KiCad"): said once, like having none."""
    from .versions import major_for

    match = re.match(r"(\d+)\.", cli.version)
    majors = ([major_for("board", model.board.version)] if model.board else []) + \
        ([major_for("schematic", v) for v in model.schematic.versions.values()] if model.schematic else [])
    newest = max((m for m in majors if m), default=None)
    if match and newest and newest > int(match.group(1)):
        return (f"kicad-cli is KiCad {cli.version}; the project's files were saved by KiCad {newest}, "
                "which it cannot read")
    return None


def check_command(kind: str, source: Path, executable: str, report: Path) -> list[str]:
    """``kicad-cli sch erc`` / ``pcb drc`` writing a JSON report; DRC also compares with the schematic."""
    command = [executable, "sch" if kind == "erc" else "pcb", kind, "--format", "json", "--output", str(report)]
    if kind == "drc":
        command.append("--schematic-parity")
    return command + [str(source)]


def run_kicad_cli(kind: str, source: Path, cli: KicadCli, scratch: Path) -> tuple[Path | None, str | None]:
    """Run one check into ``scratch``; returns (report, None) or (None, what went wrong).

    We never pass --exit-code-violations, so any exit but 0 is kicad-cli
    failing, and whatever it left behind is not trusted as a report.
    """
    import subprocess

    report = scratch / f"{kind}.json"
    try:
        done = subprocess.run(check_command(kind, source, cli.executable, report), capture_output=True,
                              text=True, timeout=CHECK_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return None, f"kicad-cli {kind} did not finish within {CHECK_TIMEOUT_S} s"
    except (OSError, subprocess.SubprocessError) as exc:
        return None, f"kicad-cli {kind} could not run: {exc}"
    said = (done.stderr or done.stdout).strip()[-300:]
    if done.returncode != 0:
        return None, f"kicad-cli {kind} exited with {done.returncode}: {said}"
    if not report.is_file():
        return None, f"kicad-cli {kind} wrote no report: {said}"
    return report, None


def cli_unusable(reason: str, model: ProjectModel) -> Finding:
    """kicad-cli is there but cannot give reports: said once, at info, like having none."""
    target = model.board.file if model.board else (model.schematic.root_file if model.schematic else model.files.name)
    return Finding("kicad.cli-unusable", f"KiCad's own ERC/DRC were not run: {reason}", identity=(target,),
                   path=target)


def import_report(kind: str, report: Path | None, model: ProjectModel, reader: InputReader,
                  error: str | None = None) -> list[Finding]:
    """Findings from one report; an unverified finding when it cannot be read."""
    rule = f"kicad.{kind}"
    target = model.schematic.root_file if kind == "erc" and model.schematic else (
        model.board.file if model.board else model.files.name)
    if report is None or error:
        return [_unverified(kind, error or "no report was produced", target)]
    try:
        data = _read_report(report, reader)
        items = list(_items(kind, data))
    except (HostileInputError, OSError, ValueError, TypeError, AttributeError) as exc:
        reason = exc.message if isinstance(exc, HostileInputError) else str(exc)
        return [_unverified(kind, f"report {report.name} is unreadable: {reason}", target)]
    scale = erc_position_scale(data) if kind == "erc" else 1.0
    findings = []
    for group, item in items:
        key = str(item.get("type") or "unknown")
        description = str(item.get("description") or key)
        places = _places(item, scale)
        uuids = [u for place in places for u in place["uuids"]]
        path, line, column = _locate(kind, uuids, model, target)
        kicad_type = key if _KICAD_TYPE.match(key) else None
        findings.append(Finding(f"{rule}.{kicad_type}" if kicad_type else rule, description,
                                identity=(target, group, key, *sorted(uuids)) if uuids
                                else (target, group, key, description),
                                severity=_SEVERITY.get(str(item.get("severity", "error")), "medium"),
                                title=f"KiCad {kind.upper()} {key}", source=f"kicad-{kind}",
                                path=path, line=line, column=column, kicad_type=kicad_type,
                                locations=places))
        if item.get("excluded") or item.get("severity") == "exclusion":
            exclude(findings[-1])
    return findings


# KiCad's settings keys; anything else in a report is kept as kicad.<kind> with its text.
_KICAD_TYPE = re.compile(r"^[a-z0-9_]{1,100}$")


def erc_position_scale(data: dict) -> float:
    """kicad-cli 9.0 writes ERC item positions at 1/100 of their value in mm
    (it divides schematic units by the board's scale); DRC positions are right."""
    version = str(data.get("kicad_version") or "")
    return 100.0 if version.startswith("9.0") else 1.0


def _places(item: dict, scale: float) -> list[dict]:
    """Each item KiCad names, as a place: its position (mm) and uuid."""
    places = []
    for named in item.get("items") or []:
        if not isinstance(named, dict):
            continue
        pos = named.get("pos") if isinstance(named.get("pos"), dict) else {}
        x, y = pos.get("x"), pos.get("y")
        uuid = named.get("uuid")
        place: dict = {"x": None, "y": None, "layer": None, "uuids": [str(uuid)] if uuid else []}
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (x, y)):
            place["x"], place["y"] = round(x * scale, 4), round(y * scale, 4)
        places.append(place)
    return places


def _read_report(report: Path, reader: InputReader) -> dict:
    # Reports may live outside the checked project (a CI artefact folder), so
    # they are read with their own bound rather than the project reader.
    size = os.stat(report).st_size
    if size > reader.limits.max_total_bytes:
        raise ValueError("report larger than the input limit")
    with open(report, "rb") as handle:
        data = json.loads(handle.read(reader.limits.max_total_bytes).decode("utf-8"))
    if not isinstance(data, dict):
        raise ValueError("a KiCad report is a JSON object")
    return data


def _items(kind: str, data: dict):
    if kind == "erc":
        sheets = data.get("sheets")
        if not isinstance(sheets, list):
            raise ValueError("an ERC report has a 'sheets' list")
        for sheet in sheets:
            for violation in sheet.get("violations") or []:
                if isinstance(violation, dict):
                    yield f"sheet {sheet.get('path', '/')}", violation
    else:
        if not any(isinstance(data.get(k), list) for k in ("violations", "unconnected_items", "schematic_parity")):
            raise ValueError("a DRC report has 'violations', 'unconnected_items' or 'schematic_parity'")
        for group in ("violations", "unconnected_items", "schematic_parity"):
            for violation in data.get(group) or []:
                if isinstance(violation, dict):
                    yield group, violation


def _locate(kind: str, uuids: list[str], model: ProjectModel, target: str) -> tuple[str, int | None, int | None]:
    for uuid in uuids:
        found = model.schematic.position_of(uuid) if kind == "erc" and model.schematic else None
        if found is not None:
            return found
        position = model.board.position_of(uuid) if kind == "drc" and model.board else None
        if position is not None:
            return model.board.file, position[0], position[1]
    return target, None, None


def _unverified(kind: str, reason: str, target: str) -> Finding:
    return Finding(f"kicad.{kind}-unverified", f"KiCad {kind.upper()} not verified: {reason}",
                   identity=(target,), source=f"kicad-{kind}", path=target)


POSITION_TOLERANCE_MM = 0.01    # KiCad's item position and ours: the same item's anchor


def merge_with_native(native: list[Finding], imported: list[Finding]) -> list[Finding]:
    """``native + imported`` where a KiCad violation a native finding already reports is one finding.

    A native finding reports a KiCad violation when both are of the same KiCad
    type and name a KiCad item in common (uuid), or, when the native finding
    names no item, sit at the same place. The native finding stays (its file
    line, measurements and every place) and takes KiCad's verdict on it: the
    more severe of the two severities, and KiCad's exclusion.
    """
    by_type: dict[str, list[Finding]] = {}
    for finding in native:
        if finding.kicad_type:
            by_type.setdefault(finding.kicad_type, []).append(finding)
    kept = list(native)
    order = ("error", "high", "medium", "low", "info")
    for finding in imported:
        twin = _twin(finding, by_type.get(finding.kicad_type or "", []))
        if twin is None:
            kept.append(finding)
            continue
        if finding.excluded:
            exclude(twin)
        elif order.index(finding.severity) < order.index(twin.severity):
            twin.severity = finding.severity
    return kept


def _twin(imported: Finding, candidates: list[Finding]) -> Finding | None:
    names = set(imported.uuids)
    places = [(p["x"], p["y"]) for p in imported.all_locations() if p.get("x") is not None]
    for finding in candidates:
        if names & set(finding.uuids):
            return finding
    for finding in candidates:
        if finding.uuids:
            continue
        for location in finding.all_locations():
            x, y = location.get("x"), location.get("y")
            if x is not None and any(abs(x - px) <= POSITION_TOLERANCE_MM and abs(y - py) <= POSITION_TOLERANCE_MM
                                     for px, py in places):
                return finding
    return None
