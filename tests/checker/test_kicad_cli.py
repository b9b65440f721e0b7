"""Our kicad-cli invocation end to end, against a stand-in executable named kicad-cli
placed first on the PATH.

The stand-in accepts exactly the command lines we mean to send (``version``,
``sch erc --format json --output OUT SCH``, ``pcb drc --format json --output OUT
--schematic-parity PCB``) and refuses anything else; it logs each call and writes
one of the real kicad-cli 9 reports from the fixtures to ``--output``. So these
tests prove our argument building, version gate, report reading and failure
handling. They do not prove that a real KiCad accepts those arguments or writes
those reports for these projects: that was checked by hand against Debian's
KiCad 9.0.8 (see docs/checker.md), and is not part of CI.
"""
from __future__ import annotations

import json
import os
import stat
import sys
import textwrap
from collections import Counter
from pathlib import Path

import pytest

from checker import cli
from checker.runner import RunOptions, check
from checker_fixtures import KICAD

REPORTS = KICAD / "v9/kicad_bot_examples/reports"

_STAND_IN = textwrap.dedent('''\
    #!{python}
    """A stand-in for kicad-cli: behaviour from stand-in.json beside it."""
    import json, pathlib, shutil, sys
    here = pathlib.Path(__file__).parent
    plan = json.loads((here / "stand-in.json").read_text())
    args = sys.argv[1:]
    with open(here / "calls.jsonl", "a") as log:
        log.write(json.dumps(args) + "\\n")
    if args == ["version"]:
        print(plan["version"])
        sys.exit(plan.get("version_exit", 0))
    expected = {{("sch", "erc"): 7, ("pcb", "drc"): 8}}
    if (tuple(args[:2]) not in expected or len(args) != expected[tuple(args[:2])]
            or args[2:4] != ["--format", "json"] or args[4] != "--output"
            or (args[1] == "drc" and args[6] != "--schematic-parity")):
        print("stand-in kicad-cli: unexpected arguments", args, file=sys.stderr)
        sys.exit(64)
    step = plan[args[1]]
    if step.get("report"):
        shutil.copyfile(step["report"], args[5])
    elif step.get("text") is not None:
        pathlib.Path(args[5]).write_text(step["text"])
    print(step.get("stderr", ""), file=sys.stderr)
    sys.exit(step.get("exit", 0))
''')


@pytest.fixture
def stand_in(tmp_path, monkeypatch):
    """Install the stand-in first on PATH; returns a function that sets its plan and reads its calls."""
    folder = tmp_path / "stand-in-bin"
    folder.mkdir()
    executable = folder / "kicad-cli"
    executable.write_text(_STAND_IN.format(python=sys.executable))
    executable.chmod(executable.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")

    class StandIn:
        def plan(self, version="9.0.0", erc=None, drc=None, version_exit=0):
            erc = erc if erc is not None else {"report": str(REPORTS / "erc_sample.json")}
            drc = drc if drc is not None else {"report": str(REPORTS / "drc_sample.json")}
            (folder / "stand-in.json").write_text(json.dumps(
                {"version": version, "version_exit": version_exit, "erc": erc, "drc": drc}))

        def calls(self) -> list[list[str]]:
            log = folder / "calls.jsonl"
            return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []

    return StandIn()


def _run(folder: Path):
    return check(RunOptions(path=folder))


def _rules(outcome) -> Counter:
    return Counter(f.rule_id for f in outcome.findings)


def test_erc_and_drc_run_with_exact_arguments_and_reports_are_imported(copy_project, stand_in):
    folder = copy_project("v9/kicad_bot_examples/minimal")
    stand_in.plan()
    outcome = _run(folder)
    version, erc, drc = stand_in.calls()
    assert version == ["version"]
    assert erc[:5] == ["sch", "erc", "--format", "json", "--output"] and erc[6:] == [str(folder / "minimal.kicad_sch")]
    assert drc[:5] == ["pcb", "drc", "--format", "json", "--output"]
    assert drc[6:] == ["--schematic-parity", str(folder / "minimal.kicad_pcb")]
    # The reports were read (the excluded ERC and DRC items kept, marked excluded) and then deleted.
    counted = [f for f in outcome.findings if f.counts]
    assert sorted(f.severity for f in counted if f.source == "kicad-erc") == ["error", "medium"]
    assert sorted(f.title for f in counted if f.source == "kicad-drc") == [
        "KiCad DRC clearance", "KiCad DRC unconnected"]
    excluded = [f for f in outcome.findings if f.excluded]
    assert {f.source for f in excluded} == {"kicad-erc", "kicad-drc"}
    assert not Path(erc[5]).exists() and not Path(drc[5]).exists()
    assert outcome.result["readiness"] == "blocked"


def test_the_command_line_runs_kicad_cli_unless_told_not_to(copy_project, stand_in, capsys):
    folder = copy_project("v9/kicad_bot_examples/minimal")
    stand_in.plan()
    assert cli.main([str(folder), "--no-kicad-cli", "--format", "json"]) == 0
    assert stand_in.calls() == []
    capsys.readouterr()
    assert cli.main([str(folder), "--format", "json"]) == 1  # the sample reports hold errors
    sources = Counter(f["source"] for f in json.loads(capsys.readouterr().out)["findings"] if not f.get("excluded"))
    assert sources["kicad-erc"] == 2 and sources["kicad-drc"] == 2


@pytest.mark.parametrize("version, version_exit", [("7.0.11", 0), ("not a version", 0), ("9.0.0", 1)])
def test_kicad_cli_older_than_8_or_unreadable_is_not_run(copy_project, stand_in, version, version_exit):
    folder = copy_project("v9/kicad_bot_examples/minimal")
    stand_in.plan(version=version, version_exit=version_exit)
    outcome = _run(folder)
    assert stand_in.calls() == [["version"]]
    unusable = [f for f in outcome.findings if f.rule_id == "kicad.cli-unusable"]
    assert len(unusable) == 1 and unusable[0].severity == "info"
    assert not any(f.source.startswith("kicad-") for f in outcome.findings)
    assert outcome.result["readiness"] == "ready"  # as without kicad-cli: nothing was claimed


def test_kicad_8_is_new_enough_for_files_kicad_8_can_read(copy_project, stand_in):
    folder = copy_project("v6/pic_programmer")       # saved by KiCad 6
    stand_in.plan(version="8.0.0")
    _run(folder)
    assert [call[:2] for call in stand_in.calls()] == [["version"], ["sch", "erc"], ["pcb", "drc"]]


def test_kicad_cli_older_than_the_files_is_not_run(copy_project, stand_in):
    # KiCad refuses a file a newer KiCad saved (KiCad 9's board has tokens KiCad 8's parser lacks,
    # e.g. legacy_teardrops), so both steps would fail: said once at info, as with no kicad-cli.
    folder = copy_project("v9/kicad_bot_examples/minimal")
    stand_in.plan(version="8.0.0")
    outcome = _run(folder)
    assert stand_in.calls() == [["version"]]
    unusable = [f for f in outcome.findings if f.rule_id == "kicad.cli-unusable"]
    assert len(unusable) == 1 and unusable[0].severity == "info"
    assert "saved by KiCad 9" in unusable[0].message
    assert not any(f.source.startswith("kicad-") for f in outcome.findings)


@pytest.mark.parametrize("erc, reason", [
    ({"report": str(REPORTS / "erc_sample.json"), "exit": 3, "stderr": "Failed to load schematic"},
     "exited with 3: Failed to load schematic"),
    ({"exit": 0, "stderr": "nothing to do"}, "wrote no report"),
    ({"text": "not json", "exit": 0}, "is unreadable"),
    ({"text": '{"sheets": "nope"}', "exit": 0}, "is unreadable"),
])
def test_a_failed_run_is_unverified_never_clean(copy_project, stand_in, erc, reason):
    folder = copy_project("v9/kicad_bot_examples/minimal")
    stand_in.plan(erc=erc, drc={"text": json.dumps({"violations": [], "unconnected_items": [],
                                                      "schematic_parity": []})})
    outcome = _run(folder)
    rules = _rules(outcome)
    assert rules["kicad.erc"] == 0  # even a report left behind by a failed run is not read
    unverified = [f for f in outcome.findings if f.rule_id == "kicad.erc-unverified"]
    assert len(unverified) == 1 and reason in unverified[0].message
    assert rules["kicad.drc-unverified"] == 0 and rules["kicad.drc"] == 0  # a clean DRC is clean
    assert outcome.result["readiness"] == "at-risk"
