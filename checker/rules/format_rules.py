"""File-format rules: KiCad 5 boards (legacy) and files newer than we know (after KiCad 10)."""
from __future__ import annotations

from ..findings import Finding
from ..model import ProjectModel
from ..versions import NEWEST_MAJOR, is_too_new


def check(model: ProjectModel) -> list[Finding]:
    findings = []
    board = model.board
    if board is not None:
        if board.legacy:
            findings.append(Finding("format.legacy",
                                    f"{board.file} is a KiCad 5 board (version {board.version}); it was read, but "
                                    "KiCad 5 files lack data later rules rely on", identity=(board.file,),
                                    path=board.file, line=1, column=1))
        if is_too_new("board", board.version):
            findings.append(Finding("format.too-new", f"{board.file} has format version {board.version}, newer than "
                                    f"KiCad {NEWEST_MAJOR}; read best-effort", identity=(board.file,),
                                    path=board.file, line=1, column=1))
    if model.schematic is not None:
        for file, version in model.schematic.versions.items():
            if is_too_new("schematic", version):
                findings.append(Finding("format.too-new", f"{file} has format version {version}, newer than "
                                        f"KiCad {NEWEST_MAJOR}; read best-effort", identity=(file,), path=file,
                                        line=1, column=1))
    return findings
