"""`bin/soak`: the production soak monitor.

Samples `GET /api/health/ready` of a running service every `--interval`
(default 10 s) for `--duration` (default 4 h, 5 minutes to 12 hours), then
reports latency (p50, p95, p99, maximum) and availability. A sample fails on a
connection error, a timeout or any answer but 200. After
`--max-consecutive-failures` (default 5) failed samples in a row it stops early
with status `soak_terminated_early`. Ctrl-C (or SIGTERM) lets the sample under
way finish, then prints and writes the report so far (`soak_interrupted`); a
second Ctrl-C stops at once, still writing what was measured.

Exit 0 only when the soak ran its whole duration with availability at least
`--min-availability` (default 99.9 %); 1 when it ended early, fell below that,
or the report could not be written; 2 on a refused argument; 130 when
interrupted.

The report (a JSON file, mode 0600, `--report PATH` or `.data/soak-<UTC
stamp>.json`) holds aggregates only: counts, percentiles, availability, status,
times and settings. The base URL names a deployment, so only its scheme is kept.
"""
from __future__ import annotations

import argparse
import dataclasses
import datetime
import math
import re
import signal
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

import httpx

from tools.report_file import default_report_path, write_private_json

ROOT = Path(__file__).resolve().parent.parent
READY_PATH = "/api/health/ready"

MIN_DURATION_S, MAX_DURATION_S = 5 * 60, 12 * 60 * 60
DEFAULT_DURATION_S, DEFAULT_INTERVAL_S = 4 * 60 * 60, 10
# Faster than once a second is load, not monitoring.
MIN_INTERVAL_S = 1
# A sample must be over before the next is due, and a readiness probe that
# waits a minute has failed whatever it eventually says.
MIN_TIMEOUT_S, MAX_TIMEOUT_S, DEFAULT_TIMEOUT_S = 0.1, 60, 5
DEFAULT_MAX_CONSECUTIVE_FAILURES, MAX_MAX_CONSECUTIVE_FAILURES = 5, 10_000
# 99.9 %: a default 4-hour soak takes 1440 samples; one failed sample (99.93 %)
# passes, a second (99.86 %) does not.
DEFAULT_MIN_AVAILABILITY = 99.9
# Only the status is needed; the body is read (a probe's latency is the whole
# answer's) but not past this, so a hostile server cannot make us buffer much.
MAX_BODY_BYTES = 64 * 1024
MAX_URL_LENGTH = 2048

COMPLETED, TERMINATED_EARLY, INTERRUPTED = "soak_completed", "soak_terminated_early", "soak_interrupted"
EXIT_PASSED, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130

_SPAN = re.compile(r"([0-9]{1,9})(?:\.([0-9]{1,3}))?([smh]?)")  # ASCII digits only
_UNIT_SECONDS = {"": 1, "s": 1, "m": 60, "h": 3600}


def parse_span(text: str) -> float:
    """Seconds in `90s`, `5m`, `4h`, `2.5s` or a bare number of seconds; ValueError otherwise."""
    match = _SPAN.fullmatch(text)
    if not match:
        raise ValueError(f"{text[:40]!r} is not a span: a number with an optional unit s, m or h (90s, 5m, 4h)")
    whole, fraction, unit = match.groups()
    return (int(whole) + (int(fraction.ljust(3, "0")) / 1000 if fraction else 0)) * _UNIT_SECONDS[unit]


def format_span(seconds: float) -> str:
    for unit, size in (("h", 3600), ("m", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{int(seconds // size)}{unit}"
    return f"{seconds:g}s"


def health_url(base_url: str) -> str:
    """The readiness URL under `base_url`, which may carry a path prefix (a reverse proxy's)."""
    return base_url.rstrip("/") + READY_PATH


def check_base_url(text: str) -> str:
    """`text` if it is an http(s) URL of a host with nothing a probe should not send; ValueError otherwise."""
    if len(text) > MAX_URL_LENGTH:
        raise ValueError(f"the base URL is longer than {MAX_URL_LENGTH} characters")
    if any(c.isspace() or not c.isprintable() for c in text):
        raise ValueError("the base URL holds whitespace or control characters")
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https"):
        raise ValueError("the base URL must start with http:// or https://")
    if not parts.hostname:
        raise ValueError("the base URL names no host")
    if parts.username is not None or parts.password is not None:
        raise ValueError("the base URL holds credentials; the readiness probe needs none")
    if parts.query or parts.fragment or text.endswith(("?", "#")):
        raise ValueError("the base URL holds a query or fragment; give the service's root, e.g. http://host:8000")
    try:
        _ = parts.port     # parsed on access: a port that is not a number raises
    except ValueError:
        raise ValueError("the base URL's port is not a number from 0 to 65535") from None
    try:
        parts.hostname.encode("idna")  # what name resolution does with it: no empty or overlong labels
        httpx.URL(health_url(text))
    except (httpx.InvalidURL, UnicodeError):
        raise ValueError("the base URL's host is not a valid name or address") from None
    return text


@dataclasses.dataclass(frozen=True)
class SoakSettings:
    """What one soak does; the CLI checks the ranges, `run_soak` trusts them (tests run short soaks)."""
    base_url: str
    duration_s: float = DEFAULT_DURATION_S
    interval_s: float = DEFAULT_INTERVAL_S
    timeout_s: float = DEFAULT_TIMEOUT_S
    max_consecutive_failures: int = DEFAULT_MAX_CONSECUTIVE_FAILURES
    min_availability_percent: float = DEFAULT_MIN_AVAILABILITY

    @property
    def planned_samples(self) -> int:
        return max(1, math.ceil(self.duration_s / self.interval_s))


@dataclasses.dataclass(frozen=True)
class Sample:
    ok: bool
    latency_ms: float
    failure: str | None = None  # "connection", "timeout" or "status"
    status_code: int | None = None


@dataclasses.dataclass
class SoakRecord:
    """What has been measured so far; kept outside `run_soak` so that an
    interrupted soak still has its samples to report."""
    settings: SoakSettings
    started_at: datetime.datetime | None = None
    ended_at: datetime.datetime | None = None
    started_monotonic: float | None = None
    ended_monotonic: float | None = None
    samples: list[Sample] = dataclasses.field(default_factory=list)
    succeeded: int = 0
    consecutive_failures: int = 0
    longest_failure_run: int = 0
    status: str | None = None

    def add(self, sample: Sample) -> None:
        self.samples.append(sample)
        self.succeeded += sample.ok
        self.consecutive_failures = 0 if sample.ok else self.consecutive_failures + 1
        self.longest_failure_run = max(self.longest_failure_run, self.consecutive_failures)

    @property
    def availability_percent(self) -> float | None:
        return 100 * self.succeeded / len(self.samples) if self.samples else None


def take_sample(client: httpx.Client, url: str, timeout_s: float, stop: threading.Event | None = None) -> Sample:
    """One readiness probe on a fresh connection (what a new client of the service meets)."""
    began = time.perf_counter()
    deadline = began + timeout_s
    try:
        with client.stream("GET", url) as response:
            read = 0
            for chunk in response.iter_raw():
                read += len(chunk)
                # httpx's timeout is per read; this bounds the whole answer.
                if read >= MAX_BODY_BYTES or time.perf_counter() > deadline or (stop and stop.is_set()):
                    break
            if time.perf_counter() > deadline:
                raise httpx.ReadTimeout("the answer took longer than the timeout")
            code = response.status_code
    except httpx.TimeoutException:
        return Sample(False, _ms_since(began), "timeout")
    except (httpx.HTTPError, OSError, UnicodeError):  # refused, reset, DNS, TLS, malformed answer
        return Sample(False, _ms_since(began), "connection")
    latency = _ms_since(began)
    if code != 200:
        return Sample(False, latency, "status", code)
    return Sample(True, latency, status_code=code)


def _ms_since(began: float) -> float:
    return (time.perf_counter() - began) * 1000


def run_soak(settings: SoakSettings, record: SoakRecord | None = None, stop: threading.Event | None = None,
             on_sample: Callable[[SoakRecord, Sample], None] | None = None) -> SoakRecord:
    """Sample every `interval_s` on a fixed grid until `duration_s` has passed,
    `max_consecutive_failures` samples in a row failed, or `stop` is set."""
    record = record or SoakRecord(settings)
    stop = stop or threading.Event()
    url = health_url(settings.base_url)
    record.started_at = _utc_now()
    record.started_monotonic = start = time.monotonic()
    # No keep-alive: a server may close an idle pooled connection between
    # samples (the interval is usually longer than its keep-alive), so some
    # samples would reuse a connection and others not. No proxies from the
    # environment: the soak measures the service, not a path chosen elsewhere.
    client = httpx.Client(timeout=settings.timeout_s, follow_redirects=False, trust_env=False,
                          limits=httpx.Limits(max_keepalive_connections=0),
                          headers={"User-Agent": "boardready-soak"})
    try:
        slot = 0
        while not stop.is_set():
            sample = take_sample(client, url, settings.timeout_s, stop)
            record.add(sample)
            if on_sample:
                on_sample(record, sample)
            if record.consecutive_failures >= settings.max_consecutive_failures:
                record.status = TERMINATED_EARLY
                break
            # The next slot on the grid still ahead (a slow sample skips slots rather than bunching them).
            elapsed = time.monotonic() - start
            slot = max(slot + 1, math.ceil(elapsed / settings.interval_s))
            if slot * settings.interval_s >= settings.duration_s:
                record.status = COMPLETED  # every slot sampled; the window still runs to its end
                stop.wait(start + settings.duration_s - time.monotonic())
                break
            stop.wait(start + slot * settings.interval_s - time.monotonic())
        else:
            record.status = INTERRUPTED
    finally:
        client.close()
        finish(record)
    return record


def finish(record: SoakRecord, status: str | None = None) -> None:
    """Close `record`: an end time and, when none was reached, `status`."""
    if record.ended_at is None:
        record.ended_at = _utc_now()
        record.ended_monotonic = time.monotonic()
    if record.status is None:
        record.status = status or INTERRUPTED


def _utc_now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


def percentile(values: list[float], p: float) -> float | None:
    """Nearest-rank percentile (a value that was measured), None when there are none."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


def passed(record: SoakRecord) -> bool:
    availability = record.availability_percent
    return (record.status == COMPLETED and availability is not None
            and availability >= record.settings.min_availability_percent)


def report(record: SoakRecord) -> dict:
    """The report document: aggregates only. Latency is of the samples answered
    200; the failed ones count against availability, by kind."""
    settings = record.settings
    latencies = [s.latency_ms for s in record.samples if s.ok]
    failures = {"connection": 0, "timeout": 0, "status": 0}
    status_codes: dict[str, int] = {}
    for s in record.samples:
        if s.failure:
            failures[s.failure] += 1
        if s.failure == "status":
            status_codes[str(s.status_code)] = status_codes.get(str(s.status_code), 0) + 1
    elapsed = ((record.ended_monotonic or time.monotonic()) - record.started_monotonic
               if record.started_monotonic is not None else 0.0)
    availability = record.availability_percent

    def rounded(value: float | None, digits: int) -> float | None:
        return None if value is None else round(value, digits)

    return {
        "tool": "soak",
        "status": record.status,
        "passed": passed(record),
        "target": {"scheme": urlsplit(settings.base_url).scheme, "path": READY_PATH},
        "started_at": record.started_at.isoformat(timespec="seconds") if record.started_at else None,
        "ended_at": record.ended_at.isoformat(timespec="seconds") if record.ended_at else None,
        "elapsed_seconds": round(elapsed, 3),
        "settings": {
            "duration_seconds": settings.duration_s,
            "interval_seconds": settings.interval_s,
            "timeout_seconds": settings.timeout_s,
            "max_consecutive_failures": settings.max_consecutive_failures,
            "min_availability_percent": settings.min_availability_percent,
        },
        "samples": {
            "planned": settings.planned_samples,
            "taken": len(record.samples),
            "succeeded": len(latencies),
            "failed": len(record.samples) - len(latencies),
            "failures": failures,
            "failure_status_codes": status_codes,
            "longest_failure_run": record.longest_failure_run,
        },
        "availability_percent": rounded(availability, 4),
        "latency_ms": {name: rounded(percentile(latencies, p), 2)
                       for name, p in (("p50", 50), ("p95", 95), ("p99", 99), ("max", 100))},
    }


def exit_code(document: dict) -> int:
    if document["status"] == INTERRUPTED:
        return EXIT_INTERRUPTED
    return EXIT_PASSED if document["passed"] else EXIT_FAILED


# --- the command line -----------------------------------------------------------------------------------------


def _span_argument(text: str) -> float:
    try:
        return parse_span(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _url_argument(text: str) -> str:
    try:
        return check_base_url(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="bin/soak", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("base_url", nargs="?", type=_url_argument, metavar="BASE_URL",
                        help="the service's root, e.g. http://127.0.0.1:8000")
    parser.add_argument("--base-url", dest="base_url_option", type=_url_argument, metavar="URL",
                        help="the same, as an option")
    parser.add_argument("--duration", type=_span_argument, default=DEFAULT_DURATION_S, metavar="SPAN",
                        help="how long to sample: 5m to 12h (default 4h); 90s, 5m, 4h or seconds")
    parser.add_argument("--interval", type=_span_argument, default=DEFAULT_INTERVAL_S, metavar="SPAN",
                        help=f"time between samples: {MIN_INTERVAL_S}s up to the duration (default 10s)")
    parser.add_argument("--timeout", type=_span_argument, default=None, metavar="SPAN",
                        help=f"per-sample timeout: {MIN_TIMEOUT_S}s to {MAX_TIMEOUT_S}s and at most the interval "
                             f"(default {DEFAULT_TIMEOUT_S}s, or the interval when shorter)")
    parser.add_argument("--max-consecutive-failures", type=int, default=DEFAULT_MAX_CONSECUTIVE_FAILURES,
                        metavar="N", help=f"stop early after N failed samples in a row: 1 to "
                                          f"{MAX_MAX_CONSECUTIVE_FAILURES} (default {DEFAULT_MAX_CONSECUTIVE_FAILURES})")
    parser.add_argument("--min-availability", type=float, default=DEFAULT_MIN_AVAILABILITY, metavar="PERCENT",
                        help=f"least availability that passes: 0 to 100 (default {DEFAULT_MIN_AVAILABILITY})")
    parser.add_argument("--report", type=Path, default=None, metavar="PATH",
                        help="where the JSON report goes (default .data/soak-<UTC stamp>.json)")
    return parser


def parse_arguments(argv: list[str] | None) -> tuple[SoakSettings, Path]:
    """Validated settings and the report path; argparse's exit 2 with a message on anything refused."""
    parser = _parser()
    args = parser.parse_args(argv)
    if args.base_url and args.base_url_option and args.base_url != args.base_url_option:
        parser.error("give the base URL once: as BASE_URL or as --base-url")
    base_url = args.base_url or args.base_url_option
    if not base_url:
        parser.error("the base URL is required (BASE_URL or --base-url)")
    if not MIN_DURATION_S <= args.duration <= MAX_DURATION_S:
        parser.error(f"--duration must be from 5m to 12h, not {format_span(args.duration)}")
    if not MIN_INTERVAL_S <= args.interval <= args.duration:
        parser.error(f"--interval must be from {MIN_INTERVAL_S}s up to the duration "
                     f"({format_span(args.duration)}), not {format_span(args.interval)}")
    timeout = args.timeout if args.timeout is not None else min(DEFAULT_TIMEOUT_S, args.interval)
    if not MIN_TIMEOUT_S <= timeout <= min(MAX_TIMEOUT_S, args.interval):
        parser.error(f"--timeout must be from {MIN_TIMEOUT_S}s to {MAX_TIMEOUT_S}s and at most the interval "
                     f"({format_span(args.interval)}), not {format_span(timeout)}")
    if not 1 <= args.max_consecutive_failures <= MAX_MAX_CONSECUTIVE_FAILURES:
        parser.error(f"--max-consecutive-failures must be from 1 to {MAX_MAX_CONSECUTIVE_FAILURES}, "
                     f"not {args.max_consecutive_failures}")
    if not (math.isfinite(args.min_availability) and 0 <= args.min_availability <= 100):
        parser.error(f"--min-availability must be a percentage from 0 to 100, not {args.min_availability:g}")
    report_path = args.report or default_report_path("soak", ROOT / ".data")
    if report_path.is_dir():
        parser.error(f"--report {report_path} is a directory; give a file path")
    settings = SoakSettings(base_url=base_url, duration_s=args.duration, interval_s=args.interval,
                            timeout_s=timeout, max_consecutive_failures=args.max_consecutive_failures,
                            min_availability_percent=args.min_availability)
    return settings, report_path


class Progress:
    """Progress on stderr: a live bar on a terminal; otherwise the first sample,
    every failure and a line a minute, so a log shows the soak is alive."""

    def __init__(self, settings: SoakSettings):
        from rich.console import Console
        self.console = Console(stderr=True)
        self.settings = settings
        self.bar = None
        self.last_line = 0.0
        if self.console.is_terminal:
            from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
            from rich.progress import Progress as Bar
            self.bar = Bar(TextColumn("soak"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                           TextColumn("{task.description}"), console=self.console, transient=True,
                           refresh_per_second=1)  # samples come seconds apart
            self.task = self.bar.add_task("", total=settings.planned_samples)

    def __enter__(self) -> Progress:
        self.console.print(f"soak: GET {READY_PATH} every {format_span(self.settings.interval_s)} "
                           f"for {format_span(self.settings.duration_s)}", highlight=False)
        if self.bar:
            self.bar.start()
        return self

    def __exit__(self, *_exc) -> None:
        if self.bar:
            self.bar.stop()

    def __call__(self, record: SoakRecord, sample: Sample) -> None:
        summary = (f"{record.succeeded}/{len(record.samples)} ok, availability {record.availability_percent:.3f}%, "
                   f"last {sample.latency_ms:.1f} ms")
        if self.bar:
            self.bar.update(self.task, completed=len(record.samples), description=summary)
        if not sample.ok:
            what = f"status {sample.status_code}" if sample.failure == "status" else sample.failure
            self.console.print(f"soak: sample {len(record.samples)} failed ({what}); "
                               f"{record.consecutive_failures} in a row", highlight=False)
        elif not self.bar and (len(record.samples) == 1 or time.monotonic() - self.last_line >= 60):
            self.last_line = time.monotonic()
            self.console.print(f"soak: sample {len(record.samples)} of {record.settings.planned_samples}: {summary}",
                               highlight=False)


def print_table(document: dict, report_path: Path) -> None:
    from rich.console import Console
    from rich.table import Table

    def figure(value, unit: str = "") -> str:
        return "-" if value is None else f"{value:,.2f}{unit}" if isinstance(value, float) else f"{value:,}{unit}"

    samples, latency = document["samples"], document["latency_ms"]
    table = Table(title=f"bin/soak: {document['status']} ({'passed' if document['passed'] else 'failed'})")
    table.add_column("figure")
    table.add_column("value", justify="right")
    table.add_row("samples taken / planned", f"{samples['taken']:,} / {samples['planned']:,}")
    table.add_row("succeeded", figure(samples["succeeded"]))
    table.add_row("failed (connection / timeout / status)",
                  f"{samples['failed']:,} ({samples['failures']['connection']} / {samples['failures']['timeout']}"
                  f" / {samples['failures']['status']})")
    table.add_row("longest failure run", figure(samples["longest_failure_run"]))
    availability = document["availability_percent"]
    table.add_row("availability (at least)", f"{'-' if availability is None else f'{availability:.3f}'}% "
                                             f"({document['settings']['min_availability_percent']:g}%)")
    for name in ("p50", "p95", "p99", "max"):
        table.add_row(f"latency {name}", figure(latency[name], " ms"))
    table.add_row("elapsed", f"{document['elapsed_seconds']:,.1f} s")
    Console(soft_wrap=True).print(table)
    print(f"report: {report_path}")


def main(argv: list[str] | None = None) -> int:
    settings, report_path = parse_arguments(argv)
    record = SoakRecord(settings)
    stop = threading.Event()

    def on_signal(signum, _frame):
        if stop.is_set():
            raise KeyboardInterrupt  # a second one: stop now, the finally below still reports
        stop.set()

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        with Progress(settings) as progress:
            run_soak(settings, record, stop, on_sample=progress)
    except KeyboardInterrupt:
        pass
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        finish(record, INTERRUPTED)
    document = report(record)
    print_table(document, report_path)
    try:
        write_private_json(report_path, document)
    except OSError as error:
        print(f"error: could not write the report to {report_path}: {error.strerror or error}", file=sys.stderr)
        return EXIT_FAILED
    return exit_code(document)


if __name__ == "__main__":
    sys.exit(main())
