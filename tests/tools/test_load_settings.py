"""bin/load's variables and flags (tools/load/settings.py): defaults, every
range at both ends and past them, flags over variables, the envelope, and the
refusals that come before anything starts (exit 2 for an argument, exit 3
without the confirmation)."""
from __future__ import annotations

import pytest

from tools.load import cli
from tools.load.settings import (CONFIRMATION, KNOBS, PROFILES, LoadSettings, Refusal, UsageError, parse,
                                 require_confirmation)

CONFIRMED = {"SERVICE_LOAD_CONFIRMATION": CONFIRMATION}


def test_the_defaults_are_the_specs():
    settings = parse([], {})
    assert settings == LoadSettings()
    assert (settings.profile, settings.unique_deliveries, settings.duplicate_deliveries, settings.repositories,
            settings.runs_per_repository, settings.concurrency) == ("representative", 200, 50, 4, 20, 20)
    assert (settings.intake_p95_ms, settings.lifecycle_p95_ms, settings.dashboard_p95_ms,
            settings.min_throughput) == (1000, 1500, 1000, 10)
    assert (settings.recovery_rounds, settings.recovery_convergence_ms, settings.worker_fleet_size) == (3, 5000, 3)
    assert settings.release_runs == 80 and settings.worker_processes == 1 and settings.report is None


def test_the_ranges_the_spec_names():
    ranges = {k.name: (k.minimum, k.maximum) for k in KNOBS}
    assert ranges["worker_fleet_size"] == (2, 20)
    assert ranges["recovery_rounds"] == (1, 20)


def _value(number: float) -> str:
    return str(int(number)) if float(number).is_integer() else str(number)


@pytest.mark.parametrize("knob", KNOBS, ids=lambda k: k.variable)
def test_every_variable_takes_its_range_and_refuses_past_it(knob):
    env = {"SERVICE_LOAD_UNIQUE_DELIVERIES": "100000"} if knob.name == "duplicate_deliveries" else {}
    for edge in (knob.minimum, knob.maximum):
        settings = parse([], {**env, knob.variable: _value(edge)})
        assert getattr(settings, knob.name) == edge
    above = knob.maximum + 1
    below = knob.minimum - (0.1 if knob.decimal else 1)
    for bad in ([_value(above)] + ([_value(below)] if below >= 0 else []) + ["abc", "1e3", " ", "-5", "12ms"]):
        with pytest.raises(UsageError) as refused:
            parse([], {**env, knob.variable: bad})
        message = str(refused.value)
        assert knob.variable in message and knob.describe_range() in message


@pytest.mark.parametrize("knob", KNOBS, ids=lambda k: k.flag)
def test_every_flag_takes_its_range_and_refuses_past_it(knob):
    argv = ["--unique-deliveries", "100000"] if knob.name == "duplicate_deliveries" else []
    assert getattr(parse(argv + [knob.flag, _value(knob.maximum)], {}), knob.name) == knob.maximum
    with pytest.raises(UsageError, match=knob.flag):
        parse(argv + [knob.flag, _value(knob.maximum + 1)], {})
    with pytest.raises(UsageError, match=knob.flag):
        parse(argv + [knob.flag, "many"], {})


def test_the_report_path_from_the_variable_or_the_flag():
    from pathlib import Path
    assert parse([], {"SERVICE_LOAD_REPORT": "a.json"}).report == Path("a.json")
    assert parse(["--report", "b.json"], {"SERVICE_LOAD_REPORT": "a.json"}).report == Path("b.json")


def test_a_flag_wins_over_its_variable():
    settings = parse(["--concurrency", "7", "--profile", "soak-recovery"],
                     {"SERVICE_LOAD_CONCURRENCY": "9", "SERVICE_LOAD_PROFILE": "representative"})
    assert (settings.concurrency, settings.profile) == (7, "soak-recovery")


def test_only_the_throughput_limit_takes_a_decimal():
    assert parse(["--min-throughput", "2.5"], {}).min_throughput == 2.5
    with pytest.raises(UsageError, match="whole number"):
        parse(["--concurrency", "2.5"], {})


@pytest.mark.parametrize("profile", PROFILES)
def test_the_six_profiles(profile):
    assert parse([], {"SERVICE_LOAD_PROFILE": profile}).profile == profile
    assert parse(["--profile", profile], {}).profile == profile


def test_an_unknown_profile_is_refused():
    with pytest.raises(UsageError, match="SERVICE_LOAD_PROFILE must be one of"):
        parse([], {"SERVICE_LOAD_PROFILE": "chaos"})
    with pytest.raises(UsageError, match="--profile must be one of"):
        parse(["--profile", "Representative"], {})


def test_the_fleet_runs_only_in_its_profile():
    assert parse(["--profile", "worker-fleet-interruption", "--worker-fleet-size", "5"], {}).worker_processes == 5
    assert parse(["--worker-fleet-size", "5"], {}).worker_processes == 1


def test_the_envelope():
    settings = parse(["--envelope"], {})
    assert (settings.unique_deliveries, settings.duplicate_deliveries, settings.repositories,
            settings.runs_per_repository, settings.concurrency, settings.release_runs) == (1000, 200, 12, 50, 80, 600)
    assert settings.envelope and settings.public()["envelope"]
    # It combines with a profile and the limits, never with counts of its own.
    assert parse(["--envelope", "--profile", "soak-recovery", "--intake-p95-ms", "900"], {}).intake_p95_ms == 900
    with pytest.raises(UsageError, match="--envelope sets the counts"):
        parse(["--envelope"], {"SERVICE_LOAD_CONCURRENCY": "10"})
    with pytest.raises(UsageError, match="--repositories"):
        parse(["--envelope", "--repositories", "3"], {})


def test_more_duplicates_than_unique_deliveries_are_refused():
    with pytest.raises(UsageError, match="must not outnumber"):
        parse(["--unique-deliveries", "10", "--duplicate-deliveries", "11"], {})


def test_too_many_release_runs_are_refused():
    with pytest.raises(UsageError, match="at most 20000"):
        parse(["--repositories", "100", "--runs-per-repository", "1000"], {})


def test_a_database_restart_needs_the_cluster_bin_load_starts():
    with pytest.raises(UsageError, match="unset SERVICE_DATABASE_URL"):
        parse(["--profile", "database-interruption"], {"SERVICE_DATABASE_URL": "postgresql://x@127.0.0.1/y"})


def test_unknown_and_abbreviated_flags_are_refused():
    with pytest.raises(UsageError):
        parse(["--concurr", "5"], {})
    with pytest.raises(UsageError):
        parse(["--duration", "5"], {})


@pytest.mark.parametrize("value", [None, "", "yes", "isolated-disposable-database ", "ISOLATED-DISPOSABLE-DATABASE"])
def test_without_the_exact_confirmation_it_refuses(value):
    env = {} if value is None else {"SERVICE_LOAD_CONFIRMATION": value}
    with pytest.raises(Refusal, match="SERVICE_LOAD_CONFIRMATION=isolated-disposable-database"):
        require_confirmation(env)


def test_the_exact_confirmation_is_accepted():
    require_confirmation(CONFIRMED)


def test_exit_status_2_for_an_argument_and_3_without_the_confirmation(capsys):
    assert cli.main(["--concurrency", "0"], CONFIRMED) == 2
    assert "--concurrency must be a whole number from 1 to 200" in capsys.readouterr().err
    # Arguments are checked first; a valid command without the confirmation is refused before anything starts.
    assert cli.main(["--profile", "representative"], {}) == 3
    assert "refused" in capsys.readouterr().err
