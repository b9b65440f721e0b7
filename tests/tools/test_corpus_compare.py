"""bin/corpus (tools/corpus.py, tools/corpus_compare.py) on committed fixture projects, not
the corpus: a manifest written and read back, the cache verified by its hashes, and the
comparison of the checker (in its child process) with KiCad 9's committed reports."""
from __future__ import annotations

import gzip
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tools import corpus, corpus_compare

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


@pytest.fixture
def tiny_corpus(tmp_path, monkeypatch):
    """A corpus of its own under tmp_path: cache, reports and manifest."""
    monkeypatch.setattr(corpus, "CACHE", tmp_path / "cache")
    monkeypatch.setattr(corpus, "REPORTS", tmp_path / "kicad9")
    monkeypatch.setattr(corpus, "MANIFEST", tmp_path / "manifest.toml")
    monkeypatch.setattr(corpus, "MIRROR", tmp_path / "no-mirror")

    def add(entry_id: str, source: Path, board: str | None, schematic: str | None) -> corpus.Entry:
        names = [n for n in (board, schematic) if n] + [p.name for p in source.glob("*.kicad_pro")]
        entry = corpus.Entry(id=entry_id, repository="fixtures/" + entry_id, commit="0" * 40,
                             board=f"hw/{board}" if board else "", schematic=f"hw/{schematic}" if schematic else None,
                             project=f"hw/{next(source.glob('*.kicad_pro')).name}", licence="see fixture",
                             kicad_format=20211014, kicad_major=6, copper_layers=2, sheets=int(bool(schematic)))
        for name in names:
            local = entry.folder / "hw" / name
            local.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source / name, local)
            entry.files[f"hw/{name}"] = corpus.sha256(local.read_bytes())
        for kind in ("drc", "erc"):
            report = source / f"kicad-{kind}.json"
            if report.exists():
                corpus.write_report(entry, kind, json.loads(report.read_text(encoding="utf-8")))
        return entry

    return add


def test_manifest_round_trip_and_hashes(tiny_corpus):
    entry = tiny_corpus("track-clearance", FIXTURES / "kicad-planted" / "track-clearance", "ecc83-pp.kicad_pcb", None)
    entry.features = ["zones"]
    corpus.write_manifest([entry], corpus.MANIFEST)
    (read,) = corpus.load_manifest(corpus.MANIFEST)
    assert read == entry
    assert corpus.verify(read) == []
    (read.folder / "hw" / "ecc83-pp.kicad_pro").write_text("{}", encoding="utf-8")
    assert corpus.verify(read) == ["hw/ecc83-pp.kicad_pro: SHA-256 differs"]


def test_a_large_report_is_kept_gzipped_and_read_back(tiny_corpus, monkeypatch):
    entry = tiny_corpus("track-clearance", FIXTURES / "kicad-planted" / "track-clearance", "ecc83-pp.kicad_pcb", None)
    monkeypatch.setattr(corpus, "GZIP_ABOVE_BYTES", 10)
    report = {"violations": [{"type": "clearance"}] * 50}
    path = corpus.write_report(entry, "drc", report)
    assert path.name == "drc.json.gz" and not (entry.reports / "drc.json").exists()
    assert json.loads(gzip.decompress(path.read_bytes())) == report
    assert corpus.read_report(entry, "drc") == report


def test_board_errors_found_and_verdicts(tiny_corpus):
    entry = tiny_corpus("track-clearance", FIXTURES / "kicad-planted" / "track-clearance", "ecc83-pp.kicad_pcb", None)
    result = corpus_compare.compare_entry(entry, live=None)
    assert result is not None and not result.crash and not result.refused
    clearance = result.drc["clearance"]
    assert (clearance.kicad_errors, clearance.errors_found) == (2, 2)
    assert clearance.beyond == 0
    assert result.kicad_board_verdict == result.checker_board_verdict == "blocked"
    assert result.agrees and result.board_agrees
    assert result.checker_seconds > 0
    facts = corpus_compare.summary([result])
    assert facts["kicad_drc_errors_found"] == facts["kicad_drc_errors"] == 2
    assert facts["crashes"] == [] and facts["board_verdict_agrees"] == 1


def test_erc_errors_found_per_type(tiny_corpus):
    entry = tiny_corpus("outputs-shorted", FIXTURES / "kicad-planted-erc" / "outputs-shorted", None,
                        "multi_unit_7400.kicad_sch")
    entry.board = "hw/none.kicad_pcb"
    (entry.reports / "drc.json").write_text(json.dumps({"violations": []}), encoding="utf-8")
    result = corpus_compare.compare_entry(entry, live=None)
    assert result is not None and not result.crash
    kicad = json.loads((FIXTURES / "kicad-planted-erc" / "outputs-shorted" / "kicad-erc.json").read_text())
    errors = sum(v["severity"] == "error" for s in kicad["sheets"] for v in s["violations"])
    assert errors and sum(r.kicad_errors for r in result.erc.values()) == errors
    assert sum(r.errors_found for r in result.erc.values()) == errors
    assert result.kicad_board_verdict == "passes"


def test_a_crashing_checker_is_a_crash_not_a_verdict(tiny_corpus, monkeypatch):
    entry = tiny_corpus("track-clearance", FIXTURES / "kicad-planted" / "track-clearance", "ecc83-pp.kicad_pcb", None)
    monkeypatch.setattr(corpus_compare, "CHILD_MEMORY_BYTES", 8 * 1024 ** 2)   # too little to start Python
    result = corpus_compare.compare_entry(entry, live=None)
    assert result.crash and result.checker_verdict == "?"
    assert corpus_compare.summary([result])["crashes"][0]["id"] == "track-clearance"


def test_a_missing_file_skips_the_entry(tiny_corpus, capsys):
    entry = tiny_corpus("track-clearance", FIXTURES / "kicad-planted" / "track-clearance", "ecc83-pp.kicad_pcb", None)
    (entry.folder / "hw" / "ecc83-pp.kicad_pcb").unlink()
    assert corpus_compare.compare_entry(entry, live=None) is None
    assert "not in the cache" in capsys.readouterr().out


def _repository(root: Path, files: dict[str, bytes], links: dict[str, str] | None = None) -> Path:
    """A fetched repository as tools/corpus.py finds it: <owner>+<name>/repo with a git directory."""
    work = root / "owner+name" / "repo"
    for path, data in files.items():
        (work / path).parent.mkdir(parents=True, exist_ok=True)
        (work / path).write_bytes(data)
    for path, target in (links or {}).items():
        (work / path).symlink_to(target)
    git = ["git", "-C", str(work), "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "boards"], check=True)
    return root


BOARD = (b'(kicad_pcb (version 20240108) (generator "pcbnew")\n  (layers\n    (0 "F.Cu" signal)\n'
         b'    (31 "B.Cu" signal)\n  )\n  (setup)\n)\n')


def test_a_project_is_taken_without_symbolic_links(tiny_corpus, tmp_path):
    mirror = _repository(tmp_path / "mirror", {"hw/b.kicad_pcb": BOARD, "hw/b.kicad_pro": b"{}",
                                                "rules/JLCPCB.kicad_dru": b"(version 1)\n", "LICENSE": b"MIT License\n"},
                         links={"hw/b.kicad_dru": "../rules/JLCPCB.kicad_dru"})
    entry = corpus.take("owner/name", "hw/b.kicad_pcb", mirror=mirror)
    assert sorted(entry.files) == ["hw/b.kicad_pcb", "hw/b.kicad_pro"]
    assert (entry.kicad_format, entry.kicad_major, entry.copper_layers, entry.licence) == (20240108, 8, 2, "MIT")
    assert corpus.verify(entry) == []
    corpus.write_manifest([entry], corpus.MANIFEST)
    (entry.folder / "hw" / "b.kicad_pro").unlink()
    assert corpus.materialize(corpus.load_manifest(corpus.MANIFEST)[0], mirror=mirror) == []
    assert corpus.verify(entry) == []


def test_a_git_lfs_pointer_is_not_taken(tiny_corpus, tmp_path):
    mirror = _repository(tmp_path / "mirror", {"b.kicad_pcb": b"version https://git-lfs.github.com/spec/v1\noid x\n"})
    with pytest.raises(RuntimeError, match="Git LFS pointer"):
        corpus.take("owner/name", "b.kicad_pcb", mirror=mirror)


def test_profile_without_a_published_rule_file_is_refused():
    with pytest.raises(SystemExit, match="no published .kicad_dru"):
        corpus_compare.fab_rules("oshpark-2layer")
