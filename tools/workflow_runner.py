"""Runs the readiness workflow's steps as a code host runner would, for the
emulator's `execute` run mode: `python -m tools.workflow_runner` is the runner
command, started in the run's workspace with the runner's environment
(GITHUB_*, RUNNER_TEMP, the ID-token request variables).

It reads the workflow file the run is for (GITHUB_WORKFLOW_REF, in the
workspace), takes its one job and runs each step in order: `run:` steps with
the job's shell (bash as `bash --noprofile --norc -eo pipefail`), in the
workspace, with the workflow's, the job's and the step's `env:`;
`actions/checkout` is the workspace the emulator already made from the
repository; `actions/upload-artifact` copies the named files to
`$RUNNER_TEMP/artifacts/<name>/`. `${{ }}` expressions are filled in from
`vars` (the JSON object in BOARDREADY_RUNNER_VARS: the repository
variables), `inputs` (the dispatch's inputs), `steps.<id>.outputs` (what a
step wrote to $GITHUB_OUTPUT), `runner.temp`, `github.workspace` and
`github.token` (GITHUB_TOKEN when the runner has one, else empty); anything else, another action or a condition other than
`always()` stops the run with a message, so a template that needs more than
this fails here first. A failed step skips the rest except `if: always()`
ones, and the run's exit status is the first failure's.

The job's `container:` is not started: the steps run on this machine, with
its kicad-cli if one is installed. Variables of the process that started the
runner and that a real runner would not have (PYTHONPATH, VIRTUAL_ENV) are
not passed to the steps, so an installed checker is the one that runs.

PyYAML is a development dependency (pyproject.toml, dev).
"""
from __future__ import annotations

import glob
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
NOT_PASSED = ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")
SHELLS = {"bash": ["bash", "--noprofile", "--norc", "-eo", "pipefail"], "sh": ["sh", "-e"]}


class WorkflowUnsupported(Exception):
    """The template asks for something this runner does not emulate."""


def workflow_path(env: dict[str, str]) -> Path:
    """.github/workflows/<file> of GITHUB_WORKFLOW_REF ("owner/repo/.github/workflows/x.yml@ref")."""
    ref = env.get("GITHUB_WORKFLOW_REF", "")
    match = re.search(r"(\.github/workflows/[^@]+)@", ref)
    relative = match.group(1) if match else ".github/workflows/readiness-runner.yml"
    return Path(env["GITHUB_WORKSPACE"]) / relative


class Context:
    def __init__(self, env: dict[str, str]):
        event = json.loads(Path(env["GITHUB_EVENT_PATH"]).read_text()) if env.get("GITHUB_EVENT_PATH") else {}
        self.values = {
            "vars": json.loads(env.get("BOARDREADY_RUNNER_VARS") or "{}"),
            "inputs": event.get("inputs") or {},
            "runner": {"temp": env.get("RUNNER_TEMP", ""), "os": env.get("RUNNER_OS", "Linux")},
            "github": {"workspace": env.get("GITHUB_WORKSPACE", ""), "sha": env.get("GITHUB_SHA", ""),
                       "repository": env.get("GITHUB_REPOSITORY", ""),
                       # The job's token: the emulator mints none, so a step using it sees "".
                       "token": env.get("GITHUB_TOKEN", ""),
                       "event": {"inputs": event.get("inputs") or {}}},
            "steps": {},     # id -> {"outputs": {...}, "outcome": ...}, as the steps finish
        }

    def evaluate(self, expression: str) -> str:
        root, *path = expression.split(".")
        if not re.fullmatch(r"[a-z_]+(\.[A-Za-z0-9_-]+)+", expression) or root not in self.values:
            raise WorkflowUnsupported(f"expression not emulated: ${{{{ {expression} }}}}")
        value = self.values[root]
        for part in path:
            if isinstance(value, dict) and part in value:
                value = value[part]
            elif root in ("vars", "steps"):   # unset: the empty string, as on the host
                return ""
            else:
                raise WorkflowUnsupported(f"unknown context value: {expression}")
        return "" if value is None else str(value)

    def fill(self, text) -> str:
        return EXPRESSION.sub(lambda m: self.evaluate(m.group(1)), str(text))


def _env_file_values(path: Path) -> dict[str, str]:
    """KEY=VALUE lines a step appended to $GITHUB_ENV (heredoc form not emulated)."""
    values = {}
    if path.exists():
        for line in path.read_text().splitlines():
            if "=" in line:
                key, _, value = line.partition("=")
                values[key] = value
    return values


def run(env: dict[str, str] | None = None, out=sys.stdout) -> int:
    env = dict(os.environ if env is None else env)
    workspace, temp = Path(env["GITHUB_WORKSPACE"]), Path(env["RUNNER_TEMP"])
    document = yaml.safe_load(workflow_path(env).read_text())
    context = Context(env)
    jobs = document.get("jobs") or {}
    if len(jobs) != 1:
        raise WorkflowUnsupported("the runner emulates a workflow of one job")
    (job_name, job), = jobs.items()
    shell = ((job.get("defaults") or {}).get("run") or {}).get("shell", "bash")
    if shell not in SHELLS:
        raise WorkflowUnsupported(f"shell {shell!r} not emulated")
    base_env = {k: v for k, v in env.items() if k not in NOT_PASSED}
    base_env.update({"GITHUB_ENV": str(temp / "github-env"), "GITHUB_OUTPUT": str(temp / "github-output"),
                     "GITHUB_STEP_SUMMARY": str(temp / "step-summary.md"), "GITHUB_PATH": str(temp / "github-path")})
    for name in ("github-env", "github-output", "step-summary.md", "github-path"):
        (temp / name).touch()
    for scope in (document.get("env") or {}, job.get("env") or {}):
        base_env.update({k: context.fill(v) for k, v in scope.items()})
    if job.get("container"):
        image = (job["container"] or {}).get("image") if isinstance(job["container"], dict) else job["container"]
        print(f"runner: job {job_name} asks for the container {image}; the steps run on this machine", file=out)
    status = 0
    for number, step in enumerate(job.get("steps") or [], start=1):
        title = step.get("name") or step.get("uses") or f"step {number}"
        condition = str(step.get("if", "success()")).strip()
        if condition not in ("success()", "always()"):
            raise WorkflowUnsupported(f"condition not emulated: {condition}")
        if status and condition != "always()":
            print(f"runner: skipped: {title}", file=out, flush=True)
            continue
        print(f"runner: step {number}: {title}", file=out, flush=True)
        step_env = {**base_env, **_env_file_values(temp / "github-env")}
        step_env.update({k: context.fill(v) for k, v in (step.get("env") or {}).items()})
        extra_path = [p for p in (temp / "github-path").read_text().splitlines() if p]
        if extra_path:
            step_env["PATH"] = os.pathsep.join(extra_path + [step_env.get("PATH", "")])
        (temp / "github-output").write_text("")
        if "run" in step:
            script = temp / f"step-{number}.sh"
            script.write_text(context.fill(step["run"]))
            done = subprocess.run([*SHELLS[step.get("shell", shell)], str(script)], cwd=workspace, env=step_env,
                                  stdout=out, stderr=subprocess.STDOUT)
            code = done.returncode
        else:
            code = _action(step, context, workspace, temp, out)
        if step.get("id"):
            context.values["steps"][step["id"]] = {"outputs": _env_file_values(temp / "github-output"),
                                                   "outcome": "failure" if code else "success"}
        if code:
            print(f"runner: {title} failed with exit status {code}", file=out, flush=True)
            status = status or code
    return status


def _action(step: dict, context: Context, workspace: Path, temp: Path, out) -> int:
    action = str(step.get("uses", ""))
    settings = {k: context.fill(v) for k, v in (step.get("with") or {}).items()}
    if action.startswith("actions/checkout@"):
        print(f"runner: the workspace is the repository at {settings.get('ref') or 'the dispatched ref'}",
              file=out)
        return 0
    if action.startswith("actions/upload-artifact@"):
        target = temp / "artifacts" / settings.get("name", "artifact")
        target.mkdir(parents=True, exist_ok=True)
        kept = []
        for pattern in filter(None, (line.strip() for line in settings.get("path", "").splitlines())):
            base = pattern if os.path.isabs(pattern) else str(workspace / pattern)
            for found in glob.glob(base):
                shutil.copy(found, target / Path(found).name)
                kept.append(Path(found).name)
        print(f"runner: artifact {target.name}: {', '.join(sorted(kept)) or 'no files'}", file=out)
        if not kept and settings.get("if-no-files-found", "warn") == "error":
            return 1
        return 0
    raise WorkflowUnsupported(f"action not emulated: {action}")


def main() -> int:
    try:
        return run()
    except WorkflowUnsupported as exc:
        print(f"runner: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
