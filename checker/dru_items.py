"""The board's copper items as a custom rule condition sees them (``A.<property>``,
``A.<function>()`` of checker/dru_expr.py), with KiCad 9's values for each property:

* ``Type``: Track (segments and arcs), Via, Pad, Zone, Graphic;
* ``Pad_Type``: Through-hole, SMD, Edge connector, NPTH, mechanical (PAD_ATTRIB's names);
* ``Pad_Shape``: Circle, Rectangle, Oval, Trapezoid, Rounded rectangle, Chamfered rectangle, Custom;
* ``Fabrication_Property``: None, BGA pad, Fiducial, global to board, Fiducial, local to
  footprint, Test point pad, Heatsink pad, Castellated pad, Mechanical pad;
* ``Via_Type``: Through, Blind/buried, Micro;
* sizes in mm (``Width`` of a track, ``Diameter``/``Hole`` of a via, ``Size_X``/``Hole_Size_X`` of a pad);
* ``Reference``, ``Value``, ``Library_Link`` are footprints' properties: undefined on a pad
  (KiCad 9 looks a property up on the item itself only).

A property an item does not have is undefined (None / NaN), as in KiCad.
"""
from __future__ import annotations

import fnmatch

import numpy as np
import shapely

from .dru_expr import ConditionError, ItemSet
from .rules.footprint_rules import courtyard

_KIND_NAMES = ("Track", "Track", "Via", "Pad", "Zone", "Graphic")    # copper.py's TRACK ARC VIA PAD ZONE SHAPE
_PAD_TYPE = {"thru_hole": "Through-hole", "smd": "SMD", "connect": "Edge connector", "np_thru_hole": "NPTH, mechanical"}
_PAD_SHAPE = {"circle": "Circle", "rect": "Rectangle", "oval": "Oval", "trapezoid": "Trapezoid",
              "roundrect": "Rounded rectangle", "chamfered_rect": "Chamfered rectangle", "custom": "Custom"}
_FABRICATION = {"pad_prop_bga": "BGA pad", "pad_prop_fiducial_glob": "Fiducial, global to board",
                "pad_prop_fiducial_glbl": "Fiducial, global to board",
                "pad_prop_fiducial_loc": "Fiducial, local to footprint", "pad_prop_testpoint": "Test point pad",
                "pad_prop_heatsink": "Heatsink pad", "pad_prop_castellated": "Castellated pad",
                "pad_prop_mechanical": "Mechanical pad"}
_VIA_TYPE = {"through": "Through", "blind": "Blind/buried", "micro": "Micro"}


def _pad_of(owner):
    return owner[1] if isinstance(owner, tuple) and len(owner) == 2 and hasattr(owner[1], "number") else None


def _footprint_of(owner):
    return owner[0] if _pad_of(owner) is not None else None


def item_value(owner, kind: int, name: str, net: str, netclass: str, layer: str):
    """One item's value of a property (checker name, see dru_expr.PROPERTIES); None: undefined."""
    pad = _pad_of(owner)
    if name == "type":
        return _KIND_NAMES[kind] if 0 <= kind < len(_KIND_NAMES) else None
    if name == "net":
        return net
    if name == "netclass":
        return netclass
    if name == "layer":
        return layer
    if name == "width":
        width = getattr(owner, "width", None) if _KIND_NAMES[kind] == "Track" else None
        return width
    if name == "diameter":
        return getattr(owner, "diameter", None) if _KIND_NAMES[kind] == "Via" else None
    if name == "hole":
        if _KIND_NAMES[kind] == "Via":
            return getattr(owner, "drill", None)
        return None
    if pad is not None:
        if name in ("hole_x", "hole_y"):
            if pad.drill_size:
                return pad.drill_size[0 if name == "hole_x" else 1]
            return pad.drill if pad.drill else 0.0
        if name == "size_x":
            return pad.width
        if name == "size_y":
            return pad.height
        if name == "pad_type":
            return _PAD_TYPE.get(pad.kind)
        if name == "pad_shape":
            if pad.shape == "roundrect" and pad.chamfer:
                return "Chamfered rectangle"
            return _PAD_SHAPE.get(pad.shape)
        if name == "number":
            return pad.number
        if name == "fabrication_property":
            if pad.castellated:
                return "Castellated pad"
            for prop in pad.properties:
                if prop in _FABRICATION:
                    return _FABRICATION[prop]
            return "None"
        if name == "pin_type":
            return pad.pin_type or None
    if name == "via_type" and _KIND_NAMES[kind] == "Via":
        return _VIA_TYPE.get(getattr(owner, "via_type", "through"), "Through")
    if name == "zone_name" and _KIND_NAMES[kind] == "Zone":
        zone = owner[0] if isinstance(owner, tuple) else owner
        return getattr(zone, "name", None)
    return None         # reference, value, library_link: footprints' own (not a copper item)


class CopperItems(ItemSet):
    """One side of a condition over copper items ``items`` (indices into ``copper``), checked
    on the layer masks ``layers``."""

    def __init__(self, copper, rules, items: np.ndarray, layers: np.ndarray, class_names, board=None):
        self.copper = copper
        self.rules = rules
        self.items = np.asarray(items)
        self.layers = np.asarray(layers)
        self.class_names = class_names
        self.board = board
        self.size = len(self.items)
        self._cache: dict[str, np.ndarray] = {}

    def _per_item(self, name: str) -> np.ndarray:
        """The property over every copper item (computed once per item that is asked for)."""
        column = self._cache.get(name)
        if column is not None:
            return column
        copper = self.copper
        values = np.empty(len(copper), dtype=object)
        for index in np.unique(self.items):
            net = copper.net_names[copper.net[index]]
            values[index] = item_value(copper.owner[index], int(copper.kind[index]), name, net,
                                       self.class_names[copper.net[index]], copper.first_layer(int(copper.layers[index])))
        self._cache[name] = values
        return values

    def value(self, name: str):
        if name == "layer":
            return self.layer()
        values = self._per_item(name)[self.items]
        if name in ("width", "diameter", "hole", "hole_x", "hole_y", "size_x", "size_y"):
            return np.array([np.nan if v is None else float(v) for v in values], dtype=float)
        return values

    def layer(self):
        copper = self.copper
        return np.array([copper.first_layer(int(mask)) for mask in self.layers], dtype=object)

    def call(self, name: str, args: tuple, other: ItemSet):
        copper = self.copper
        if name == "is_plated":
            return np.array([_is_plated(copper.owner[i], int(copper.kind[i])) for i in self.items], dtype=bool)
        if name == "exists_on_layer":
            pattern = (args[0] if args else "").lower()
            return np.array([any(fnmatch.fnmatchcase(layer.lower(), pattern)
                                 for layer in copper.layer_list(int(copper.layers[i]))) for i in self.items], dtype=bool)
        if name == "is_micro_via":
            return np.array([getattr(copper.owner[i], "via_type", "") == "micro" for i in self.items], dtype=bool)
        if name == "is_blind_buried_via":
            return np.array([getattr(copper.owner[i], "via_type", "") == "blind" for i in self.items], dtype=bool)
        if name == "member_of_footprint":
            pattern = (args[0] if args else "").lower()
            # A reference, or with a ':' a library identifier (LibName:FootprintName), wildcards either way.
            return np.array([_footprint_of(copper.owner[i]) is not None
                             and (fnmatch.fnmatchcase((_footprint_of(copper.owner[i]).reference or "").lower(), pattern)
                                  or (":" in pattern and fnmatch.fnmatchcase(
                                      (_footprint_of(copper.owner[i]).lib_id or "").lower(), pattern)))
                             for i in self.items], dtype=bool)
        if name == "has_netclass":
            wanted = (args[0] if args else "").lower()
            return np.array([str(self.class_names[copper.net[i]]).lower() == wanted for i in self.items], dtype=bool)
        if name in ("is_coupled_diff_pair", "in_diff_pair"):
            from .rulebook import diff_pair_complement
            nets = [copper.net_names[copper.net[i]] for i in self.items]
            if name == "in_diff_pair":
                pattern = (args[0] if args else "*").lower()
                return np.array([bool(net) and diff_pair_complement(net) is not None
                                 and _base_matches(net, pattern) for net in nets], dtype=bool)
            others = ([copper.net_names[copper.net[i]] for i in other.items] if isinstance(other, CopperItems)
                      else [""] * len(nets))
            return np.array([bool(a) and diff_pair_complement(a) == b for a, b in zip(nets, others)], dtype=bool)
        if name in ("intersects_courtyard", "intersects_front_courtyard", "intersects_back_courtyard"):
            return self._courtyard(name, args[0] if args else "")
        if name in ("intersects_area", "enclosed_by_area"):
            return self._area(name == "enclosed_by_area", args[0] if args else "")
        raise ConditionError(f"{name}() is not evaluated for copper items")

    def _geometry(self) -> np.ndarray:
        """Each item's shape for the courtyard and area functions: a zone's outline, not its fill
        (KiCad 9 collidesWithCourtyard / intersectsArea: "rules are used for zone filling")."""
        shapes = self.copper.core[self.items].copy()
        zones = np.flatnonzero(self.copper.kind[self.items] == 4)       # copper.ZONE
        for position in zones:
            owner = self.copper.owner[self.items[position]]
            zone = owner[0] if isinstance(owner, tuple) else owner
            if len(getattr(zone, "polygon", ())) >= 3:
                shapes[position] = shapely.make_valid(shapely.Polygon(
                    zone.polygon, [hole for hole in zone.holes if len(hole) >= 3]))
        return shapes

    def _courtyard(self, name: str, pattern: str) -> np.ndarray:
        if self.board is None:
            raise ConditionError("courtyards are not known here")
        sides = {"intersects_front_courtyard": ("F.CrtYd",), "intersects_back_courtyard": ("B.CrtYd",)}.get(
            name, ("F.CrtYd", "B.CrtYd"))
        shapes = []
        for footprint in self.board.footprints:
            if not fnmatch.fnmatchcase((footprint.reference or "").lower(), pattern.lower()) \
                    and footprint.uuid != pattern:
                continue
            for layer in sides:
                # Courtyards are mostly drawn as separate lines: closed into areas as KiCad does.
                area = courtyard(footprint, layer)
                if area is not None:
                    shapes.append(area)
        if not shapes:
            return np.zeros(self.size, dtype=bool)
        union = shapely.union_all(shapes)
        return np.asarray(shapely.intersects(self._geometry(), union), dtype=bool)

    def _area(self, enclosed: bool, pattern: str) -> np.ndarray:
        if self.board is None:
            raise ConditionError("rule areas are not known here")
        shapes = []
        for zone in self.board.zones:
            if not (fnmatch.fnmatchcase((zone.name or "").lower(), pattern.lower()) or zone.uuid == pattern):
                continue
            if len(zone.polygon) >= 3:
                outline = shapely.Polygon(zone.polygon, [hole for hole in zone.holes if len(hole) >= 3])
                shapes.append(shapely.make_valid(outline))
        if not shapes:
            return np.zeros(self.size, dtype=bool)
        union = shapely.union_all(shapes)
        test = shapely.within if enclosed else shapely.intersects
        return np.asarray(test(self._geometry(), union), dtype=bool)


def _base_matches(net: str, pattern: str) -> bool:
    # KiCad: inDiffPair('X') matches the pair's base name (the net without its +/-, P/N suffix)
    from .rulebook import diff_pair_complement
    other = diff_pair_complement(net) or ""
    base = "".join(a for a, b in zip(net, other) if a == b) if len(net) == len(other) else net
    return fnmatch.fnmatchcase(base.lower(), pattern) or fnmatch.fnmatchcase(net.lower(), pattern)


def _is_plated(owner, kind: int) -> bool:
    """KiCad's isPlated(): a via, or a pad with a plated hole."""
    if _KIND_NAMES[kind] == "Via":
        return True
    pad = _pad_of(owner)
    return pad is not None and pad.kind == "thru_hole"


class TrackItems(CopperItems):
    """One track segment or arc of the board, as a condition's A (and B) for its width rule."""

    def __init__(self, track, rules, board):
        self.track = track
        self.rules = rules
        self.board = board
        self.size = 1

    def value(self, name: str):
        track = self.track
        netclass = self.rules.netclass_name(track.net)
        value = item_value(track, 0, name, track.net, netclass, track.layer)
        if name in ("width", "diameter", "hole", "hole_x", "hole_y", "size_x", "size_y"):
            return np.array([np.nan if value is None else float(value)])
        return np.array([value], dtype=object)

    def layer(self):
        return np.array([self.track.layer], dtype=object)

    def call(self, name: str, args: tuple, other: ItemSet):
        track = self.track
        if name in ("is_plated", "is_micro_via", "is_blind_buried_via", "member_of_footprint",
                    "is_coupled_diff_pair"):
            return np.zeros(1, dtype=bool)
        if name == "exists_on_layer":
            return np.array([fnmatch.fnmatchcase(track.layer.lower(), (args[0] if args else "").lower())])
        if name == "has_netclass":
            return np.array([self.rules.netclass_name(track.net).lower() == (args[0] if args else "").lower()])
        if name == "in_diff_pair":
            from .rulebook import diff_pair_complement
            pattern = (args[0] if args else "*").lower()
            return np.array([bool(track.net) and diff_pair_complement(track.net) is not None
                             and _base_matches(track.net, pattern)])
        return super().call(name, args, other)

    def _geometry(self) -> np.ndarray:
        track = self.track
        line = shapely.LineString(track.points) if len(track.points) >= 2 else shapely.Point(track.points[0])
        return np.array([line.buffer(max(track.width / 2, 1e-6))], dtype=object)


class OwnerItems(CopperItems):
    """Vias and pads (``Via`` or ``(Footprint, Pad)``) of the board, each tested alone as A (a
    single-item constraint: hole size, via diameter, annular width)."""

    def __init__(self, owners: list, rules, board):
        self.owners = owners
        self.rules = rules
        self.board = board
        self.size = len(owners)
        self._kinds = [3 if _pad_of(owner) is not None else 2 for owner in owners]   # copper.py's PAD, VIA

    def _net(self, owner) -> str:
        pad = _pad_of(owner)
        return (pad.net if pad is not None else getattr(owner, "net", "")) or ""

    def _layers(self, owner) -> list[str]:
        pad = _pad_of(owner)
        return list((pad.layers if pad is not None else getattr(owner, "layers", [])) or [])

    def value(self, name: str):
        values = []
        for owner, kind in zip(self.owners, self._kinds):
            net = self._net(owner)
            layers = self._layers(owner)
            values.append(item_value(owner, kind, name, net, self.rules.netclass_name(net),
                                     layers[0] if layers else ""))
        if name in ("width", "diameter", "hole", "hole_x", "hole_y", "size_x", "size_y"):
            return np.array([np.nan if v is None else float(v) for v in values])
        return np.array(values, dtype=object)

    def layer(self):
        return np.array([(self._layers(owner) or [""])[0] for owner in self.owners], dtype=object)

    def call(self, name: str, args: tuple, other: ItemSet):
        owners = self.owners
        pattern = (args[0] if args else "").lower()
        if name == "is_plated":
            return np.array([_is_plated(owner, kind) for owner, kind in zip(owners, self._kinds)], dtype=bool)
        if name == "exists_on_layer":
            return np.array([any(fnmatch.fnmatchcase(layer.lower(), pattern) or
                                 (layer.startswith("*.") and fnmatch.fnmatchcase(pattern, layer.lower()))
                                 for layer in self._layers(owner)) for owner in owners], dtype=bool)
        if name == "is_micro_via":
            return np.array([getattr(owner, "via_type", "") == "micro" for owner in owners], dtype=bool)
        if name == "is_blind_buried_via":
            return np.array([getattr(owner, "via_type", "") == "blind" for owner in owners], dtype=bool)
        if name == "member_of_footprint":
            return np.array([_footprint_of(owner) is not None
                             and fnmatch.fnmatchcase((_footprint_of(owner).reference or "").lower(), pattern)
                             for owner in owners], dtype=bool)
        if name == "has_netclass":
            return np.array([self.rules.netclass_name(self._net(owner)).lower() == pattern for owner in owners],
                            dtype=bool)
        if name == "is_coupled_diff_pair":
            return np.zeros(self.size, dtype=bool)          # no B: a single item is no pair
        if name == "in_diff_pair":
            from .rulebook import diff_pair_complement
            pattern = pattern or "*"
            return np.array([bool(self._net(o)) and diff_pair_complement(self._net(o)) is not None
                             and _base_matches(self._net(o), pattern) for o in owners], dtype=bool)
        return super().call(name, args, other)

    def _geometry(self) -> np.ndarray:
        from .copper import pad_outline
        shapes = []
        for owner in self.owners:
            pad = _pad_of(owner)
            if pad is not None:
                shape = pad_outline(pad)
                shapes.append(shape if shape is not None else shapely.Point(pad.x, pad.y))
            else:
                shapes.append(shapely.Point(owner.x, owner.y).buffer(max((owner.diameter or 0) / 2, 1e-6)))
        return np.array(shapes, dtype=object)
