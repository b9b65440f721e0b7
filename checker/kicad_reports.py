"""KiCad's own ERC/DRC: run kicad-cli (8 or later) or import its JSON reports.

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
import shutil
import subprocess
import tempfile
from pathlib import Path

from .errors import HostileInputError
from .findings import Finding
from .model import ProjectModel
from .project import InputReader

_SEVERITY = {"error": "error", "warning": "medium", "info": "info", "exclusion": "info"}


def kicad_cli() -> str | None:
    """kicad-cli on the PATH, if it is KiCad 8 or later (7 has no JSON reports)."""
    found = shutil.which("kicad-cli")
    if not found:
        return None
    try:
        out = subprocess.run([found, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    match = re.match(r"\s*(\d+)", out)
    return found if match and int(match.group(1)) >= 8 else None


def run_kicad_cli(kind: str, source: Path, cli: str) -> tuple[Path | None, str | None]:
    """Run ``kicad-cli sch erc`` or ``pcb drc`` with JSON output; returns (report, error)."""
    out = Path(tempfile.mkdtemp(prefix="boardready-")) / f"{kind}.json"
    command = [cli, "sch" if kind == "erc" else "pcb", kind, "--format", "json", "--output", str(out), str(source)]
    if kind == "drc":
        command.insert(-1, "--schematic-parity")
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.SubprocessError) as exc:
        return None, f"kicad-cli failed to run: {exc}"
    if not out.exists():
        return None, f"kicad-cli {kind} wrote no report (exit {done.returncode}): {done.stderr.strip()[:300]}"
    return out, None


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
    findings = []
    for group, item in items:
        if item.get("excluded"):
            continue
        key = str(item.get("type") or "unknown")
        description = str(item.get("description") or key)
        uuids = [str(i.get("uuid")) for i in item.get("items") or [] if isinstance(i, dict) and i.get("uuid")]
        path, line, column = _locate(kind, uuids, model, target)
        findings.append(Finding(rule, f"{description} [{group}: {key}]", identity=(target, group, key, *sorted(uuids)) if uuids
                                else (target, group, key, description),
                                severity=_SEVERITY.get(str(item.get("severity", "error")), "medium"),
                                title=f"KiCad {kind.upper()} {key}", source=f"kicad-{kind}",
                                path=path, line=line, column=column))
    return findings


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
        if kind == "erc" and model.schematic and uuid in model.schematic.uuids:
            return model.schematic.uuids[uuid]
        if kind == "drc" and model.board and uuid in model.board.uuids:
            line, column = model.board.uuids[uuid]
            return model.board.file, line, column
    return target, None, None


def _unverified(kind: str, reason: str, target: str) -> Finding:
    return Finding(f"kicad.{kind}-unverified", f"KiCad {kind.upper()} not verified: {reason}",
                   identity=(target,), source=f"kicad-{kind}", path=target)
