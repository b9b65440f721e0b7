"""Footprint checks KiCad's DRC makes: courtyards that overlap (courtyards_overlap) and a
footprint type that its pads contradict (footprint_type_mismatch)."""
from __future__ import annotations

import numpy as np
import shapely

from ..board import Board, Footprint
from ..findings import Finding

# KiCad 9 shrinks every courtyard by its polygonization error before testing them
# (FOOTPRINT::BuildCourtyardCaches: "Touching courtyards ... are legal", Inflate(-maxError));
# two courtyards overlap when the shrunk ones still touch: kicad-cli 9.0.8 reports an overlap
# 0.01 mm deep and not one 0.0099 mm deep, whatever its area (0.03 x 0.03 mm is reported).
COURTYARD_SHRINK = 0.005
# Touching on KiCad's nanometre grid, less our float noise.
TOUCHING = 1e-7

# Pads KiCad leaves out when it guesses a footprint's type (FOOTPRINT::GetLikelyAttribute).
_NOT_COUNTED = frozenset(("pad_prop_fiducial_glbl", "pad_prop_fiducial_local", "pad_prop_heatsink",
                          "pad_prop_castellated", "pad_prop_mechanical"))


def check(board: Board) -> list[Finding]:
    return _courtyards_overlap(board) + _type_mismatch(board)


def courtyard(footprint: Footprint, side: str):
    """The footprint's courtyard on one side as a polygon (its shapes' outlines closed into
    areas), None when it has none or its lines close no area."""
    lines = [shapely.LineString(points) for points in footprint.courtyards.get(side, ()) if len(points) >= 2]
    if not lines:
        return None
    areas = shapely.get_parts(shapely.polygonize(shapely.get_parts(shapely.union_all(lines))))
    if not len(areas):
        return None
    area = shapely.union_all(areas)
    return None if area.is_empty else area


def _courtyards_overlap(board: Board) -> list[Finding]:
    findings = []
    for side in ("F.CrtYd", "B.CrtYd"):
        # Boxes of the courtyards' points first: only footprints whose boxes overlap another's
        # get their courtyard made into an area.
        owners = [f for f in board.footprints if f.courtyards.get(side)]
        if len(owners) < 2:
            continue
        boxes = np.array([_box(f.courtyards[side]) for f in owners])
        tree = shapely.STRtree(shapely.box(boxes[:, 0], boxes[:, 1], boxes[:, 2], boxes[:, 3]))
        first, second = tree.query(shapely.box(boxes[:, 0], boxes[:, 1], boxes[:, 2], boxes[:, 3]))
        keep = first < second
        first, second = first[keep], second[keep]
        areas: dict[int, object] = {}
        for index in set(first.tolist()) | set(second.tolist()):
            areas[index] = courtyard(owners[index], side)
        shrunk = {index: area.buffer(-COURTYARD_SHRINK, join_style="mitre") if area is not None else None
                  for index, area in areas.items()}
        # KiCad 9: DRC_TEST_PROVIDER_COURTYARD_CLEARANCE collides the shrunk courtyards at clearance
        # 0 (touching counts).
        keep = np.array([shrunk[i] is not None and shrunk[j] is not None and not shrunk[i].is_empty
                         and not shrunk[j].is_empty and shapely.distance(shrunk[i], shrunk[j]) <= TOUCHING
                         for i, j in zip(first.tolist(), second.tolist())], dtype=bool)
        shapes = np.array([areas.get(i) for i in range(len(owners))], dtype=object)
        for i, j in zip(first[keep].tolist(), second[keep].tolist()):
            overlap = shapely.intersection(shapes[i], shapes[j])
            a, b = owners[i], owners[j]
            (x, y) = shapely.get_coordinates(shapely.point_on_surface(overlap))[0]
            names = sorted((a.reference or a.lib_id, b.reference or b.lib_id))
            findings.append(Finding(
                "board.courtyards-overlap",
                f"the courtyards of {names[0]} and {names[1]} overlap on {side} ({overlap.area:.3g} mm2)",
                identity=(board.file, "courtyard", *sorted((a.uuid or a.reference, b.uuid or b.reference))),
                severity="error", path=board.file, line=a.line, column=a.column, kicad_type="courtyards_overlap",
                extra={"x": round(float(x), 4), "y": round(float(y), 4), "layer": side,
                       "uuids": [u for u in (a.uuid, b.uuid) if u]}))
    return findings


def _box(polylines: list) -> tuple[float, float, float, float]:
    points = np.concatenate([np.asarray(p, dtype=np.float64).reshape(-1, 2) for p in polylines])
    return (*points.min(axis=0), *points.max(axis=0))


def likely_type(footprint: Footprint) -> str:
    """KiCad's guess from the pads: through-hole when any plated hole, else SMD when any surface
    pad on copper, else none (fiducial, heatsink, castellated and mechanical pads left out)."""
    through = smd = 0
    for pad in footprint.pads:
        if pad.properties & _NOT_COUNTED or pad.castellated:
            continue
        if pad.kind == "thru_hole":
            through += 1
        elif pad.kind == "smd" and any(layer.endswith(".Cu") for layer in pad.layers):
            smd += 1
    return "through_hole" if through else "smd" if smd else ""


def _type_mismatch(board: Board) -> list[Finding]:
    findings = []
    for footprint in board.footprints:
        expected = likely_type(footprint)
        if not expected:
            continue
        actual = "smd" if "smd" in footprint.attributes else "through_hole" if "through_hole" in footprint.attributes \
            else ""
        if actual == expected or not actual:
            continue   # typed "other" (neither SMD nor through hole): KiCad does not second-guess it
        words = {"smd": "SMD", "through_hole": "through hole", "": "other"}
        where = footprint.reference or footprint.lib_id
        findings.append(Finding(
            "board.footprint-type-mismatch",
            f"{where} is typed {words[actual]} but its pads make it {words[expected]}",
            identity=(board.file, "type", footprint.uuid or where), severity="error", path=board.file,
            line=footprint.line, column=footprint.column, kicad_type="footprint_type_mismatch",
            extra={"x": footprint.x, "y": footprint.y, "layer": footprint.layer,
                   "uuids": [footprint.uuid] if footprint.uuid else []}))
    return findings
