"""Rule areas (keepouts): copper KiCad's rule area disallows inside it (items_not_allowed).

A rule area names what may not be in it on its layers: tracks (and arcs), vias, pads,
copper pours (zone fills) and footprints (by courtyard, else by pads). An item whose copper
overlaps the area's outline on one of its layers is reported, as KiCad's DRC does; the area's
own footprint's items are not. The outline's second and later polygons are cutouts (KiCad's
ZONE::AddPolygon), so copper wholly inside a cutout is allowed.
"""
from __future__ import annotations

import numpy as np
import shapely

from ..board import Board
from ..copper import ARC, PAD, TRACK, VIA, ZONE, Copper, layer_bits
from ..findings import Finding
from .footprint_rules import courtyard

EPSILON = 0.0005
_KINDS = {"tracks": (TRACK, ARC), "vias": (VIA,), "pads": (PAD,), "copperpour": (ZONE,)}


def check(board: Board, copper: Copper) -> list[Finding]:
    findings = []
    for zone in board.zones:
        if not zone.keepout or not zone.disallowed or len(zone.polygon) < 3:
            continue
        area = area_of(zone)
        if area.is_empty:
            continue
        mask = layer_bits(zone.layers, copper.layer_names)
        kinds = [kind for flag in zone.disallowed for kind in _KINDS.get(flag, ())]
        if kinds and len(copper):
            candidates = np.flatnonzero(np.isin(copper.kind, kinds) & ((copper.layers & mask) != 0))
            if len(candidates):
                shapely.prepare(area)
                gap = shapely.distance(area, copper.core[candidates]) - copper.radius[candidates]
                inside = candidates[gap < -EPSILON]
                seen: set[str] = set()
                for item in inside.tolist():
                    key = copper.identity(item)
                    if key in seen:
                        continue
                    seen.add(key)
                    findings.append(_finding(board, zone, copper.label(item), copper.uuid(item),
                                             copper.anchor[item], copper.where(item),
                                             copper.first_layer(int(copper.layers[item] & mask))))
        if "footprints" in zone.disallowed:
            for footprint in board.footprints:
                side = "F.CrtYd" if footprint.layer != "B.Cu" else "B.CrtYd"
                if not (layer_bits([footprint.layer or "F.Cu"], copper.layer_names) & mask):
                    continue
                shape = courtyard(footprint, side)
                if shape is not None and shapely.intersection(area, shape).area > EPSILON:
                    findings.append(_finding(board, zone, f"footprint {footprint.reference}", footprint.uuid,
                                             (footprint.x, footprint.y), (footprint.line, footprint.column),
                                             footprint.layer))
    return findings


def area_of(zone):
    """The rule area's outline with its cutouts: KiCad 9 reads every (polygon ...) after the
    first as a hole of the first (ZONE::AddPolygon), so a second polygon inside the first leaves
    only a band along the edge. An item is in the area when it overlaps it
    (DRC_ENGINE::loadImplicitRules: ``A.intersectsArea(zone)``, a collision with the outline,
    holes included)."""
    return shapely.make_valid(shapely.Polygon(zone.polygon, [hole for hole in zone.holes if len(hole) >= 3]))


def _finding(board: Board, zone, label: str, uuid: str, at, where, layer: str) -> Finding:
    name = f"rule area '{zone.name}'" if zone.name else "a rule area"
    return Finding("board.item-in-keepout", f"{label} is inside {name} that does not allow it on {layer}",
                   identity=(board.file, "keepout", zone.uuid, uuid or f"{label}@{at[0]:g},{at[1]:g}"),
                   severity="error", path=board.file, line=where[0], column=where[1], kicad_type="items_not_allowed",
                   extra={"x": round(float(at[0]), 4), "y": round(float(at[1]), 4), "layer": layer,
                          "uuids": [u for u in (uuid, zone.uuid) if u]})


def zones_intersect(board: Board) -> list[Finding]:
    """Copper zones of one net (no net being one) and one priority whose outlines (cutouts
    included) collide on a layer they share, once per pair and layer.
    KiCad 9: DRC_TEST_PROVIDER_COPPER_CLEARANCE::testZonesToZones, ``Outline()->Collide(other, 0)``
    (touching counts); rule areas may overlap at will."""
    zones = [z for z in board.zones if not z.keepout and len(z.polygon) >= 3]
    if len(zones) < 2:
        return []
    areas = [area_of(z) for z in zones]
    findings = []
    boxes = shapely.bounds(np.array(areas, dtype=object))
    for i in range(len(zones)):
        for j in range(i + 1, len(zones)):
            a, b = zones[i], zones[j]
            if a.net != b.net or a.priority != b.priority:
                continue
            if boxes[i][0] > boxes[j][2] or boxes[j][0] > boxes[i][2] or boxes[i][1] > boxes[j][3] \
                    or boxes[j][1] > boxes[i][3]:
                continue
            if areas[i].is_empty or areas[j].is_empty or not shapely.intersects(areas[i], areas[j]):
                continue
            where = shapely.intersection(areas[i], areas[j])
            x, y = (shapely.get_coordinates(shapely.point_on_surface(where))[0] if not where.is_empty
                    else shapely.get_coordinates(shapely.shortest_line(areas[i], areas[j]))[0])
            copper = board.copper_layers()
            both = set(_expand(a.layers, copper)) & set(_expand(b.layers, copper))
            for layer in [l for l in copper if l in both]:
                findings.append(Finding(
                    "board.zones-intersect",
                    f"zones {a.name or a.uuid} and {b.name or b.uuid} of net {a.net or '(no net)'} overlap on "
                    f"{layer} with the same priority {a.priority}",
                    identity=(board.file, "zones", *sorted((a.uuid, b.uuid)), layer), severity="error",
                    path=board.file, line=a.line, column=a.column, kicad_type="zones_intersect",
                    extra={"x": round(float(x), 4), "y": round(float(y), 4), "layer": layer,
                           "uuids": [u for u in (a.uuid, b.uuid) if u]}))
    return findings


def _expand(layers: list[str], copper: list[str]) -> list[str]:
    """A zone's copper layers, KiCad's wildcards (*.Cu, F&B.Cu) spelled out."""
    out = []
    for layer in layers:
        if layer == "*.Cu":
            out += copper
        elif layer == "F&B.Cu":
            out += [l for l in ("F.Cu", "B.Cu") if l in copper]
        elif layer in copper:
            out.append(layer)
    return out
