"""What a change did to a board: base against head, in a reviewer's words.

Footprints are matched by uuid, then by reference: one present on one side
only was added or removed; a matched one whose place, rotation or side
changed was moved; a changed value or library footprint is a change.
Copper without a lasting identity (tracks, vias, zone outlines) is matched
by its geometry: a track is the same track when its layer, width, net and
points are (either direction), so a pull request that deletes one track
shows one track removed and nothing else. Nets: added, removed, and the
pads that joined or left each net. BOM lines: by reference (value,
footprint, manufacturer, MPN, DNP).

Added items are named by their index in the head's geometry
(checker/board_view.py); removed and moved-from items carry their base
geometry, so the page draws the base under the head from the diff alone.
"""
from __future__ import annotations

import math
import multiprocessing
import os
import threading
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

from .board import Board, Footprint
from .board_view import board_geometry, footprint_view, track_view, via_view, zone_view
from .findings import Finding
from .project import KICAD_SUFFIXES
from .schematic_diff import diff_schematic, schematic_state
from .schematic_view import changed_sheets
from .schematic_diff import summary as schematic_summary

_PLACE_TOLERANCE_MM = 1e-4


def _rounded(points) -> tuple:
    return tuple((round(x, 4), round(y, 4)) for x, y in points)


def _track_key(track) -> tuple:
    points = _rounded(track.points)
    return (track.layer, round(track.width, 4), track.net, min(points, points[::-1]))


def _via_key(via) -> tuple:
    return (round(via.x, 4), round(via.y, 4), round(via.diameter or 0, 4), round(via.drill or 0, 4), via.net,
            tuple(via.layers))


def _zone_key(zone) -> tuple:
    return (zone.net, tuple(zone.layers), _rounded(zone.polygon))


def _match_by_key(base_items, head_items, key) -> tuple[list[int], list]:
    """(indices of head items the base lacks, base items the head lacks): a multiset difference."""
    waiting: dict[tuple, list] = defaultdict(list)
    for item in base_items:
        waiting[key(item)].append(item)
    added = []
    for index, item in enumerate(head_items):
        same = waiting.get(key(item))
        if same:
            same.pop()
        else:
            added.append(index)
    removed = [item for items in waiting.values() for item in items]
    return added, removed


def _match_footprints(base: list[Footprint], head: list[Footprint]) -> tuple[list[tuple[Footprint, int]], list[int], list[Footprint]]:
    """(matched (base footprint, head index) pairs, added head indices, removed base footprints)."""
    unmatched_base = list(base)
    pairs: list[tuple[Footprint, int]] = []
    pending: list[int] = []
    by_uuid = {f.uuid: f for f in base if f.uuid}
    for index, footprint in enumerate(head):
        twin = by_uuid.pop(footprint.uuid, None) if footprint.uuid else None
        if twin is not None:
            pairs.append((twin, index))
            unmatched_base.remove(twin)
        else:
            pending.append(index)
    by_reference = {f.reference: f for f in unmatched_base if f.reference}
    added = []
    for index in pending:
        twin = by_reference.pop(head[index].reference, None) if head[index].reference else None
        if twin is not None:
            pairs.append((twin, index))
            unmatched_base.remove(twin)
        else:
            added.append(index)
    return pairs, added, unmatched_base


def _moved(base: Footprint, head: Footprint) -> bool:
    return (abs(base.x - head.x) > _PLACE_TOLERANCE_MM or abs(base.y - head.y) > _PLACE_TOLERANCE_MM
            or abs((base.rotation - head.rotation) % 360.0) > 1e-6 or base.layer != head.layer)


def _pad_nets(footprints) -> dict[tuple[str, str], str]:
    nets = {}
    for footprint in footprints:
        for pad in footprint.pads:
            if pad.net and pad.number:
                nets[(footprint.reference, pad.number)] = pad.net
    return nets


def _net_changes(base: Board, head: Board) -> dict:
    base_names = {n for n in base.nets.values() if n}
    head_names = {n for n in head.nets.values() if n}
    before, after = _pad_nets(base.footprints), _pad_nets(head.footprints)
    joined: dict[str, list[str]] = defaultdict(list)
    left: dict[str, list[str]] = defaultdict(list)
    for pad in sorted(set(before) | set(after)):
        old, new = before.get(pad), after.get(pad)
        if old == new:
            continue
        name = f"{pad[0]}.{pad[1]}"
        if new:
            joined[new].append(name)
        if old:
            left[old].append(name)
    changed = [{"net": net, "joined": joined.get(net, []), "left": left.get(net, [])}
               for net in sorted(set(joined) | set(left))]
    return {"added": sorted(head_names - base_names), "removed": sorted(base_names - head_names), "changed": changed}


def diff_boards(base: Board | None, head: Board | None) -> dict:
    """The board's changes; a side that has no board counts as empty."""
    base = base or Board(file="", version=None, legacy=False)
    head = head or Board(file="", version=None, legacy=False)
    pairs, added, removed = _match_footprints(base.footprints, head.footprints)
    moved, changed = [], []
    for old, index in pairs:
        new = head.footprints[index]
        if _moved(old, new):
            moved.append({"ref": new.reference, "head": index, "base": footprint_view(old),
                          "distance": round(((new.x - old.x) ** 2 + (new.y - old.y) ** 2) ** 0.5, 4)})
        for field, before, after in (("value", old.value, new.value), ("footprint", old.lib_id, new.lib_id)):
            if before != after:
                changed.append({"ref": new.reference, "head": index, "field": field, "from": before, "to": after})
    tracks_added, tracks_removed = _match_by_key(base.tracks, head.tracks, _track_key)
    vias_added, vias_removed = _match_by_key(base.vias, head.vias, _via_key)
    live_base = [z for z in base.zones if not z.keepout and len(z.polygon) > 2]
    live_head = [z for z in head.zones if not z.keepout and len(z.polygon) > 2]
    zones_added, zones_removed = _match_by_key(live_base, live_head, _zone_key)
    return {
        "footprints": {"added": added, "removed": [footprint_view(f) for f in removed],
                       "moved": moved, "changed": changed},
        "tracks": {"added": tracks_added, "removed": [track_view(t) for t in tracks_removed]},
        "vias": {"added": vias_added, "removed": [via_view(v) for v in vias_removed]},
        "zones": {"added": zones_added, "removed": [zone_view(z) for z in zones_removed]},
        "nets": _net_changes(base, head),
    }


_BOM_FIELDS = ("value", "footprint", "manufacturer", "mpn", "dnp")


def _bom_by_reference(lines: list[dict]) -> dict[str, dict]:
    parts = {}
    for line in lines:
        for reference in line.get("references", []):
            parts[(line.get("project") or "", reference)] = {k: line.get(k, False if k == "dnp" else "")
                                                           for k in _BOM_FIELDS}
    return parts


def diff_bom(base_lines: list[dict], head_lines: list[dict]) -> dict:
    before, after = _bom_by_reference(base_lines), _bom_by_reference(head_lines)
    changed = []
    for key in sorted(set(before) & set(after)):
        fields = {k: [before[key][k], after[key][k]] for k in _BOM_FIELDS if before[key][k] != after[key][k]}
        if fields:
            changed.append({"ref": key[1], "changes": fields})
    return {"added": [{"ref": k[1], **after[k]} for k in sorted(set(after) - set(before))],
            "removed": [{"ref": k[1], **before[k]} for k in sorted(set(before) - set(after))],
            "changed": changed}


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def summary(board: dict, bom: dict | None) -> list[str]:
    """The diff in the words a hardware reviewer uses, one line per kind of change."""
    lines = []
    fps = board["footprints"]
    if fps["added"]:
        lines.append(f"{_plural(len(fps['added']), 'footprint')} added")
    if fps["removed"]:
        lines.append(f"{_plural(len(fps['removed']), 'footprint')} removed: "
                     + ", ".join(f["ref"] for f in fps["removed"]))
    if fps["moved"]:
        lines.append(f"{_plural(len(fps['moved']), 'footprint')} moved: "
                     + ", ".join(f"{m['ref']} ({m['distance']:g} mm)" for m in fps["moved"]))
    for change in fps["changed"]:
        lines.append(f"{change['ref']}: {change['field']} {change['from']} → {change['to']}")
    for kind, word in (("tracks", "track"), ("vias", "via"), ("zones", "zone")):
        if board[kind]["added"]:
            lines.append(f"{_plural(len(board[kind]['added']), word)} added")
        if board[kind]["removed"]:
            lines.append(f"{_plural(len(board[kind]['removed']), word)} removed")
    nets = board["nets"]
    count = len(nets["added"]) + len(nets["removed"]) + len(nets["changed"])
    lines.append(f"{_plural(count, 'net')} changed" if count else "No net changed")
    if bom is not None:
        count = len(bom["added"]) + len(bom["removed"]) + len(bom["changed"])
        lines.append(f"{_plural(count, 'BOM line')} changed" if count else "No BOM line changed")
    return lines


def change_count(board: dict) -> int:
    return sum(len(board[kind][side]) for kind in ("footprints", "tracks", "vias", "zones")
               for side in board[kind] if side != "changed") + len(board["footprints"]["changed"])


def mark_new(findings: list[Finding], base_fingerprints: list[str]) -> None:
    """Each of the checker's own findings is new or existing against the base commit,
    by fingerprint. KiCad's (imported or run) are left unmarked: the base is not
    given to KiCad, so whether they are new is not known."""
    known = set(base_fingerprints)
    for finding in findings:
        if finding.source == "boardready":
            finding.baseline = "existing" if finding.fingerprint in known else "new"


class BaseCheck:
    """The base commit's checkout, checked the same way as the head (``check`` is the
    runner's), for the diff and for which findings are new.

    Checking the base is a second whole check, so it runs beside the head's: in a
    forked process started before the head is read, on a machine with a core to
    spare (and no other thread that a fork could catch holding a lock). Otherwise,
    or when the fork fails, it runs in this process when asked for. A base without
    the project (the pull request adds it) compares with nothing."""

    def __init__(self, check, options, root: Path, target: Path):
        base_root = Path(os.path.abspath(options.base))
        # KiCad's own reports are the head's (or slow to make again): the base is checked
        # by the checker's own rules only, and only those findings are marked new or existing.
        self._options = replace(options, path=base_root / os.path.relpath(target, root), root=base_root,
                                base=None, baseline=None, progress=None, erc_report=None, drc_report=None,
                                run_kicad_cli=False)
        self._check = check
        self._root = Path(os.path.abspath(root))
        self._child = None
        self._pipe = None
        # A change that left every KiCad file as it was (firmware, docs) needs no second check.
        self.unchanged = _same_inputs(self._root, target, base_root, self._options.path)
        if self.unchanged:
            return
        if (os.cpu_count() or 1) > 1 and threading.active_count() == 1 and hasattr(os, "fork"):
            try:
                context = multiprocessing.get_context("fork")
                self._pipe, sending = context.Pipe(duplex=False)
                self._child = context.Process(target=self._send, args=(sending,), daemon=True)
                self._child.start()
                sending.close()
            except OSError:
                self._child = None

    def _checked(self) -> dict:
        """What the comparison needs of the base: its boards, finding fingerprints,
        BOM lines and schematic (symbols and sheet digests)."""
        from .errors import NoProjectFound

        try:
            base = self._check(self._options)
        except NoProjectFound:
            return {"boards": [], "fingerprints": [], "bom": [], "schematic": schematic_state(None, self._root)}
        return {"boards": [m.board for m in base.models if m.board is not None],
                "fingerprints": [f.fingerprint for f in base.findings], "bom": base.result.get("bom", []),
                "schematic": schematic_state(_first_schematic(base.models), self._options.root)}

    def _send(self, pipe) -> None:
        try:
            pipe.send(("ok", self._checked()))
        except BaseException as exc:   # the parent re-raises it; the child only reports
            pipe.send(("error", exc))
        finally:
            pipe.close()

    def result(self) -> dict:
        if self._child is not None:
            try:
                outcome, value = self._pipe.recv()
            except EOFError:   # the child died without a word: check here instead
                outcome, value = "ok", self._checked()
            finally:
                self._child.join()
                self._pipe.close()
            if outcome == "error":
                raise value
            return value
        return self._checked()

    def compare(self, bom_of, limits, models, findings: list[Finding]) -> dict:
        head_bom = bom_of(models, limits)
        if self.unchanged:
            base = {"boards": [m.board for m in models if m.board is not None],
                    "fingerprints": [f.fingerprint for f in findings], "bom": head_bom,
                    "schematic": schematic_state(_first_schematic(models), self._root)}
        else:
            base = self.result()
        return compare(models, base, head_bom, findings, self._root)


_INPUT_NAMES = (".boardready.toml", "fp-lib-table", "sym-lib-table")
_MAX_COMPARED_FILES = 500


def _kicad_files(root: Path, target: Path) -> dict[str, Path] | None:
    """The files a check of ``target`` can read, by path relative to ``root``; None when
    there are too many to compare cheaply."""
    files = {}
    config = root / ".boardready.toml"
    if config.is_file():
        files[".boardready.toml"] = config
    folder = target if target.is_dir() else target.parent
    for where, _, names in os.walk(folder):
        for name in names:
            if name.endswith(KICAD_SUFFIXES) or name in _INPUT_NAMES:
                path = Path(where) / name
                files[os.path.relpath(path, root)] = path
                if len(files) > _MAX_COMPARED_FILES:
                    return None
    return files


def _same_inputs(root: Path, target: Path, base_root: Path, base_target: Path) -> bool:
    """Whether the base has exactly the head's KiCad files, byte for byte."""
    if not base_target.exists():
        return False
    head, base = _kicad_files(root, target), _kicad_files(base_root, base_target)
    if head is None or base is None or head.keys() != base.keys():
        return False
    try:
        return all(head[name].read_bytes() == base[name].read_bytes() for name in head)
    except OSError:
        return False


def _first_schematic(models):
    return next((m.schematic for m in models if m.schematic is not None), None)


def compare(models, base: dict, head_bom: list[dict], findings: list[Finding], root: Path) -> dict:
    """The comparison the report and the run page draw: each head board with its base
    twin, the BOM and the schematic; ``base`` is what BaseCheck found in the base."""
    mark_new(findings, base["fingerprints"])
    base_boards = {board.file: board for board in base["boards"]}
    boards = []
    for model in models:
        if model.board is None:
            continue
        board = diff_boards(base_boards.get(model.board.file), model.board)
        boards.append({"file": model.board.file, "diff": board})
    bom = diff_bom(base["bom"], head_bom)
    schematic = diff_schematic(base["schematic"], schematic_state(_first_schematic(models), root))
    lines = summary(boards[0]["diff"], bom) if boards else summary_bom_only(bom)
    return {"boards": boards, "bom": bom, "schematic": schematic, "summary": lines + schematic_summary(schematic)}


def summary_bom_only(bom: dict) -> list[str]:
    count = len(bom["added"]) + len(bom["removed"]) + len(bom["changed"])
    return [f"{_plural(count, 'BOM line')} changed" if count else "No BOM line changed"]


MAX_NAMED = 16   # items a selected finding outlines


def _place_of(finding: Finding) -> tuple[float, float, str | None] | None:
    """Where the finding's pin goes: its own place, else the first of its places."""
    places = finding.all_locations() if hasattr(finding, "all_locations") else []
    candidates = [(finding.extra.get("x"), finding.extra.get("y"), finding.extra.get("layer"))]
    candidates += [(p.get("x"), p.get("y"), p.get("layer")) for p in places]
    for x, y, layer in candidates:
        if isinstance(x, (int, float)) and isinstance(y, (int, float)) and math.isfinite(x) and math.isfinite(y):
            return x, y, layer
    return None


def _named(finding: Finding) -> list[str]:
    return list(getattr(finding, "uuids", None) or finding.extra.get("uuids") or [])


def geometry_document(models, findings: list[Finding], comparison: dict | None) -> dict:
    """What the drawing script reads: the first board's geometry, its diff against
    the base (when a base was checked), the schematic sheets the change touched,
    and the findings, with their places on the board or a drawn sheet."""
    model = next((m for m in models if m.board is not None), None)
    document: dict = {"version": 1, "board": board_geometry(model.board) if model else None}
    drawn = {model.board.file} if model is not None else set()
    if comparison is not None:
        document["summary"] = comparison["summary"]
        document["bom"] = comparison["bom"]
        document["schematic"] = comparison["schematic"]
        if model is not None:
            document["diff"] = next((b["diff"] for b in comparison["boards"] if b["file"] == model.board.file), None)
        document["sheets"] = changed_sheets(_first_schematic(models), comparison)
        drawn |= {sheet["view"]["file"] for sheet in document["sheets"]}
    pins = []
    for finding in findings:
        place = _place_of(finding)
        pin = {"fingerprint": finding.fingerprint, "ruleId": finding.rule_id, "severity": finding.severity,
               "title": finding.title or finding.rule_id, "message": finding.message[:500],
               "baseline": finding.baseline, "waived": finding.waived}
        if place is not None and finding.path in drawn:
            pin.update(path=finding.path, x=round(float(place[0]), 4), y=round(float(place[1]), 4),
                       layer=place[2], uuids=_named(finding)[:MAX_NAMED])
        pins.append(pin)
    document["findings"] = pins
    return document
