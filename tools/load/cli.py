"""`bin/load`: arguments, refusals, the run, the report, the exit status.

0 every limit and audit held; 1 one did not, or the run could not finish; 2 a
refused variable or flag; 3 a refused target (no confirmation, not
PostgreSQL 16, a database already holding service data); 130 interrupted
(the report still says what was measured).
"""
from __future__ import annotations

import asyncio
import os
import shutil
import signal
import sys
import tempfile
import time
import traceback
from collections.abc import Mapping
from pathlib import Path

from app.jsonlog import capture_library_logs
from tools.load import profiles, report
from tools.load.phases import LoadRun
from tools.load.settings import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_PASSED,
    EXIT_REFUSED,
    EXIT_USAGE,
    Refusal,
    UsageError,
    parse,
    require_confirmation,
)
from tools.load.stack import Stack
from tools.report_file import default_report_path, write_private_json


def _terminate(signum, frame):
    raise KeyboardInterrupt


async def _drive(run_holder: list, settings, stack, progress) -> list[dict]:
    run = LoadRun(settings, stack, progress)
    run_holder.append(run)
    await run.start()
    try:
        return await profiles.run_profile(run, settings, stack.config.host_timeout_ms)
    finally:
        await run.stop()


def main(argv: list[str] | None = None, env: Mapping[str, str] | None = None) -> int:
    env = os.environ if env is None else env
    try:
        settings = parse(argv, env)
    except UsageError as exc:
        print(f"bin/load: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    try:
        require_confirmation(env)
    except Refusal as exc:
        print(f"bin/load: refused: {exc}", file=sys.stderr)
        return EXIT_REFUSED
    capture_library_logs()
    # Ctrl-C and TERM stop the run alike, even when started in the background (where SIGINT comes ignored).
    signal.signal(signal.SIGINT, _terminate)
    signal.signal(signal.SIGTERM, _terminate)
    report_path = settings.report or default_report_path("load")
    workdir = Path(tempfile.mkdtemp(prefix="boardready-load-"))
    stack = Stack(settings, workdir)
    started, load_at_start = time.time(), os.getloadavg()
    run_holder: list[LoadRun] = []
    soak: list[dict] = []
    error, interrupted = None, False
    with report.ProgressDisplay() as progress:
        progress.note(f"bin/load {settings.profile}: starting PostgreSQL 16, the code host emulator, the API and "
                      f"{settings.worker_processes} worker process(es)")
        try:
            stack.start()
            progress.note(f"PostgreSQL {stack.database.version}; service on {stack.base_url}; "
                          f"logs in {stack.log_path}")
            soak = asyncio.run(_drive(run_holder, settings, stack, progress))
        except Refusal as exc:
            stack.stop()
            shutil.rmtree(workdir, ignore_errors=True)
            print(f"bin/load: refused: {exc}", file=sys.stderr)
            return EXIT_REFUSED
        except KeyboardInterrupt:
            interrupted = True
        except Exception as exc:  # reported, never a traceback in place of the report
            error = f"{type(exc).__name__}: {str(exc)[:300]}"
            (workdir / "bin-load-traceback.txt").write_text(traceback.format_exc(), encoding="utf-8")
        finally:
            stack.stop()
    phases = run_holder[0].phases if run_holder else []
    recovery = [p.fault for p in phases if p.fault] + soak
    document = report.build(settings, phases, recovery, stack.service_settings() if stack.service else {},
                            stack.database.version, started, load_at_start, error, interrupted)
    status = EXIT_PASSED if document["passed"] else EXIT_INTERRUPTED if interrupted else EXIT_FAILED
    document["exit_status"] = status
    try:
        written = write_private_json(report_path, document)
    except OSError as exc:
        print(f"bin/load: the report could not be written to {report_path}: {exc.strerror}", file=sys.stderr)
        written, status = report_path, EXIT_INTERRUPTED if interrupted else EXIT_FAILED
    report.print_table(document, written)
    if document["passed"]:
        shutil.rmtree(workdir, ignore_errors=True)
    else:
        print(f"service logs kept in {workdir}", file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())
