"""The checker's own copper checks against KiCad 9's DRC on real boards, without KiCad.

Every board here is a planted copy of a real fixture board made with KiCad 9's pcbnew
(tools/kicad_copper_plants.py) with the report kicad-cli 9 wrote for it committed beside it
(``kicad-drc.json``); the tests read those reports and never run KiCad.
"""
from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path

import pytest

from checker.findings import Finding
from checker.runner import RunOptions, check
from checker_fixtures import FIXTURES

PLANTED = FIXTURES / "kicad-planted"
# A place matches KiCad's when it is this close (KiCad names an item by its anchor; the
# checker by the point where two items come closest).
NEAR_MM = 1.0


def _project_beside(report: str) -> tuple[Path, Path]:
    """A committed kicad-cli report and the project it was made of: the folder's one project for
    `kicad-drc.json`, `<name>.kicad_pro` for `<name>.kicad-drc.json` (a folder of two projects)."""
    path = FIXTURES / report
    name = path.name
    if name != "kicad-drc.json":
        return path, path.parent / (name[:-len(".kicad-drc.json")] + ".kicad_pro")
    if len(list(path.parent.glob("*.kicad_pro"))) != 1:
        pytest.skip("no single project beside the report")
    return path, path.parent


def _report(name: str) -> dict:
    return json.loads((PLANTED / name / "kicad-drc.json").read_text())


def _kicad_errors(report: dict, kind: str) -> list[dict]:
    found = [v for v in report["violations"] if v["type"] == kind and v["severity"] == "error"]
    if kind == "unconnected_items":
        found += [v for v in report.get("unconnected_items", []) if v["severity"] == "error"]
    return found


def _findings(name: str) -> list[Finding]:
    return check(RunOptions(path=PLANTED / name, run_kicad_cli=False)).findings


def _mirroring(findings: list[Finding], kind: str) -> list[Finding]:
    return [f for f in findings if f.kicad_type == kind and f.severity == "error"]


def _names(violation: dict, finding: Finding) -> bool:
    """The finding names every one of KiCad's items by uuid, or stands at the place of one of
    them that is not a zone (a zone's place is its first corner, anywhere on the board)."""
    uuids = {item.get("uuid") for item in violation["items"]}
    if uuids <= set(finding.uuids):
        return True
    if violation["type"] in ("courtyards_overlap", "footprint_type_mismatch"):
        return False   # a footprint's place is its anchor: by uuid only
    places = [(item["pos"]["x"], item["pos"]["y"]) for item in violation["items"]
              if not item["description"].startswith("Zone")]
    return any(math.hypot(location["x"] - x, location["y"] - y) <= NEAR_MM
               for location in finding.all_locations() if location.get("x") is not None for x, y in places)


def test_vias_not_flashed_on_inner_planes_are_measured_by_their_hole():
    """Refilled by KiCad 9: the planes keep 0.5 mm to the via holes of other nets, 0.26-0.38 mm
    to where the vias' pads would be. KiCad reports no clearance; neither does the checker."""
    report = _report("coldfire-inner-planes")
    findings = _findings("coldfire-inner-planes")
    assert _kicad_errors(report, "clearance") == []
    assert [f.message for f in findings if f.rule_id in ("board.clearance", "board.short")] == []


def test_a_via_connected_on_an_inner_layer_is_flashed_there():
    report = _report("coldfire-flashed-via")
    findings = _findings("coldfire-flashed-via")
    kicad = _kicad_errors(report, "clearance")
    ours = _mirroring(findings, "clearance")
    assert len(kicad) == 1 and len(ours) == 1
    assert _names(kicad[0], ours[0])
    assert "5933d281-99eb-4979-bcd3-a1622ea44da4" in ours[0].uuids   # the /AN2 via
    assert ours[0].extra["layer"] == "In1.Cu" and ours[0].extra["actual_mm"] == pytest.approx(0.383, abs=0.001)


KICAD9_PLANTS = sorted(p.name for p in PLANTED.iterdir() if (p / "kicad-drc.json").is_file()
                       and not (p / "drc.rpt").is_file())
# The KiCad types the checker's copper checks answer, compared on every KiCad 9 plant.
COMPARED = ("clearance", "shorting_items", "tracks_crossing", "unconnected_items", "copper_edge_clearance",
            "track_width", "hole_clearance", "hole_to_hole", "starved_thermal", "courtyards_overlap",
            "footprint_type_mismatch", "items_not_allowed", "solder_mask_bridge")


@pytest.mark.parametrize("name", KICAD9_PLANTS)
def test_every_kicad_copper_error_is_found_and_none_is_invented(name):
    report = _report(name)
    findings = _findings(name)
    for kind in COMPARED:
        kicad = _kicad_errors(report, kind)
        ours = _mirroring(findings, kind)
        for violation in kicad:
            assert any(_names(violation, f) for f in ours), f"{name}: missed {kind} {violation['items']}"
        # Grouped findings count their places.
        assert sum(f.extra.get("count", 1) for f in ours) <= len(kicad), \
            f"{name}: {kind} beyond KiCad's {len(kicad)}: {[f.message for f in ours]}"


def test_a_track_touching_nothing_is_unconnected_though_it_has_no_pad():
    (finding,) = _mirroring(_findings("ecc83-lone-track"), "unconnected_items")
    assert finding.rule_id == "board.unconnected" and "(no pad)" in finding.message
    assert "Net-(C2-Pad2)" in finding.message


def test_track_ends_on_the_middle_of_tracks_of_their_net_are_connected():
    findings = _findings("ecc83-t-junctions")
    assert [f.message for f in findings if f.rule_id in ("board.dangling-track", "board.unconnected")] == []


def test_copper_across_the_board_edge_is_an_error():
    findings = _findings("ecc83-track-over-edge")
    (edge,) = [f for f in findings if f.rule_id == "board.edge-clearance"]
    assert edge.severity == "error" and edge.kicad_type == "copper_edge_clearance"
    (dangling,) = [f for f in findings if f.rule_id == "board.dangling-track"]
    assert dangling.extra["x"] == pytest.approx(175.0)


def test_copper_near_a_non_plated_hole_breaks_the_hole_clearance():
    """The planted GND track 0.1 mm from P102's hole, and the GND fill KiCad 9's filler left
    0.0005 mm from three non-plated holes: KiCad's four hole_clearance errors, one finding."""
    report = _report("pic-track-near-hole")
    (finding,) = _mirroring(_findings("pic-track-near-hole"), "hole_clearance")
    assert finding.rule_id == "board.copper-to-hole" and finding.extra["count"] == 4
    assert "track of net GND is 0.1 mm from the non-plated hole of P102" in finding.message or \
        any(place["uuids"] and abs(place["x"] - 158.75) < 1e-3 for place in finding.locations)
    for violation in _kicad_errors(report, "hole_clearance"):
        assert _names(violation, finding)


def test_starved_thermal_reliefs_are_those_kicad_reports_on_the_coldfire_board():
    """KiCad 9 reports ten on the multilayer fixture: one-spoke reliefs, and reliefs whose spokes
    reach only an isolated island of the fill. A track of the pad's net from the pad into the
    fill counts as a spoke, whatever its layer (JP101 pad 3)."""
    report = json.loads((FIXTURES / "kicad-multilayer/kit-dev-coldfire-xilinx_5213/kicad-drc.json").read_text())
    findings = check(RunOptions(path=FIXTURES / "kicad-multilayer/kit-dev-coldfire-xilinx_5213",
                                run_kicad_cli=False)).findings
    kicad = _kicad_errors(report, "starved_thermal")
    ours = _mirroring(findings, "starved_thermal")
    assert len(kicad) == 10 and len(ours) == 10
    for violation in kicad:
        assert any(_names(violation, f) for f in ours), violation["items"]
    assert not any("JP101" in f.message and "pad 3 " in f.message for f in ours)


FIXTURE_REPORTS = sorted(str(p.relative_to(FIXTURES)) for p in FIXTURES.glob("kicad*/**/*kicad-drc.json"))
# KiCad types the checker finds every error of on every fixture board.
COMPLETE = ("clearance", "shorting_items", "unconnected_items", "starved_thermal", "hole_clearance",
            "hole_to_hole", "track_width", "tracks_crossing", "courtyards_overlap", "footprint_type_mismatch",
            "items_not_allowed", "solder_mask_bridge")


@pytest.mark.parametrize("report", FIXTURE_REPORTS)
def test_every_fixture_board_kicad_copper_error_is_found(report):
    path, project = _project_beside(report)
    data = json.loads(path.read_text())
    findings = check(RunOptions(path=project, run_kicad_cli=False)).findings
    for kind in COMPLETE:
        for violation in _kicad_errors(data, kind):
            assert any(_names(violation, f) for f in _mirroring(findings, kind)), \
                f"{report}: missed {kind} {violation['items']}"


def test_overlapping_courtyards_are_reported_and_an_ignored_type_mismatch_is_not():
    findings = _findings("ecc83-footprint-checks")
    (overlap,) = _mirroring(findings, "courtyards_overlap")
    assert "C2 and R3" in overlap.message
    (violation,) = _kicad_errors(_report("ecc83-footprint-checks"), "courtyards_overlap")
    assert _names(violation, overlap)
    # U1 is typed SMD with through-hole pads, but the project sets footprint_type_mismatch to ignore.
    assert [f for f in findings if f.rule_id == "board.footprint-type-mismatch"] == []


def test_a_track_in_a_rule_area_that_allows_none_is_reported():
    (finding,) = _mirroring(_findings("ecc83-track-in-keepout"), "items_not_allowed")
    (violation,) = _kicad_errors(_report("ecc83-track-in-keepout"), "items_not_allowed")
    assert _names(violation, finding)
    assert finding.rule_id == "board.item-in-keepout" and finding.extra["layer"] == "B.Cu"
    assert {item["uuid"] for item in violation["items"]} <= set(finding.uuids)


def test_the_board_setup_minimum_spokes_governs_starved_thermals(tmp_path):
    """KiCad 9's demos set min_resolved_spokes to 1: a one-spoke relief is then enough, and so is a
    relief into an island (it is all there is), so the ColdFire board has none."""
    import shutil
    folder = tmp_path / "coldfire"
    shutil.copytree(FIXTURES / "kicad-multilayer/kit-dev-coldfire-xilinx_5213", folder)
    pro = folder / "kit-dev-coldfire-xilinx_5213.kicad_pro"
    settings = json.loads(pro.read_text())
    settings["board"]["design_settings"]["rules"]["min_resolved_spokes"] = 1
    pro.write_text(json.dumps(settings))
    findings = check(RunOptions(path=folder, run_kicad_cli=False)).findings
    assert _mirroring(findings, "starved_thermal") == []


def test_a_pad_opening_over_a_via_of_another_net_bridges_front_and_back():
    """The KiCad 6 plant via-on-pad, against KiCad 9's report: the through-hole pad's openings on both
    sides expose the via of another net."""
    path = FIXTURES / "kicad-planted/via-on-pad"
    kicad = _kicad_errors(json.loads((path / "kicad-drc.json").read_text()), "solder_mask_bridge")
    ours = _mirroring(check(RunOptions(path=path, run_kicad_cli=False)).findings, "solder_mask_bridge")
    assert len(kicad) == 2 and sorted(f.extra["layer"] for f in ours) == ["B.Mask", "F.Mask"]
    for violation in kicad:
        assert any(_names(violation, f) for f in ours)


def test_vias_that_join_nothing_are_kicads_dangling_vias():
    """The crop cut the ColdFire board's vias loose: KiCad warns of eight, and so does the checker."""
    report = _report("coldfire-inner-planes")
    kicad = [v for v in report["violations"] if v["type"] == "via_dangling"]
    ours = [f for f in _findings("coldfire-inner-planes") if f.kicad_type == "via_dangling"]
    assert len(kicad) == 8 and {f.severity for f in ours} == {"medium"}
    assert sum(f.extra["count"] for f in ours) == len(kicad)
    for violation in kicad:
        assert any(_names(violation, f) for f in ours), violation["items"]


def test_touching_copper_takes_one_net_as_kicad_gives_it_on_load():
    """ecc83-padless-crossings: the file gives each crossing track its own net. KiCad 9 gives a
    cluster of touching copper its pad's net, or with no pad its first track's (file order),
    and reports no short; every track it names carries the net the checker gives it."""
    report = _report("ecc83-padless-crossings")
    outcome = check(RunOptions(path=PLANTED / "ecc83-padless-crossings", run_kicad_cli=False))
    copper = outcome.models[0].copper
    net_of = {copper.uuid(i): copper.net_names[copper.net[i]] for i in range(len(copper)) if copper.uuid(i)}
    named = {item["uuid"]: item["description"].split("[", 1)[1].split("]", 1)[0]
             for v in report["violations"] + report["unconnected_items"] for item in v["items"]
             if item["description"].startswith("Track [")}
    # The Net-(R1-Pad1) track is "Track [Net-(C2-Pad2)]" in KiCad's report.
    assert set(named.values()) == {"Net-(C2-Pad2)", "Net-(P1-Pad2)"} and len(named) >= 4
    assert {u: net_of[u] for u in named} == named
    assert not [f for f in outcome.findings if f.kicad_type in ("shorting_items", "tracks_crossing")]
    # The pad-less pair is an island of Net-(C2-Pad2) (KiCad's one error), its loose ends dangle.
    (island,) = _mirroring(outcome.findings, "unconnected_items")
    assert "Net-(C2-Pad2)" in island.message
    assert outcome.result["readiness"] == "blocked"


SILK = ("silk_edge_clearance", "silk_over_copper")


@pytest.mark.parametrize("report", [r for r in FIXTURE_REPORTS
                                    if any(kind in (FIXTURES / r).read_text() for kind in SILK)])
def test_silkscreen_clipped_by_the_edge_or_the_mask_is_kicads_warning_item_for_item(report):
    """Every silk line or polygon KiCad 9 reports clipped by the board edge or a solder mask
    opening is a place of a medium finding naming its uuid (and the edges it meets); no more places
    than KiCad's (texts are not drawn, so not reported)."""
    path, project = _project_beside(report)
    violations = json.loads(path.read_text())["violations"]
    outcome = check(RunOptions(path=project, run_kicad_cli=False)).findings
    for kind in SILK:
        kicad = [v for v in violations if v["type"] == kind]
        findings = [f for f in outcome if f.kicad_type == kind]
        assert {f.severity for f in findings} <= {"medium"}
        places = [set(place["uuids"]) for f in findings for place in f.all_locations()]
        for violation in kicad:
            if any(item["description"].startswith("Reference field") for item in violation["items"]):
                continue
            assert any({item["uuid"] for item in violation["items"]} <= place for place in places), \
                violation["items"]
        assert len(places) <= len(kicad)


# The blocking KiCad types of the checker's board checks, compared place for place below.
BLOCKING_COPPER = COMPLETE + ("copper_edge_clearance", "invalid_outline")
# KiCad's report gives each item's own position (a track's start, a pad's centre), not the
# marker's: a place the report can confirm stands on one of them.
AT_ITEM_MM = 0.1


def _stands_at(location: dict, violation: dict) -> bool:
    """The place names one of the violation's items by uuid, or stands at one of them."""
    if set(location.get("uuids") or ()) & {item.get("uuid") for item in violation["items"]}:
        return True
    x, y = location.get("x"), location.get("y")
    return x is not None and y is not None and any(
        math.hypot(x - item["pos"]["x"], y - item["pos"]["y"]) <= AT_ITEM_MM for item in violation["items"])


@pytest.mark.parametrize("report", FIXTURE_REPORTS)
def test_no_blocking_board_finding_goes_beyond_kicads_count_or_places(report):
    """Issue 26: on every fixture board, each place of the checker's blocking finding of a KiCad
    copper type is one of KiCad 9's own errors of that type, and there are no more places than
    KiCad's errors (one missing connection is one place, naming the items at both its ends)."""
    path, project = _project_beside(report)
    data = json.loads(path.read_text())
    findings = check(RunOptions(path=project, run_kicad_cli=False)).findings
    for kind in BLOCKING_COPPER:
        kicad = _kicad_errors(data, kind)
        places = [place for f in _mirroring(findings, kind) if f.counts for place in f.all_locations()]
        assert len(places) <= len(kicad), f"{report}: {len(places)} {kind} places, KiCad {len(kicad)}"
        for place in places:
            assert any(_stands_at(place, v) for v in kicad), f"{report}: {kind} at {place} is not KiCad's"


def test_copper_of_no_net_touching_copper_of_no_net_is_a_short_as_in_kicad():
    """KiCad 9 treats two items of no net (net code 0) as different nets: microwave's POLY pads
    touching the footprint's copper polygons are its 8 shorting_items errors ("nets  and ")."""
    folder = FIXTURES / "kicad/v6/microwave"
    kicad = _kicad_errors(json.loads((folder / "kicad-drc.json").read_text()), "shorting_items")
    assert len(kicad) == 8 and all("<no net>" in item["description"] for v in kicad for item in v["items"])
    (short,) = _mirroring(check(RunOptions(path=folder, run_kicad_cli=False)).findings, "shorting_items")
    assert short.extra["count"] == 8 and short.extra["nets"] == [""]
    places = short.all_locations()
    # The file has no uuids (KiCad 5 format): each place is the shorted pad, as KiCad names it.
    assert all(any(_stands_at(place, v) for v in kicad) for place in places)
    assert {(round(p["x"], 2), round(p["y"], 2)) for p in places} == \
        {(round(i["pos"]["x"], 2), round(i["pos"]["y"], 2)) for v in kicad for i in v["items"]
         if i["description"].startswith("Pad")}


def test_a_missing_connection_names_every_track_that_ends_where_it_starts():
    """The unrouted plant: KiCad names the Net-(C2-Pad2) track a8f7b422 of the two that meet at the
    gap's far end (137.16, 115.57); the checker names both and reports one place."""
    (violation,) = _kicad_errors(_report("unrouted"), "unconnected_items")
    (finding,) = _mirroring(_findings("unrouted"), "unconnected_items")
    assert len(finding.all_locations()) == 1
    assert {item["uuid"] for item in violation["items"]} <= set(finding.uuids)
    assert {"85fe529e-0f31-4426-90fb-f0a251407089", "a8f7b422-101c-4965-915d-e5dd69e04c9f"} <= set(finding.uuids)
    assert (finding.extra["to_x"], finding.extra["to_y"]) == (137.16, 115.57)


def test_a_board_with_nothing_on_edge_cuts_is_kicads_invalid_outline_at_the_board():
    folder = FIXTURES / "kicad/v9/kinet2pcb_test"
    (violation,) = _kicad_errors(json.loads((folder / "kicad-drc.json").read_text()), "invalid_outline")
    (finding,) = _mirroring(check(RunOptions(path=folder, run_kicad_cli=False)).findings, "invalid_outline")
    assert finding.rule_id == "board.outline-missing"
    assert _stands_at(finding.all_locations()[0], violation)


def _kicad_net(violation: dict) -> str:
    description = violation["items"][0]["description"]
    return description[description.index("[") + 1:description.index("]")]


@pytest.mark.parametrize("report", [r for r in FIXTURE_REPORTS if '"Missing connection' in (FIXTURES / r).read_text()])
def test_each_net_lacks_as_many_connections_as_kicads_ratsnest_says(report):
    """KiCad's ratsnest is a spanning tree over a net's islands (pad-less track islands too):
    islands - 1 missing connections per net. One island can lack two of them (a track joining
    nothing between two pads), which are two findings, not one."""
    path, project = _project_beside(report)
    kicad = Counter(_kicad_net(v) for v in _kicad_errors(json.loads(path.read_text()), "unconnected_items"))
    ours = Counter(f.extra["nets"][0] for f in _mirroring(check(RunOptions(path=project, run_kicad_cli=False)).findings,
                                                          "unconnected_items"))
    assert ours == kicad


@pytest.mark.parametrize("report", [r for r in FIXTURE_REPORTS if '"track_dangling"' in (FIXTURES / r).read_text()])
def test_every_dangling_track_end_is_one_kicad_reports(report):
    """A track end on copper of another net is joined for KiCad 9's connectivity (a track can
    take another net), so not dangling: the tracks-crossing plant's stub ends on a
    Net-(R1-Pad1) track (a short) and KiCad reports no dangling end for it."""
    path, project = _project_beside(report)
    kicad = [v for v in json.loads(path.read_text())["violations"] if v["type"] == "track_dangling"]
    findings = [f for f in check(RunOptions(path=project, run_kicad_cli=False)).findings
                if f.kicad_type == "track_dangling"]
    places = [place for f in findings for place in f.all_locations()]
    assert len(places) <= len(kicad)   # one per track, as KiCad: a track with two open ends is one
    for place in places:
        assert any(_stands_at(place, v) for v in kicad), f"{report}: dangling end at {place} is not KiCad's"
    for violation in kicad:
        assert any(_stands_at(place, violation) for place in places), f"{report}: missed {violation['items']}"


def test_a_stub_lying_on_one_track_only_dangles_at_its_far_end():
    """The pad-clearance plant's 0.25 mm Net-(R1-Pad1) stub starts on the middle of a track of
    its net and ends on that same track's copper: KiCad counts that track for the nearer end
    only, so the stub dangles (KiCad 9 reports it); a pad or via under both ends would join it."""
    (violation,) = [v for v in _report("pad-clearance")["violations"] if v["type"] == "track_dangling"]
    (finding,) = [f for f in _findings("pad-clearance") if f.kicad_type == "track_dangling"]
    assert finding.uuids == ["35a1a7ec-1fe2-4a1b-95ba-8145bdaf8448"] == [i["uuid"] for i in violation["items"]]
    assert (finding.extra["x"], finding.extra["y"]) == (135.76, 120.095)
    # The unrouted plant's stub lies within pad 8 of U1 at both ends: not dangling (KiCad neither).
    assert [f for f in _findings("unrouted") if f.kicad_type == "track_dangling"] == []


def test_a_window_drawn_on_the_mask_over_two_nets_bridges_them():
    """StickHub's JP1 solder jumper opens B.Mask with a drawn polygon over both its pads
    (Net-(J1-Pad1) and VIN); the footprint does not allow bridges, so KiCad 9 reports the
    polygon and pad 1 as a solder_mask_bridge error."""
    folder = FIXTURES / "kicad/v6/stickhub"
    (violation,) = _kicad_errors(json.loads((folder / "kicad-drc.json").read_text()), "solder_mask_bridge")
    (finding,) = _mirroring(check(RunOptions(path=folder, run_kicad_cli=False)).findings, "solder_mask_bridge")
    assert {item["uuid"] for item in violation["items"]} <= set(finding.uuids)
    assert finding.extra["layer"] == "B.Mask" and finding.extra["nets"] == ["Net-(J1-Pad1)", "VIN"]


def test_a_track_inside_a_fill_of_another_net_is_a_short_and_does_not_dangle():
    """KiCad 9's connectivity joins a track to a fill of another net under it (the track could
    take the fill's net): the fill under both its ends, the track is not dangling. It is still
    copper on another net's fill (clearance) and an island of its own net (unconnected)."""
    report = _report("ecc83-track-in-other-fill")
    findings = _findings("ecc83-track-in-other-fill")
    assert [v for v in report["violations"] if v["type"] == "track_dangling"] == []
    assert [f.message for f in findings if f.kicad_type == "track_dangling"] == []
    for kind in ("clearance", "unconnected_items"):
        (violation,) = _kicad_errors(report, kind)
        (finding,) = _mirroring(findings, kind)
        assert _names(violation, finding)


TEXT_TYPES = ("text_height", "text_thickness")


@pytest.mark.parametrize("report", [r for r in FIXTURE_REPORTS
                                    if any(f'"{kind}"' in (FIXTURES / r).read_text() for kind in TEXT_TYPES)])
def test_silkscreen_texts_too_small_are_kicads_warnings_text_for_text(report):
    """KiCad 9's text_height / text_thickness on visible silkscreen texts (the pen clamped to a
    quarter of the font size: microwave's 0.0762 mm texts with a 0.2 mm pen are 0.019 mm thin)."""
    path, project = _project_beside(report)
    violations = json.loads(path.read_text())["violations"]
    findings = check(RunOptions(path=project, run_kicad_cli=False)).findings
    for kind in TEXT_TYPES:
        kicad = [v for v in violations if v["type"] == kind]
        ours = [f for f in findings if f.kicad_type == kind]
        assert {f.severity for f in ours} <= {"medium"}
        places = [place for f in ours for place in f.all_locations()]
        assert len(places) == len(kicad), f"{report}: {kind} {len(places)} places, KiCad {len(kicad)}"
        for violation in kicad:
            assert any(_stands_at(place, violation) for place in places), violation["items"]
