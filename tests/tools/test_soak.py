"""bin/soak (tools/soak.py): argument validation, the report's mode and keys,
early termination, a short soak and an interrupted one, against real HTTP
servers started here. The CLI's 5-minute floor is tested as a refusal; the
short soaks go through `run_soak`, which takes settings already checked."""
from __future__ import annotations

import dataclasses
import json
import os
import signal
import socket
import stat
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tools import soak

ROOT = Path(__file__).resolve().parents[2]
REPORT_KEYS = {"tool", "status", "passed", "target", "started_at", "ended_at", "elapsed_seconds", "settings",
               "samples", "availability_percent", "latency_ms"}


class ReadinessServer:
    """A small real HTTP server on 127.0.0.1 that answers /api/health/ready
    with the statuses it is given in turn (the last one from then on)."""

    def __init__(self, statuses=(200,)):
        self.statuses, self.requests, self.lock = list(statuses), 0, threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                with outer.lock:
                    code = outer.statuses[min(outer.requests, len(outer.statuses) - 1)]
                    outer.requests += 1
                body = b'{"ok": true}' if self.path == soak.READY_PATH and code == 200 else b'{"ok": false}'
                self.send_response(code if self.path == soak.READY_PATH else 404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *_):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *_):
        self.server.shutdown()
        self.server.server_close()


def closed_port_url() -> str:
    """An address on which nothing listens: a port the kernel gave us, then closed."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def refused(capsys, *argv) -> str:
    with pytest.raises(SystemExit) as exit_info:
        soak.parse_arguments(list(argv))
    assert exit_info.value.code == 2
    return capsys.readouterr().err


# --- spans and arguments --------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, seconds", [
    ("90s", 90), ("5m", 300), ("4h", 14400), ("12h", 43200), ("600", 600), ("0", 0), ("2.5s", 2.5), ("1.5m", 90),
])
def test_spans_read_seconds_minutes_hours_and_bare_seconds(text, seconds):
    assert soak.parse_span(text) == seconds


@pytest.mark.parametrize("text", ["", "5d", "-5m", "m", "5 m", " 5m", "5M", "1e3", "nan", "inf", "5m30s", "0x10",
                                  "1.2345s", "9" * 10, "５m"])
def test_spans_refuse_anything_else(text):
    with pytest.raises(ValueError, match="not a span"):
        soak.parse_span(text)


def test_defaults_are_the_specs(tmp_path):
    settings, report_path = soak.parse_arguments(["http://127.0.0.1:8000"])
    assert (settings.duration_s, settings.interval_s, settings.max_consecutive_failures) == (4 * 3600, 10, 5)
    assert settings.timeout_s == 5 and settings.min_availability_percent == 99.9
    assert report_path.parent == ROOT / ".data" and report_path.name.startswith("soak-")


def test_the_base_url_may_come_as_an_option_and_the_spans_in_any_unit(tmp_path):
    settings, report_path = soak.parse_arguments([
        "--base-url", "https://ready.example/prefix/", "--duration", "90m", "--interval", "30",
        "--timeout", "2.5s", "--max-consecutive-failures", "1", "--min-availability", "100",
        "--report", str(tmp_path / "r.json")])
    assert settings == soak.SoakSettings("https://ready.example/prefix/", 5400, 30, 2.5, 1, 100.0)
    assert report_path == tmp_path / "r.json"
    assert soak.health_url(settings.base_url) == "https://ready.example/prefix/api/health/ready"


@pytest.mark.parametrize("argv, message", [
    (["http://h", "--duration", "4m"], "--duration must be from 5m to 12h, not 4m"),
    (["http://h", "--duration", "299"], "--duration must be from 5m to 12h, not 299s"),
    (["http://h", "--duration", "12h", "--interval", "10s"], None),
    (["http://h", "--duration", "721m"], "--duration must be from 5m to 12h, not 721m"),
    (["http://h", "--duration", "5d"], "argument --duration: '5d' is not a span"),
    (["http://h", "--interval", "0"], "--interval must be from 1s up to the duration (4h), not 0s"),
    (["http://h", "--interval", "0.5s"], "--interval must be from 1s up to the duration"),
    (["http://h", "--duration", "5m", "--interval", "6m"], "--interval must be from 1s up to the duration (5m)"),
    (["http://h", "--interval=-10s"], "argument --interval: '-10s' is not a span"),
    (["http://h", "--interval", "2s", "--timeout", "3s"], "--timeout must be from 0.1s to 60s and at most the interval (2s)"),
    (["http://h", "--interval", "5m", "--timeout", "2m"], "--timeout must be from 0.1s to 60s"),
    (["http://h", "--timeout", "0"], "--timeout must be from 0.1s"),
    (["http://h", "--max-consecutive-failures", "0"], "--max-consecutive-failures must be from 1 to 10000, not 0"),
    (["http://h", "--max-consecutive-failures", "10001"], "--max-consecutive-failures must be from 1 to 10000"),
    (["http://h", "--max-consecutive-failures", "two"], "argument --max-consecutive-failures: invalid int value"),
    (["http://h", "--min-availability", "100.1"], "--min-availability must be a percentage from 0 to 100"),
    (["http://h", "--min-availability", "nan"], "--min-availability must be a percentage from 0 to 100"),
    ([], "the base URL is required"),
    (["http://a", "--base-url", "http://b"], "give the base URL once"),
])
def test_refused_arguments_exit_2_with_a_message_naming_the_flag(capsys, argv, message):
    if message is None:  # the range's upper end is accepted
        assert soak.parse_arguments(argv)[0].duration_s == 12 * 3600
        return
    assert message in refused(capsys, *argv)


@pytest.mark.parametrize("url, message", [
    ("ftp://h", "must start with http:// or https://"),
    ("127.0.0.1:8000", "must start with http:// or https://"),
    ("http://", "names no host"),
    ("http://user:secret@h", "holds credentials"),
    ("http://h/?token=x", "holds a query or fragment"),
    ("http://h/#x", "holds a query or fragment"),
    ("http://h:99999", "port is not a number"),
    ("http://a..b", "not a valid name or address"),
    ("http://h/ x", "whitespace or control characters"),
    ("http://h/" + "a" * 2048, "longer than 2048"),
])
def test_refused_base_urls(capsys, url, message):
    assert message in refused(capsys, url)


def test_a_report_path_that_is_a_directory_is_refused(capsys, tmp_path):
    assert "is a directory" in refused(capsys, "http://h", "--report", str(tmp_path))


# --- soaks through the core, on real servers ----------------------------------------------------------------------

def test_a_short_soak_against_a_ready_server_completes_and_passes(tmp_path):
    with ReadinessServer() as server:
        settings = soak.SoakSettings(server.base_url, duration_s=2, interval_s=0.2, timeout_s=2)
        seen = []
        record = soak.run_soak(settings, on_sample=lambda record, sample: seen.append(sample))
    document = soak.report(record)
    assert document["status"] == soak.COMPLETED and document["passed"] is True
    assert soak.exit_code(document) == soak.EXIT_PASSED
    samples = document["samples"]
    assert samples["taken"] == len(seen) == server.requests >= 2
    assert samples["succeeded"] == samples["taken"] and samples["failed"] == 0
    assert document["availability_percent"] == 100
    latency = document["latency_ms"]
    assert 0 < latency["p50"] <= latency["p95"] <= latency["p99"] <= latency["max"]

    path = soak.write_private_json(tmp_path / "soak.json", document)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert json.loads(path.read_text()) == document


def test_the_report_holds_aggregates_only(tmp_path):
    with ReadinessServer(statuses=(200, 503, 200)) as server:
        record = soak.run_soak(soak.SoakSettings(server.base_url, duration_s=1, interval_s=0.1, timeout_s=1))
        port = str(server.server.server_address[1])
    document = soak.report(record)
    assert set(document) == REPORT_KEYS
    assert document["target"] == {"scheme": "http", "path": "/api/health/ready"}
    assert set(document["latency_ms"]) == {"p50", "p95", "p99", "max"}
    assert set(document["samples"]) == {"planned", "taken", "succeeded", "failed", "failures",
                                        "failure_status_codes", "longest_failure_run"}
    assert document["samples"]["failure_status_codes"] == {"503": 1}
    text = json.dumps(document)
    assert "127.0.0.1" not in text and port not in text and '"ok"' not in text  # no host, port or payload


def test_failures_not_in_a_row_do_not_end_the_soak_but_count_against_availability():
    statuses = (200, 503, 200, 500, 200)
    with ReadinessServer(statuses=statuses) as server:
        settings = soak.SoakSettings(server.base_url, duration_s=1.5, interval_s=0.1, timeout_s=1,
                                     max_consecutive_failures=2)
        record = soak.run_soak(settings)
    document = soak.report(record)
    assert document["status"] == soak.COMPLETED
    assert document["samples"]["failed"] == 2 and document["samples"]["longest_failure_run"] == 1
    assert document["samples"]["failures"] == {"connection": 0, "timeout": 0, "status": 2}
    assert document["availability_percent"] < 100 and document["passed"] is False
    assert soak.exit_code(document) == soak.EXIT_FAILED
    # The threshold is the operator's: at 50 % the same soak passes.
    lenient = soak.SoakRecord(dataclasses.replace(settings, min_availability_percent=50), status=record.status)
    for sample in record.samples:
        lenient.add(sample)
    assert soak.passed(lenient)


def test_a_closed_port_ends_the_soak_after_the_consecutive_failures():
    settings = soak.SoakSettings(closed_port_url(), duration_s=600, interval_s=0.05, timeout_s=2,
                                 max_consecutive_failures=3)
    document = soak.report(soak.run_soak(settings))
    assert document["status"] == soak.TERMINATED_EARLY and document["passed"] is False
    assert document["samples"]["taken"] == 3
    assert document["samples"]["failures"] == {"connection": 3, "timeout": 0, "status": 0}
    assert document["availability_percent"] == 0
    assert document["latency_ms"] == {"p50": None, "p95": None, "p99": None, "max": None}
    assert soak.exit_code(document) == soak.EXIT_FAILED


def test_a_server_that_does_not_answer_in_time_is_a_timeout():
    with socket.socket() as listener:  # accepts connections (the backlog) but never answers
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        url = f"http://127.0.0.1:{listener.getsockname()[1]}"
        settings = soak.SoakSettings(url, duration_s=600, interval_s=0.2, timeout_s=0.2, max_consecutive_failures=1)
        document = soak.report(soak.run_soak(settings))
    assert document["status"] == soak.TERMINATED_EARLY
    assert document["samples"]["failures"] == {"connection": 0, "timeout": 1, "status": 0}


def test_a_set_stop_ends_the_soak_as_interrupted():
    stop = threading.Event()
    with ReadinessServer() as server:
        settings = soak.SoakSettings(server.base_url, duration_s=600, interval_s=0.1, timeout_s=1)
        record = soak.run_soak(settings, stop=stop, on_sample=lambda record, sample: stop.set())
    document = soak.report(record)
    assert document["status"] == soak.INTERRUPTED and document["samples"]["taken"] == 1
    assert document["passed"] is False and soak.exit_code(document) == soak.EXIT_INTERRUPTED


# --- the command line, as a process ---------------------------------------------------------------------------

def soak_process(*argv) -> subprocess.Popen:
    return subprocess.Popen([str(ROOT / "bin" / "soak"), *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=dict(os.environ, PYTHONUNBUFFERED="1"))


def test_sigint_prints_and_writes_the_report_so_far(tmp_path):
    report_path = tmp_path / "reports" / "soak.json"
    with ReadinessServer() as server:
        process = soak_process(server.base_url, "--duration", "5m", "--interval", "1s", "--report", str(report_path))
        try:
            for line in process.stderr:  # the first sample's line: the soak is under way
                if line.startswith("soak: sample 1 "):
                    break
            else:
                pytest.fail(f"bin/soak exited {process.wait()} before its first sample")
            process.send_signal(signal.SIGINT)
            out, err = process.communicate(timeout=60)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
    assert process.returncode == soak.EXIT_INTERRUPTED, err
    assert "soak_interrupted" in out and "latency p95" in out and str(report_path) in out
    assert stat.S_IMODE(report_path.stat().st_mode) == 0o600
    document = json.loads(report_path.read_text())
    assert set(document) == REPORT_KEYS
    assert document["status"] == soak.INTERRUPTED and document["passed"] is False
    assert document["samples"]["taken"] >= 1 and document["samples"]["failed"] == 0
    assert document["settings"]["duration_seconds"] == 300


def test_the_cli_refuses_a_soak_under_five_minutes_before_sampling(tmp_path):
    with ReadinessServer() as server:
        process = soak_process(server.base_url, "--duration", "2s", "--report", str(tmp_path / "r.json"))
        out, err = process.communicate(timeout=60)
    assert process.returncode == 2
    assert "--duration must be from 5m to 12h, not 2s" in err
    assert server.requests == 0 and not (tmp_path / "r.json").exists()


def test_the_cli_exits_1_with_a_report_when_the_service_is_down(tmp_path):
    report_path = tmp_path / "down.json"
    process = soak_process("--base-url", closed_port_url(), "--duration", "5m", "--interval", "1s",
                           "--max-consecutive-failures", "2", "--report", str(report_path))
    out, err = process.communicate(timeout=120)
    assert process.returncode == soak.EXIT_FAILED, err
    assert "soak_terminated_early" in out and "sample 2 failed (connection); 2 in a row" in err
    document = json.loads(report_path.read_text())
    assert document["status"] == soak.TERMINATED_EARLY and document["samples"]["taken"] == 2
    assert stat.S_IMODE(report_path.stat().st_mode) == 0o600
