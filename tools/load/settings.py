"""bin/load's settings: every one a variable and a flag, validated before anything starts.

A flag wins over its variable. Values are plain decimal numbers; anything
else, or a value outside the range, is refused (exit 2) naming the variable or
flag, the range and what was given. `--envelope` sets the spec's validated
envelope (1000 unique and 200 duplicate deliveries, 600 release runs over 12
repositories, concurrency 80 through a 50-connection pool cap) and refuses a
count set beside it, so that a report never mixes the two.

The refusals that protect a database come after the arguments are valid
(exit 3): `SERVICE_LOAD_CONFIRMATION` must be exactly
`isolated-disposable-database`; the server must be PostgreSQL 16
(`server_version_num` 16xxxx; `stack.py` checks it).
"""
from __future__ import annotations

import argparse
import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

PROFILES = ("representative", "soak-recovery", "database-interruption", "worker-process-interruption",
            "worker-fleet-interruption", "github-api-interruption")
CONFIRMATION_VARIABLE = "SERVICE_LOAD_CONFIRMATION"
CONFIRMATION = "isolated-disposable-database"
PROFILE_VARIABLE = "SERVICE_LOAD_PROFILE"
REPORT_VARIABLE = "SERVICE_LOAD_REPORT"
#: The envelope's API pool: concurrency 80 queues for 50 connections.
ENVELOPE_POOL_MAX = 50
#: Release runs a single run may open (repositories x runs per repository).
MAX_RELEASE_RUNS = 20_000

EXIT_PASSED, EXIT_FAILED, EXIT_USAGE, EXIT_REFUSED, EXIT_INTERRUPTED = 0, 1, 2, 3, 130


class UsageError(Exception):
    """A variable or flag is invalid (exit 2)."""


class Refusal(Exception):
    """The target is not an isolated, disposable PostgreSQL 16 (exit 3)."""


@dataclass(frozen=True)
class Knob:
    name: str            # the LoadSettings field
    variable: str
    flag: str
    default: float
    minimum: float
    maximum: float
    help: str
    envelope: float | None = None
    decimal: bool = False  # a decimal number is allowed (else a whole number)

    def describe_range(self) -> str:
        return f"{_show(self.minimum)} to {_show(self.maximum)}"


def _show(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


KNOBS = (
    Knob("unique_deliveries", "SERVICE_LOAD_UNIQUE_DELIVERIES", "--unique-deliveries", 200, 1, 100_000,
         "signed webhook deliveries, each with its own delivery id", envelope=1000),
    Knob("duplicate_deliveries", "SERVICE_LOAD_DUPLICATE_DELIVERIES", "--duplicate-deliveries", 50, 0, 100_000,
         "deliveries sent again with an id already sent (at most the unique ones; fewer unique ones lower the default)", envelope=200),
    Knob("repositories", "SERVICE_LOAD_REPOSITORIES", "--repositories", 4, 1, 100,
         "repositories of the installation the load uses", envelope=12),
    Knob("runs_per_repository", "SERVICE_LOAD_RUNS_PER_REPOSITORY", "--runs-per-repository", 20, 1, 1000,
         "release runs per repository, each a pull request through to its completed check run", envelope=50),
    Knob("concurrency", "SERVICE_LOAD_CONCURRENCY", "--concurrency", 20, 1, 200,
         "clients sending at once in every phase", envelope=80),
    Knob("intake_p95_ms", "SERVICE_LOAD_INTAKE_P95_MS", "--intake-p95-ms", 1000, 1, 600_000,
         "limit: p95 of a webhook delivery's answer"),
    Knob("lifecycle_p95_ms", "SERVICE_LOAD_LIFECYCLE_P95_MS", "--lifecycle-p95-ms", 1500, 1, 600_000,
         "limit: p95 from a delivery's acceptance to its lifecycle job's completion"),
    Knob("dashboard_p95_ms", "SERVICE_LOAD_DASHBOARD_P95_MS", "--dashboard-p95-ms", 1000, 1, 600_000,
         "limit: p95 of a GET /api/v1/runs page"),
    Knob("min_throughput", "SERVICE_LOAD_MIN_THROUGHPUT", "--min-throughput", 10, 0.1, 100_000,
         "limit: operations per second every phase must reach at least", decimal=True),
    Knob("recovery_rounds", "SERVICE_LOAD_RECOVERY_ROUNDS", "--recovery-rounds", 3, 1, 20,
         "rounds of a recovery profile: faults injected and recovered, or load and idle"),
    Knob("recovery_convergence_ms", "SERVICE_LOAD_RECOVERY_CONVERGENCE_MS", "--recovery-convergence-ms", 5000,
         100, 600_000, "limit: from a fault's end until everything in flight then has converged"),
    Knob("worker_fleet_size", "SERVICE_LOAD_WORKER_FLEET_SIZE", "--worker-fleet-size", 3, 2, 20,
         "worker processes of worker-fleet-interruption (the other profiles run one, as bin/serve)"),
)
KNOBS_BY_NAME = {knob.name: knob for knob in KNOBS}
NUMBER = re.compile(r"[0-9]{1,9}")
DECIMAL = re.compile(r"[0-9]{1,9}(\.[0-9]{1,6})?")


@dataclass(frozen=True)
class LoadSettings:
    profile: str = "representative"
    unique_deliveries: int = 200
    duplicate_deliveries: int = 50
    repositories: int = 4
    runs_per_repository: int = 20
    concurrency: int = 20
    intake_p95_ms: int = 1000
    lifecycle_p95_ms: int = 1500
    dashboard_p95_ms: int = 1000
    min_throughput: float = 10.0
    recovery_rounds: int = 3
    recovery_convergence_ms: int = 5000
    worker_fleet_size: int = 3
    envelope: bool = False
    report: Path | None = None     # None: .data/load-<UTC stamp>.json
    database_url: str | None = None  # None: a PostgreSQL 16 cluster of our own

    @property
    def release_runs(self) -> int:
        return self.repositories * self.runs_per_repository

    @property
    def worker_processes(self) -> int:
        return self.worker_fleet_size if self.profile == "worker-fleet-interruption" else 1

    @property
    def recovery_profile(self) -> bool:
        return self.profile != "representative"

    def public(self) -> dict:
        """What the report may say about the run's settings (no URL: it names a deployment)."""
        out = {knob.name: getattr(self, knob.name) for knob in KNOBS}
        out.update(profile=self.profile, envelope=self.envelope, release_runs=self.release_runs,
                   worker_processes=self.worker_processes,
                   database="given" if self.database_url else "own PostgreSQL 16 cluster")
        return out


class _Parser(argparse.ArgumentParser):
    """argparse, but a refused argument raises UsageError instead of exiting."""

    def error(self, message: str):
        raise UsageError(message)


def _parser() -> argparse.ArgumentParser:
    lines = [f"  {k.variable:<38} {k.flag:<27} default {_show(k.default)}, {k.describe_range()}: {k.help}"
             for k in KNOBS]
    epilog = ("variables (a flag wins over its variable):\n"
              f"  {CONFIRMATION_VARIABLE:<38} required, exactly {CONFIRMATION}\n"
              f"  {PROFILE_VARIABLE:<38} {'--profile':<27} default representative: {', '.join(PROFILES)}\n"
              + "\n".join(lines) + "\n"
              f"  {REPORT_VARIABLE:<38} {'--report PATH':<27} default .data/load-<UTC stamp>.json (mode 0600)\n"
              f"  {'SERVICE_DATABASE_URL':<38} {'':<27} unset: a PostgreSQL 16 cluster of its own, removed after\n"
              "exit status: 0 every limit and audit held; 1 one did not (or the run could not finish);\n"
              "2 a refused variable or flag; 3 refused target (confirmation, not PostgreSQL 16, not empty);\n"
              "130 interrupted.")
    parser = _Parser(
        prog="bin/load", allow_abbrev=False, formatter_class=argparse.RawDescriptionHelpFormatter, epilog=epilog,
        description="Load validation against an isolated, disposable PostgreSQL 16: intake, lifecycle, "
                    "release runs and the dashboard under one of six profiles, audited in SQL after every phase.")
    parser.add_argument("--profile", help="one of: " + ", ".join(PROFILES))
    for knob in KNOBS:
        parser.add_argument(knob.flag, dest=knob.name, metavar="N", help=knob.help)
    parser.add_argument("--envelope", action="store_true",
                        help="the spec's validated envelope: 1000 unique + 200 duplicate deliveries, 600 release "
                             "runs over 12 repositories, concurrency 80 through a 50-connection pool cap")
    parser.add_argument("--report", metavar="PATH", help="the JSON report (mode 0600)")
    return parser


def _number(knob: Knob, raw: str, source: str) -> float:
    text = raw.strip()
    pattern = DECIMAL if knob.decimal else NUMBER
    if pattern.fullmatch(text):
        value = float(text) if knob.decimal else int(text)
        if knob.minimum <= value <= knob.maximum:
            return value
    kind = "a number" if knob.decimal else "a whole number"
    raise UsageError(f"{source} must be {kind} from {knob.describe_range()} (got {raw[:40]!r})")


def parse(argv: list[str] | None, env: Mapping[str, str]) -> LoadSettings:
    """The settings from flags and variables; UsageError names what is wrong."""
    args = _parser().parse_args(argv)
    errors: list[str] = []

    values: dict = {}
    given: list[str] = []
    for knob in KNOBS:
        raw, source = getattr(args, knob.name), knob.flag
        if raw is None:
            raw, source = env.get(knob.variable), knob.variable
        if raw is None or (source == knob.variable and raw == ""):
            continue
        try:
            values[knob.name] = _number(knob, raw, source)
            given.append(source)
        except UsageError as exc:
            errors.append(str(exc))

    profile = args.profile if args.profile is not None else env.get(PROFILE_VARIABLE) or "representative"
    if profile not in PROFILES:
        source = "--profile" if args.profile is not None else PROFILE_VARIABLE
        errors.append(f"{source} must be one of {', '.join(PROFILES)} (got {profile[:40]!r})")

    if args.envelope:
        counts = [KNOBS_BY_NAME[n] for n in ("unique_deliveries", "duplicate_deliveries", "repositories",
                                             "runs_per_repository", "concurrency")]
        clashing = [s for s in given if any(s in (k.flag, k.variable) for k in counts)]
        if clashing:
            errors.append(f"--envelope sets the counts and the concurrency itself; unset {', '.join(clashing)}")
        for knob in counts:
            values[knob.name] = int(knob.envelope)

    if "duplicate_deliveries" not in values and "unique_deliveries" in values:
        # The default 50 duplicates shrink with fewer unique deliveries; a number given is kept and checked.
        values["duplicate_deliveries"] = min(int(KNOBS_BY_NAME["duplicate_deliveries"].default),
                                             values["unique_deliveries"])
    settings = dataclasses.replace(
        LoadSettings(), profile=profile if profile in PROFILES else "representative", envelope=args.envelope,
        report=Path(args.report or env.get(REPORT_VARIABLE)) if (args.report or env.get(REPORT_VARIABLE)) else None,
        database_url=env.get("SERVICE_DATABASE_URL") or None,
        **{name: value for name, value in values.items()})
    if settings.duplicate_deliveries > settings.unique_deliveries:
        errors.append(f"the duplicate deliveries ({settings.duplicate_deliveries}) must not outnumber the unique "
                      f"ones ({settings.unique_deliveries}): each duplicate repeats a different delivery")
    if settings.release_runs > MAX_RELEASE_RUNS:
        errors.append(f"repositories x runs per repository must be at most {MAX_RELEASE_RUNS} "
                      f"(got {settings.release_runs})")
    if settings.profile == "database-interruption" and settings.database_url:
        errors.append("database-interruption restarts PostgreSQL, which bin/load can do only to the cluster it "
                      "starts itself: unset SERVICE_DATABASE_URL")
    if errors:
        raise UsageError("; ".join(errors))
    return settings


def require_confirmation(env: Mapping[str, str]) -> None:
    """Refusal unless the operator confirmed that the database may be filled, restarted and thrown away."""
    value = env.get(CONFIRMATION_VARIABLE)
    if value != CONFIRMATION:
        state = "is not set" if value is None else "is not exactly that"
        raise Refusal(f"bin/load writes thousands of rows, restarts and kills processes and may restart "
                      f"PostgreSQL: it runs only against an isolated, disposable database. Set "
                      f"{CONFIRMATION_VARIABLE}={CONFIRMATION} to confirm ({CONFIRMATION_VARIABLE} {state}).")
