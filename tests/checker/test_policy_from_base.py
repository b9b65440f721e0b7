"""Policy comes from the base: a pull request cannot relax its own gate, and a hostile
base never costs the head its verdict (checker/policy.py, checker/base_checkout.py).

Each case is a real git repository: the base commit holds a blocked board, the head
commit relaxes it one way, and ``bin/check --base-ref`` judges the head."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from checker.cli import main
from checker_fixtures import FIXTURES, KICAD

DRC = KICAD / "v9/kicad_bot_examples/drc-violation"          # blocked: board.edge-clearance (copper_edge_clearance)
ERC = FIXTURES / "kicad-planted-erc/outputs-shorted"           # blocked: erc.pin-to-pin (two outputs) and more
EDGE = ("2f0c2a4e-0002-4000-8000-000000000001", "2f0c2a4e-0003-4000-8000-000000000002")
OUTPUTS = ("10418e19-14b6-4f7f-8f28-8d4f24764985", "5b3cf5e8-f54c-41a5-91ab-dfa7b15b899c")
REPO_ROOT = Path(__file__).resolve().parents[2]


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
                          check=True, capture_output=True, text=True).stdout.strip()


def _repository(tmp_path: Path, source: Path) -> Path:
    repo = tmp_path / "repo"
    shutil.copytree(source, repo / "board", ignore=shutil.ignore_patterns("kicad-*.json", "*.rpt"))
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "base")
    return repo


def _edit_pro(folder: Path, change) -> None:
    [pro] = folder.glob("*.kicad_pro")
    data = json.loads(pro.read_text())
    change(data)
    pro.write_text(json.dumps(data, indent=2))


def _commit(repo: Path, message: str = "head") -> str:
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", message)
    return _git(repo, "rev-parse", "HEAD")


def _check(repo: Path, tmp_path: Path, *extra: str) -> tuple[int, dict]:
    out = tmp_path / f"result-{len(list(tmp_path.glob('result-*')))}.json"
    code = main([str(repo / "board"), "--root", str(repo), "--no-kicad-cli", "--format", "json", "-o", str(out),
                 *extra])
    return code, json.loads(out.read_text())


def _drc_severity(level):
    return lambda d: d["board"]["design_settings"].setdefault("rule_severities", {}).update(
        {"copper_edge_clearance": level})


def _drc_exclusion(d):
    d["board"]["design_settings"]["drc_exclusions"] = [[f"copper_edge_clearance|10000000|0|{EDGE[0]}|{EDGE[1]}",
                                                        "a test coupon"]]


def _pin_map_allows_two_outputs(d):
    pin_map = d["erc"]["pin_map"]
    pin_map[1][1] = 0   # output against output: no conflict


def _erc_exclusion(d):
    d["erc"]["erc_exclusions"] = [[f"pin_to_pin|1193800|419100|{OUTPUTS[0]}|{OUTPUTS[1]}|/|/|/", "shorted on purpose"]]


_DRU = '(version 1)\n(rule "wide tracks"\n\t(constraint track_width (min {minimum})))\n'
BASE_SETUP = {"kicad_dru": lambda b: (b / "drc-violation.kicad_dru").write_text(_DRU.format(minimum="0.3mm")),
              "board minimum": lambda b: _edit_pro(b, _min_track_width(0.3))}


def _min_track_width(mm):
    return lambda d: d["board"]["design_settings"]["rules"].update({"min_track_width": mm})

WAYS = {
    "boardready.toml severity": (DRC, "board.edge-clearance", lambda b: (b.parent / ".boardready.toml").write_text(
        '[severity]\n"board.edge-clearance" = "info"\n'), ".boardready.toml", 'severity."board.edge-clearance"', "info"),
    "rule_severities ignore": (DRC, "board.edge-clearance", lambda b: _edit_pro(b, _drc_severity("ignore")),
                               "board/drc-violation.kicad_pro",
                               "board.design_settings.rule_severities.copper_edge_clearance", "ignored"),
    "drc_exclusions": (DRC, "board.edge-clearance", lambda b: _edit_pro(b, _drc_exclusion),
                       "board/drc-violation.kicad_pro", "board.design_settings.drc_exclusions", "excluded"),
    # The base's custom rule holds the 0.25 mm tracks to 0.3 mm; the head loosens it.
    "kicad_dru": (DRC, "board.track-width", lambda b: (b / "drc-violation.kicad_dru").write_text(
        _DRU.format(minimum="0.2mm")), "board/drc-violation.kicad_dru", "rules", "ignored"),
    # The base holds the 0.25 mm tracks to a 0.3 mm board minimum; the head lowers it.
    "board minimum": (DRC, "board.track-width", lambda b: _edit_pro(b, _min_track_width(0.2)),
                      "board/drc-violation.kicad_pro", "board.design_settings.rules", "ignored"),
    "erc_exclusions": (ERC, "erc.pin-to-pin", lambda b: _edit_pro(b, _erc_exclusion),
                       "board/multi_unit_7400.kicad_pro", "erc.erc_exclusions", "excluded"),
    "pin_map": (ERC, "erc.pin-to-pin", lambda b: _edit_pro(b, _pin_map_allows_two_outputs),
                "board/multi_unit_7400.kicad_pro", "erc.pin_map", "ignored"),
}


@pytest.mark.parametrize("way", list(WAYS))
def test_a_head_that_relaxes_its_own_gate_is_relaxed_and_the_gate_fails(tmp_path, way):
    source, rule, relax, file, setting, to = WAYS[way]
    repo = _repository(tmp_path, source)
    if way in BASE_SETUP:
        BASE_SETUP[way](repo / "board")
        _commit(repo, "the project's own rule")
    base = _git(repo, "rev-parse", "HEAD")
    relax(repo / "board")
    _commit(repo)
    # Alone, the head's own policy lets the finding go (the attack).
    alone, result = _check(repo, tmp_path)
    assert not [f for f in result["findings"] if f["ruleId"] == rule and f["severity"] == "error"
                and not f.get("excluded")], way
    # Against its base, the finding is kept at the base's severity, marked, and the gate fails.
    code, result = _check(repo, tmp_path, "--base-ref", base)
    relaxed = [f for f in result["findings"] if f.get("relaxed")]
    assert code == 1 and result["readiness"] == "blocked", way
    assert rule in {f["ruleId"] for f in relaxed}
    mine = next(f for f in relaxed if f["ruleId"] == rule)
    assert mine["severity"] == "error" and not mine.get("excluded") and not mine.get("waived")
    assert mine["relaxed"]["to"] == to
    assert any(s["file"] == file and s["setting"].startswith(setting) for s in mine["relaxed"]["settings"]), \
        mine["relaxed"]
    # The words the CLI says name it too.
    assert main([str(repo / "board"), "--root", str(repo), "--no-kicad-cli", "--base-ref", base,
                 "-o", str(tmp_path / "report.txt")]) == 1
    text = (tmp_path / "report.txt").read_text()
    assert "relaxed" in text and setting.split(".")[-1].split(":")[0] in text


def test_a_policy_already_on_the_base_is_the_projects_own(tmp_path):
    repo = _repository(tmp_path, DRC)
    _edit_pro(repo / "board", _drc_severity("ignore"))
    base = _commit(repo, "the project's own policy")
    (repo / "board" / "README.md").write_text("a change that is not the board\n")
    _commit(repo)
    code, result = _check(repo, tmp_path, "--base-ref", base)
    assert code == 0 and not [f for f in result["findings"] if f.get("relaxed")]
    assert result["readiness"] == "at-risk"


def test_a_head_that_tightens_its_policy_relaxes_nothing(tmp_path):
    repo = _repository(tmp_path, DRC)
    base = _git(repo, "rev-parse", "HEAD")
    _edit_pro(repo / "board", _drc_severity("error"))
    (repo / ".boardready.toml").write_text('[severity]\n"board.dangling-track" = "high"\n')
    _commit(repo)
    code, result = _check(repo, tmp_path, "--base-ref", base)
    assert code == 1 and not [f for f in result["findings"] if f.get("relaxed")]


# -- a hostile base never costs the head its verdict ------------------------------------------

def _hostile_base(tmp_path: Path, plant) -> tuple[Path, str]:
    """A repository whose base commit holds ``plant``'s hostile entries beside a good project,
    and whose head is that project, untouched."""
    repo = _repository(tmp_path, DRC)
    plant(repo)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "hostile base")
    base = _git(repo, "rev-parse", "HEAD")
    _git(repo, "rm", "-q", "-r", "--cached", ".")
    for path in list(repo.iterdir()):
        if path.name != ".git":
            shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()
    shutil.copytree(DRC, repo / "board", ignore=shutil.ignore_patterns("kicad-*.json", "*.rpt"))
    _commit(repo)
    return repo, base


def _absolute_link(repo: Path):
    (repo / "board" / "drc-violation.kicad_sch").unlink()
    os.symlink("/etc/passwd", repo / "board" / "drc-violation.kicad_sch")
    os.symlink("/etc", repo / "board" / "etc")
    os.symlink("/etc/hostname", repo / ".boardready.toml")


def _link_out_of_the_tree(repo: Path):
    (repo / "board" / "drc-violation.kicad_pro").unlink()
    os.symlink("../../../../../../../etc/passwd", repo / "board" / "drc-violation.kicad_pro")
    os.symlink("../..", repo / "board" / "up.kicad_sch")


@pytest.mark.parametrize("plant", [_absolute_link, _link_out_of_the_tree], ids=["absolute link", "link out of tree"])
def test_a_base_holding_links_leaves_the_heads_verdict_whole(tmp_path, plant):
    repo, base = _hostile_base(tmp_path, plant)
    alone, expected = _check(repo, tmp_path)
    code, result = _check(repo, tmp_path, "--base-ref", base)
    assert (code, result["readiness"], result["score"]) == (alone, expected["readiness"], expected["score"])
    assert {f["fingerprint"] for f in expected["findings"]} <= {f["fingerprint"] for f in result["findings"]}
    assert not [f for f in result["findings"] if f.get("relaxed")]


def test_a_base_with_a_device_and_a_link_in_its_checkout_leaves_the_heads_verdict_whole(tmp_path):
    repo = _repository(tmp_path, DRC)
    checkout = tmp_path / "base"
    shutil.copytree(DRC, checkout / "board")
    (checkout / "board" / "drc-violation.kicad_pcb").unlink()
    os.symlink("/dev/zero", checkout / "board" / "drc-violation.kicad_pcb")
    (checkout / "board" / "drc-violation.kicad_sch").unlink()
    os.mkfifo(checkout / "board" / "drc-violation.kicad_sch")
    alone, expected = _check(repo, tmp_path)
    code, result = _check(repo, tmp_path, "--base", str(checkout))
    assert (code, result["readiness"]) == (alone, expected["readiness"])
    [note] = [f for f in result["findings"] if f["ruleId"] == "base.unreadable"]
    assert note["severity"] == "info" and "diff" in note["message"]


def test_an_unreadable_base_counts_every_lowering_setting_of_the_head_as_relaxed(tmp_path):
    repo = _repository(tmp_path, DRC)
    _edit_pro(repo / "board", _drc_severity("ignore"))   # on the base too: without the base no one can tell
    _commit(repo)
    code, result = _check(repo, tmp_path, "--base-ref", "0" * 40)
    assert code == 1
    [note] = [f for f in result["findings"] if f["ruleId"] == "base.unreadable"]
    assert "policy comparison" in note["message"]
    [relaxed] = [f for f in result["findings"] if f.get("relaxed")]
    assert relaxed["ruleId"] == "board.edge-clearance" and relaxed["relaxed"]["to"] == "ignored"


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="a process's own peak memory is read from /proc")
def test_a_base_holding_a_256_mib_file_is_never_read_whole(tmp_path):
    repo = _repository(tmp_path, DRC)
    base_head = _git(repo, "rev-parse", "HEAD")
    big = repo / "board" / "huge.kicad_pcb"
    with open(big, "wb") as handle:   # sparse: 256 MiB of nothing on disk
        handle.truncate(256 * 1024 * 1024)
    _git(repo, "add", "board/huge.kicad_pcb")
    _git(repo, "commit", "-q", "-m", "a huge board in the base")
    base = _git(repo, "rev-parse", "HEAD")
    _git(repo, "rm", "-q", "board/huge.kicad_pcb")
    _commit(repo)
    assert base != base_head
    # The child's own peak is VmHWM (its address space's high-water mark). Not ru_maxrss: Linux
    # carries the parent's peak into it across fork/vfork and exec, so it read this pytest
    # process's size (460 MB once the whole folder had run in one process), not the check's.
    script = ("import json, re, sys; from checker.cli import main; "
              f"code = main({[str(repo / 'board'), '--root', str(repo), '--no-kicad-cli', '--format', 'json', '-o', str(tmp_path / 'big.json'), '--base-ref', base]!r}); "
              "status = open('/proc/self/status').read(); "
              "print(json.dumps([code, int(re.search(r'VmHWM:\\s+(\\d+) kB', status).group(1))]))")
    answer = subprocess.run([sys.executable, "-c", script], cwd=REPO_ROOT, capture_output=True, text=True, check=True)
    code, peak_kib = json.loads(answer.stdout.strip().splitlines()[-1])
    assert "huge.kicad_pcb" in answer.stderr and "input limit" in answer.stderr
    result = json.loads((tmp_path / "big.json").read_text())
    assert code == 1 and result["readiness"] == "blocked"
    assert peak_kib < 200 * 1024, f"peak {peak_kib} KiB: the base was read into memory"
