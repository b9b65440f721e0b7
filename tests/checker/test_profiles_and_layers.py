"""Fab profiles per layer count, severities by who chose the fab, and the board's own rules."""
from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from checker.errors import ProfileRefused
from checker.profiles import available, load_profile
from checker.runner import RunOptions, check
from checker_fixtures import FIXTURES, KICAD, REPO_ROOT

MULTILAYER = FIXTURES / "kicad-multilayer" / "kit-dev-coldfire-xilinx_5213"


def _board_findings(outcome):
    return [f for f in outcome.findings if f.rule_id.startswith(("board.", "rules."))]


def test_manufactured_multilayer_board_is_blocked_only_by_what_kicad_9_reports():
    """KiCad 9's DRC reports ten starved thermal reliefs on this board (kicad-drc.json beside it),
    and nothing else that is an error: those alone block it, as they block it in KiCad."""
    outcome = check(RunOptions(path=MULTILAYER, run_kicad_cli=False))
    assert len(outcome.models[0].board.copper_layers()) == 4
    blocking = {f.rule_id for f in outcome.findings if f.severity == "error" and f.counts}
    assert blocking == {"board.starved-thermal"}
    assert [f.rule_id for f in _board_findings(outcome) if f.rule_id in ("board.short", "board.clearance",
                                                                        "board.unconnected")] == []


def test_a_two_layer_profile_is_refused_on_a_four_layer_board():
    with pytest.raises(ProfileRefused) as refused:
        check(RunOptions(path=MULTILAYER, profile="jlcpcb-2layer", run_kicad_cli=False))
    assert "jlcpcb-2layer is for 1-2-layer boards" in refused.value.message
    assert "4 copper layers" in refused.value.message and "jlcpcb-4layer" in refused.value.message


def test_cli_refuses_the_profile_with_a_clear_message():
    done = subprocess.run([str(REPO_ROOT / "bin" / "check"), str(MULTILAYER), "--profile", "oshpark-2layer",
                           "--format", "json", "--no-kicad-cli"], capture_output=True, text=True)
    assert done.returncode == 2
    assert json.loads(done.stdout)["code"] == "profile_does_not_fit"
    assert "oshpark-4layer" in done.stderr


def test_the_fitting_fab_profile_applies_and_its_findings_are_high():
    outcome = check(RunOptions(path=MULTILAYER, profile="jlcpcb-4layer", run_kicad_cli=False))
    assert outcome.result["profile"] == "jlcpcb-4layer"
    # Blocked by KiCad's starved thermal reliefs only (above): the fab adds no error.
    assert {f.rule_id for f in outcome.findings if f.severity == "error" and f.counts} == {"board.starved-thermal"}
    stickhub = check(RunOptions(path=KICAD / "v6/stickhub", profile="oshpark-2layer", run_kicad_cli=False))
    rings = [f for f in stickhub.findings if f.rule_id == "board.annular-ring"]
    assert rings and {f.severity for f in rings} == {"high"}


def test_under_generic_fab_findings_are_medium():
    stickhub = check(RunOptions(path=KICAD / "v6/stickhub", run_kicad_cli=False))
    fab = [f for f in stickhub.findings if f.rule_id in ("board.annular-ring", "board.via-diameter")]
    assert fab and {f.severity for f in fab} == {"medium"}


def test_profiles_name_their_source_and_layer_counts():
    for name in available():
        profile = load_profile(name)
        if name == "generic":
            assert profile.layer_counts == () and profile.multilayer
        else:
            assert profile.fab and profile.source_url.startswith("https://") and profile.layer_counts
    assert load_profile("generic").for_board(4).minimum("via_drill_mm") == 0.2
    assert load_profile("generic").for_board(2).minimum("via_drill_mm") == 0.3
    # A fab profile checks only what the fab publishes.
    assert load_profile("jlcpcb-2layer").minimum("annular_ring_mm") is None


def test_kicad_default_rule_values_are_not_findings(copy_project):
    folder = copy_project("v6/flat_hierarchy")
    outcome = check(RunOptions(path=folder, profile="jlcpcb-2layer", run_kicad_cli=False))
    assert [f.message for f in outcome.findings if f.rule_id == "rules.below-fab"] == []
    pro = folder / "flat_hierarchy.kicad_pro"
    data = json.loads(pro.read_text())
    data["board"]["design_settings"]["rules"]["min_track_width"] = 0.1   # chosen, and looser than the fab
    pro.write_text(json.dumps(data))
    outcome = check(RunOptions(path=folder, profile="jlcpcb-2layer", run_kicad_cli=False))
    assert [f.message for f in outcome.findings if f.rule_id == "rules.below-fab"] == [
        "board setup minimum track width is 0.1 mm, below jlcpcb-2layer's 0.127 mm"]


def test_kicad_dru_clearance_rule_governs(copy_project):
    folder = copy_project("v6/ecc83")
    shutil.copyfile(FIXTURES / "kicad-planted/track-clearance/ecc83-pp.kicad_pcb", folder / "ecc83-pp.kicad_pcb")
    (folder / "ecc83-pp.kicad_dru").write_text(
        '(version 1)\n(rule "signal spacing"\n  (layer outer)\n'
        '  (condition "A.NetName == \'Net-(C2-Pad2)\' && B.NetClass == \'Default\'")\n'
        '  (constraint clearance (min 0.05mm)))\n')
    outcome = check(RunOptions(path=folder / "ecc83-pp.kicad_pro", run_kicad_cli=False))
    assert [f for f in outcome.findings if f.rule_id == "board.clearance" and f.severity == "error"] == []
    assert [f.rule_id for f in outcome.findings if f.rule_id == "rules.unsupported"] == []
