"""``bin/check PATH``: command line of the readiness checker.

Exit codes: 0 ready (or the gate passed), 1 gate failed, 2 usage error (also a
fab profile that does not fit the board's layer count), 3 invalid or hostile
input (a typed error, no result) or an incomplete check (a rule failed: the
result, blocked, is still written; checker/isolation.py), 4 the service
refused a published result.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

# numpy's OpenBLAS starts a busy thread per core the moment numpy is imported: about
# half of numpy's import in CPU time, more in wall time on a loaded machine, for a
# library the checker never calls (no matrix products). A command-line run is its own
# process, so it says so before anything imports numpy; a value set by the caller wins.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from .errors import HostileInputError, ProfileRefused
from .isolation import RULE_FAILED
from .profiles import available
from .runner import RunOptions, check
from .verdict import DEFAULT_FAIL_ON, FAILS_ON, gate_fails

EXIT_READY, EXIT_GATE_FAILED, EXIT_USAGE, EXIT_INPUT, EXIT_PUBLISH = 0, 1, 2, 3, 4


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="bin/check", description="KiCad release-readiness checker")
    parser.add_argument("path", nargs="?", type=Path, help="project folder or .kicad_pro (runner mode: the checkout)")
    parser.add_argument("--root", type=Path, help="repository root for relative paths (default: PATH's folder)")
    parser.add_argument("--bom", type=Path, help="BOM CSV to compare with the schematic")
    parser.add_argument("--format", choices=("human", "json", "sarif"), default="human")
    parser.add_argument("--output", "-o", type=Path, help="write the report here instead of stdout")
    parser.add_argument("--html", type=Path, metavar="FILE", help="also write the self-contained HTML report")
    parser.add_argument("--profile", choices=available(), help="fab profile (overrides .boardready.toml)")
    parser.add_argument("--baseline", type=Path, metavar="RESULT.json", help="earlier --format json result")
    parser.add_argument("--gate", choices=("all", "new"), default="all",
                        help="new: only findings absent from the baseline block")
    parser.add_argument("--fail-on", choices=tuple(FAILS_ON), default=DEFAULT_FAIL_ON,
                        help="gate (default): exit 1 exactly when the release gate fails (any error or high finding "
                             "that counts); blocked / at-risk: by readiness alone")
    base = parser.add_mutually_exclusive_group()
    base.add_argument("--base", type=Path, metavar="PATH", help="the base commit's checkout: diff the board, mark new findings")
    base.add_argument("--base-ref", metavar="REF", help="like --base, with the files of git revision REF")
    parser.add_argument("--erc-report", type=Path, help="import a kicad-cli ERC JSON report")
    parser.add_argument("--drc-report", type=Path, help="import a kicad-cli DRC JSON report")
    parser.add_argument("--no-kicad-cli", action="store_true", help="do not run kicad-cli even when installed")
    parser.add_argument("--fab-package", type=Path, metavar="DIR",
                        help="also make the fabrication package with kicad-cli into DIR and check it with gerbonara")
    parser.add_argument("--trigger", choices=("pull_request", "push", "manual", "schedule", "release"),
                        default="manual", help="triggerKind in the result")
    parser.add_argument("--repository", help="owner/name in the result")
    parser.add_argument("--repository-id", help="the code host's numeric repository id (needed by --publish)")
    parser.add_argument("--head-sha", help="commit checked")
    parser.add_argument("--publish", action="store_true",
                        help="POST the result to $SERVICE_URL/api/v1/runs with $SERVICE_API_TOKEN")
    parser.add_argument("--runner", action="store_true",
                        help="readiness-workflow mode: inputs from the runner, result to the OIDC callback")
    parser.add_argument("--no-color", action="store_true")
    return parser


def _fab_package(outcome, out: Path) -> int:
    """Make and check each board's package (DIR, or DIR/<project> for several); 0 when all are accepted."""
    from .kicad_reports import find_kicad_cli

    cli, why_not = find_kicad_cli()
    if cli is None:
        print(f"error: --fab-package needs kicad-cli 8 or later: {why_not or 'kicad-cli is not installed'}",
              file=sys.stderr)
        return EXIT_USAGE
    from . import fab_package

    boards = [m for m in outcome.models if m.board is not None and m.files.board is not None]
    for model in boards:
        where = out if len(boards) == 1 else out / model.files.name
        fab_package.make_package(model.files.board, model.board, where, cli.executable, model.files.schematic)
        expected_bom = None
        if model.schematic is not None and model.files.schematic is not None:
            from .bom_export import bom_lines
            expected_bom = {ref: line["value"] for line in bom_lines(model, 1_000_000) for ref in line["references"]}
        problems = fab_package.check_package(where, model.board, expected_bom)
        if problems:
            print(f"error: the fab package in {where} is refused: " + "; ".join(problems), file=sys.stderr)
            return EXIT_INPUT
        print(f"boardready: fab package {where}: accepted ({fab_package.MANIFEST} lists its files)", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.gate == "new" and args.baseline is None:
        parser.error("--gate new needs --baseline")
    runner_context = None
    if args.runner:
        from .publish import RunnerContext, RunnerEnvironmentError

        try:
            runner_context = RunnerContext.from_environment()
        except RunnerEnvironmentError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return EXIT_USAGE
    elif args.path is None:
        parser.error("PATH is required")
    if args.publish and not (os.environ.get("SERVICE_URL") and os.environ.get("SERVICE_API_TOKEN")):
        parser.error("--publish needs SERVICE_URL and SERVICE_API_TOKEN in the environment")
    if args.path is not None and not args.path.exists():
        parser.error(f"{args.path} does not exist")
    options = RunOptions(
        path=args.path or (runner_context.workspace if runner_context else Path(".")),
        root=args.root or (runner_context.workspace if runner_context else None),
        bom=args.bom, profile=args.profile, baseline=args.baseline, gate=args.gate,
        erc_report=args.erc_report, drc_report=args.drc_report, run_kicad_cli=not args.no_kicad_cli,
        trigger_kind="pull_request" if runner_context else args.trigger,
        repository=runner_context.repository if runner_context else args.repository,
        repository_id=args.repository_id,
        head_sha=runner_context.head_sha if runner_context else args.head_sha,
        progress=lambda message: print(f"boardready: {message}", file=sys.stderr),
    )
    options.base, options.base_error = _base(parser, args, runner_context)
    try:
        outcome = check(options)
    except HostileInputError as exc:
        refused_profile = isinstance(exc, ProfileRefused)   # the board is fine; the chosen profile is not
        if args.format == "json":
            print(json.dumps({"ok": False, "code": exc.code, "message": exc.message, "path": exc.path,
                              "line": exc.line, "column": exc.column}))
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE if refused_profile else EXIT_INPUT
    result = outcome.result
    report = None
    if runner_context is not None:
        # The workflow uploads its HTML report after the result; the result names it (SHA-256, size),
        # so the signed digest covers the report too.
        from .publish import report_reference
        from .report_html import render_html

        report = render_html(outcome).encode("utf-8")
        result["reportArtifact"] = report_reference(report)
    # The contract is checked on the way out of the machine: emitting something the
    # service would refuse is a checker bug we want to see here, not in the service.
    # A local run skips it (jsonschema costs more than checking a small schematic);
    # the tests set BOARDREADY_CHECK_CONTRACT so every result they make is checked.
    if args.publish or runner_context is not None or os.environ.get("BOARDREADY_CHECK_CONTRACT"):
        from contracts import run_result_validator

        errors = sorted(run_result_validator().iter_errors(result), key=lambda e: list(e.path))
        if errors:
            raise AssertionError(f"run result violates the contract: {errors[0].message}")
    _write_report(args, result)
    if args.fab_package is not None:
        refused = _fab_package(outcome, args.fab_package)
        if refused:
            return refused
    if args.html:
        from .report_html import write_html

        write_html(outcome, args.html)
    if args.publish or runner_context is not None:
        from .publish import PublishError, publish, send_report_artifact, send_runner_result
    if args.publish:
        try:
            publish(result, os.environ["SERVICE_URL"], os.environ["SERVICE_API_TOKEN"])
        except PublishError as exc:
            print(f"error: the service refused the result: {exc.code}: {exc.message}", file=sys.stderr)
            return EXIT_PUBLISH
        except Exception as exc:  # network failures: say so, exit as refused
            print(f"error: publishing failed: {exc}", file=sys.stderr)
            return EXIT_PUBLISH
    if runner_context is not None:
        try:
            send_runner_result(result, runner_context)
        except PublishError as exc:
            print(f"error: the service refused the result: {exc.code}: {exc.message}", file=sys.stderr)
            print(exc.code)
            return EXIT_PUBLISH
        except Exception as exc:
            print(f"error: sending the result failed: {exc}", file=sys.stderr)
            return EXIT_PUBLISH
        try:
            send_report_artifact(report, runner_context)
        except Exception as exc:  # the result already decided: a missing report is a warning, not a failure
            print(f"warning: the HTML report was not uploaded: {exc}", file=sys.stderr)
    failed = [f for f in result["findings"] if f["ruleId"] == RULE_FAILED]
    if failed:
        # The result (blocked) is written and sent; the exit says the check did not finish.
        print(f"error: the check is incomplete: {failed[0]['message']}", file=sys.stderr)
        return EXIT_INPUT
    return EXIT_GATE_FAILED if gate_fails(result, args.fail_on) else EXIT_READY


def _base(parser, args, runner_context) -> tuple[Path | None, str | None]:
    """The base's folder, or why a base asked for cannot be read (the head's check goes
    on: its policy is then compared with none, checker/policy.py)."""
    if not args.base_ref:
        return args.base, None
    from .base_checkout import BaseRefError, read_ref

    try:
        checkout = read_ref(args.base_ref, args.root or (runner_context.workspace if runner_context else args.path))
    except BaseRefError as exc:
        if runner_context is None and exc.usage:
            parser.error(str(exc))
        # The verdict must still travel (in the workflow): the check runs without the diff.
        print(f"warning: {exc}; the check runs without the board diff", file=sys.stderr)
        return None, str(exc)
    for skipped in checkout.skipped[:20]:
        print(f"warning: the base's {skipped}: left out", file=sys.stderr)
    return checkout.folder, None


def _write_report(args, result: dict) -> None:
    if args.format == "json":
        text = json.dumps(result, indent=2, sort_keys=True) + "\n"
    elif args.format == "sarif":
        from .sarif import to_sarif

        text = json.dumps(to_sarif(result), indent=2) + "\n"
    else:
        from .report_text import render

        stream_is_tty = args.output is None and sys.stdout.isatty()
        text = render(result, colour=stream_is_tty and not args.no_color and "NO_COLOR" not in os.environ)
    if args.output:
        args.output.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    sys.exit(main())
