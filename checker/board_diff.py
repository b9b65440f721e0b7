"""What a change did to a board: base against head, in a reviewer's words.

Footprints are matched by uuid, then by reference: one present on one side
only was added or removed; a matched one whose place, rotation or side
changed was moved; a changed value or library footprint is a change.
Inside a matched footprint, pads are matched by number (the n-th pad of a
number with the n-th): one present on one side only was added or removed; a
matched one whose size, shape, drill, offset from the footprint's origin (in
the footprint's own frame, so moving or turning the footprint is not a pad
edit), rotation, layers or net differ was changed, named "REF.NUMBER".
Copper without a lasting identity (tracks, vias, zone outlines) is matched
by its geometry: a track is the same track when its layer, width, net and
points are (either direction), so a pull request that deletes one track
shows one track removed and nothing else. Nets: added, removed, and the
pads that joined or left each net. BOM lines: by reference (value,
footprint, manufacturer, MPN, DNP).

Added items are named by their index in the head's geometry
(checker/board_view.py); removed and moved-from items carry their base
geometry, so the page draws the base under the head from the diff alone.
Checking the base and putting the comparison together: checker/base_check.py.
"""
from __future__ import annotations

from collections import defaultdict
from operator import attrgetter

from .board import Board, Footprint
from .board_view import footprint_view, pad_view, track_view, via_view, zone_view
from .findings import Finding
from .geometry import rotate

_PLACE_TOLERANCE_MM = 1e-4


def _rounded(points) -> tuple:
    return tuple((round(x, 4), round(y, 4)) for x, y in points)


def _track_key(track) -> tuple:
    points = track.points
    if len(points) == 2:   # a segment, most of a board: its two ends in either order
        (x0, y0), (x1, y1) = points
        a, b = (round(x0, 4), round(y0, 4)), (round(x1, 4), round(y1, 4))
        return (track.layer, round(track.width, 4), track.net, (a, b) if a <= b else (b, a))
    points = _rounded(points)
    return (track.layer, round(track.width, 4), track.net, min(points, points[::-1]))


def _via_key(via) -> tuple:
    return (round(via.x, 4), round(via.y, 4), round(via.diameter or 0, 4), round(via.drill or 0, 4), via.net,
            tuple(via.layers))


_ON = attrgetter("layer", "net")   # coarse keys: parts of what _track_key, _via_key and _zone_key compare
_NET = attrgetter("net")


def _zone_key(zone) -> tuple:
    return (zone.net, tuple(zone.layers), _rounded(zone.polygon))


def _match_by_key(base_items, head_items, key, coarse) -> tuple[list[int], list]:
    """(indices of head items the base lacks, base items the head lacks): a multiset
    difference by ``key``. When the base's board shares the head's items
    (checker/base_check.py builds it from them where the files agree), only the
    items whose ``coarse`` key (implied by ``key``: equal keys, equal coarse keys)
    is an unshared item's are compared: every other key's items are shared, the same
    on both sides, and neither added nor removed. The result is the same, in the
    same order."""
    shared = set(map(id, base_items)) & set(map(id, head_items))
    if not shared:
        return _difference(base_items, head_items, key)
    touched = {coarse(item) for items in (base_items, head_items) for item in items if id(item) not in shared}
    base_kept = [item for item in base_items if coarse(item) in touched]
    head_kept = [index for index, item in enumerate(head_items) if coarse(item) in touched]
    added, removed = _difference(base_kept, [head_items[index] for index in head_kept], key)
    return [head_kept[index] for index in added], removed


def _difference(base_items, head_items, key) -> tuple[list[int], list]:
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


def _pad_traits(pad, footprint: Footprint) -> dict:
    """What a reviewer compares between a pad's two versions, rounded as the views are."""
    offset = rotate((pad.x - footprint.x, pad.y - footprint.y), -footprint.rotation)
    drill = pad.drill_size or ((pad.drill, pad.drill) if pad.drill else None)
    return {"size": [round(pad.width, 4), round(pad.height, 4)], "shape": pad.shape,
            "drill": [round(drill[0], 4), round(drill[1], 4)] if drill else None,
            "offset": [round(offset[0], 4) + 0.0, round(offset[1], 4) + 0.0],
            "rotation": round((pad.rotation - footprint.rotation) % 360.0, 4) % 360.0,
            "layers": sorted(pad.layers), "net": pad.net}


def _numbered(pads) -> dict[tuple[str, int], object]:
    """Pads by (number, n-th of that number): several pads may share a number (a
    thermal pad's paste windows, unnumbered mounting holes)."""
    seen: dict[str, int] = defaultdict(int)
    keyed = {}
    for index, pad in enumerate(pads):
        keyed[(pad.number, seen[pad.number])] = (index, pad)
        seen[pad.number] += 1
    return keyed


def _pad_changes(old: Footprint, new: Footprint, head_index: int) -> list[dict]:
    """The pads a matched footprint gained, lost or changed. Added and changed name the
    pad's index in the head footprint's pads; removed and changed carry the base pad
    (pad_view) so the page draws it under the head's."""
    before, after = _numbered(old.pads), _numbered(new.pads)
    changes = []
    for key in sorted(set(before) | set(after), key=lambda k: (k[0], k[1])):
        was, now = before.get(key), after.get(key)
        entry = {"ref": new.reference, "head": head_index, "pad": key[0]}
        if was is None:
            changes.append({**entry, "change": "added", "index": now[0]})
        elif now is None:
            changes.append({**entry, "change": "removed", "base": pad_view(was[1])})
        else:
            a, b = _pad_traits(was[1], old), _pad_traits(now[1], new)
            fields = {name: [a[name], b[name]] for name in a if a[name] != b[name]}
            if fields:
                changes.append({**entry, "change": "changed", "index": now[0], "base": pad_view(was[1]),
                                "fields": fields})
    return changes


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
    moved, changed, pads = [], [], []
    for old, index in pairs:
        new = head.footprints[index]
        pads.extend(_pad_changes(old, new, index))
        if _moved(old, new):
            moved.append({"ref": new.reference, "head": index, "base": footprint_view(old),
                          "distance": round(((new.x - old.x) ** 2 + (new.y - old.y) ** 2) ** 0.5, 4)})
        for field, before, after in (("value", old.value, new.value), ("footprint", old.lib_id, new.lib_id)):
            if before != after:
                changed.append({"ref": new.reference, "head": index, "field": field, "from": before, "to": after})
    tracks_added, tracks_removed = _match_by_key(base.tracks, head.tracks, _track_key, _ON)
    vias_added, vias_removed = _match_by_key(base.vias, head.vias, _via_key, _NET)
    live_base = [z for z in base.zones if not z.keepout and len(z.polygon) > 2]
    live_head = [z for z in head.zones if not z.keepout and len(z.polygon) > 2]
    zones_added, zones_removed = _match_by_key(live_base, live_head, _zone_key, _NET)
    return {
        "footprints": {"added": added, "removed": [footprint_view(f) for f in removed],
                       "moved": moved, "changed": changed, "pads": pads},
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
    lines.extend(pad_lines(fps.get("pads", [])))
    for kind, word in (("tracks", "track"), ("vias", "via"), ("zones", "zone")):
        if board[kind]["added"]:
            lines.append(f"{_plural(len(board[kind]['added']), word)} added")
        if board[kind]["removed"]:
            lines.append(f"{_plural(len(board[kind]['removed']), word)} removed")
    nets = board["nets"]
    count = len(nets["added"]) + len(nets["removed"]) + len(nets["changed"])
    lines.append(f"{_plural(count, 'net')} changed" if count else "No net changed")
    return lines + (bom_summary(bom) if bom is not None else [])


def _shown(name: str, value) -> str:
    if value is None:
        return "none"
    if name == "layers":
        return " ".join(value)
    if isinstance(value, list):
        return " × ".join(f"{v:g}" for v in value) if name != "offset" else "(" + ", ".join(f"{v:g}" for v in value) + ")"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value) or '""'


def pad_line(change: dict) -> str:
    """One pad edit in a reviewer's words: "C2 pad 2 changed: size 1.6 × 1.6 → 2.4 × 2.4 mm"."""
    name = f"{change['ref']} pad {change['pad'] or '(unnumbered)'}"
    if change["change"] != "changed":
        return f"{name} {change['change']}"
    parts = []
    for field, (before, after) in change["fields"].items():
        unit = " mm" if field in ("size", "drill", "offset") else "°" if field == "rotation" else ""
        parts.append(f"{field} {_shown(field, before)} → {_shown(field, after)}{unit}")
    return f"{name} changed: " + "; ".join(parts)


_PAD_LINES = 20   # a library update can touch every pad of a part: the rest is counted, and drawn


def pad_lines(pads: list[dict]) -> list[str]:
    lines = [pad_line(change) for change in pads[:_PAD_LINES]]
    if len(pads) > _PAD_LINES:
        lines.append(f"… and {_plural(len(pads) - _PAD_LINES, 'more pad edit')}")
    return lines


def bom_summary(bom: dict) -> list[str]:
    count = len(bom["added"]) + len(bom["removed"]) + len(bom["changed"])
    return [f"{_plural(count, 'BOM line')} changed" if count else "No BOM line changed"]


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
