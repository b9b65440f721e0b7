"""Actions: workflow dispatch and workflow runs."""
from __future__ import annotations

from emulator import shapes
from emulator.errors import HostError, not_found
from emulator.rest.common import RouteGroup, invalid_request, json_object, paginate
from emulator.routing import Reply, RequestContext, route
from emulator.state import Repository

MAX_INPUTS = 25


class ActionsRoutes(RouteGroup):
    def _workflow(self, repo: Repository, workflow_id: str):
        for workflow in repo.workflows.values():
            if workflow_id in (workflow.file_name, str(workflow.id), workflow.path):
                return workflow
        raise not_found()

    @route("POST", "/repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches", "actions/create-workflow-dispatch")
    def dispatch_workflow(self, ctx: RequestContext) -> Reply:
        token, repo = self._repo(ctx, ("actions", "write"))
        body = ctx.json()
        with self.state.lock:
            workflow = self._workflow(repo, ctx.params["workflow_id"])
        # Only now: broken JSON is answered 400 before an unknown workflow's 404, other JSON 422 after it.
        body = json_object(body)
        ref = body.get("ref")
        if ref is None:
            raise invalid_request('"ref" wasn\'t supplied.')
        if not isinstance(ref, str):
            raise invalid_request("For 'properties/ref', it is not a string.")
        inputs = body.get("inputs", {})
        if inputs is None:
            inputs = {}
        if not isinstance(inputs, dict):
            raise invalid_request("For 'properties/inputs', it is not an object.")
        if len(inputs) > MAX_INPUTS:
            raise invalid_request(f"For 'properties/inputs', it has more than {MAX_INPUTS} properties.")
        for name, value in inputs.items():
            if isinstance(value, (dict, list)) or value is None:
                raise invalid_request(f"For 'properties/inputs/{name}', it is not a string, number or boolean.")
        details = body.get("return_run_details", False)
        if not isinstance(details, bool):
            raise invalid_request("For 'properties/return_run_details', it is not a boolean.")
        with self.state.lock:
            if workflow.declared_inputs is not None:
                unexpected = sorted(set(inputs) - set(workflow.declared_inputs))
                if unexpected:
                    raise HostError(422, "Unexpected inputs provided: " + str(unexpected).replace("'", '"'))
            resolved = repo.resolve_ref(ref)
            if resolved is None or resolved[0] is None:
                raise HostError(422, f"No ref found for: {ref}")
            branch, sha = resolved
            inst = self.state.installations[token.installation_id]
            app = self.state.apps[inst.app_id]
            actor = shapes.bot_account(app)
        # Inputs reach the workflow as strings, as they do on the real host.
        as_strings = {k: (str(v).lower() if isinstance(v, bool) else str(v)) for k, v in inputs.items()}
        run = self.runs.dispatch(repo, workflow, branch, sha, ref, as_strings, actor)
        if not details:
            return Reply(204)
        return Reply(
            200,
            {
                "workflow_run_id": run.id,
                "run_url": f"{ctx.base_url}/repos/{repo.full_name}/actions/runs/{run.id}",
                "html_url": f"{ctx.base_url}/{repo.full_name}/actions/runs/{run.id}",
            },
        )

    def _run_shape(self, ctx: RequestContext, repo: Repository, run, attempt) -> dict:
        return shapes.workflow_run(ctx.base_url, repo, run, attempt, self._open_pulls_at(repo, run.head_sha))

    def _run_of(self, repo: Repository, ctx: RequestContext):
        return self._record_of(repo, self.state.runs, ctx, "run_id")

    @route("GET", "/repos/{owner}/{repo}/actions/runs/{run_id}", "actions/get-workflow-run")
    def get_run(self, ctx: RequestContext) -> Reply:
        _, repo = self._repo(ctx, ("actions", "read"))
        with self.state.lock:
            run = self._run_of(repo, ctx)
            return Reply(200, self._run_shape(ctx, repo, run, run.current))

    @route("GET", "/repos/{owner}/{repo}/actions/runs/{run_id}/attempts/{attempt_number}", "actions/get-workflow-run-attempt")
    def get_run_attempt(self, ctx: RequestContext) -> Reply:
        _, repo = self._repo(ctx, ("actions", "read"))
        number = self._int_param(ctx, "attempt_number")
        with self.state.lock:
            run = self._run_of(repo, ctx)
            if not 1 <= number <= len(run.attempts):
                raise not_found()
            return Reply(200, self._run_shape(ctx, repo, run, run.attempts[number - 1]))

    @route("GET", "/repos/{owner}/{repo}/actions/workflows/{workflow_id}/runs", "actions/list-workflow-runs")
    def list_workflow_runs(self, ctx: RequestContext) -> Reply:
        _, repo = self._repo(ctx, ("actions", "read"))
        with self.state.lock:
            workflow = self._workflow(repo, ctx.params["workflow_id"])
            runs = sorted(
                (r for r in self.state.runs.values() if r.repository_id == repo.id and r.workflow_id == workflow.id),
                key=lambda r: r.id,
                reverse=True,
            )
            branch, event, status, head_sha = (ctx.arg(n) for n in ("branch", "event", "status", "head_sha"))
            if branch:
                runs = [r for r in runs if r.head_branch == branch]
            if event:
                runs = [r for r in runs if event == "workflow_dispatch"]
            if status:
                runs = [r for r in runs if status in (r.current.status, r.current.conclusion)]
            if head_sha:
                runs = [r for r in runs if r.head_sha == head_sha]
            page, headers = paginate(ctx, runs)
            body = {
                "total_count": len(runs),
                "workflow_runs": [self._run_shape(ctx, repo, r, r.current) for r in page],
            }
        return Reply(200, body, headers)
