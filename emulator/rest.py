"""The REST routes of the code host the service calls, with the real paths,
status codes, validation rules and body shapes (see ``emulator.shapes``).

Authentication per route follows the real host: app JWT for ``/app/...`` and the
repository installation lookup, an installation token for repository routes and
``/installation/repositories``, a user OAuth token for ``/user...``. An
installation token only reaches repositories of its installation (404 otherwise)
and only with the permissions it was granted (403 otherwise).
"""
from __future__ import annotations

from datetime import datetime, timezone
from urllib.parse import urlencode

from emulator import shapes
from emulator.auth import (
    issue_installation_token,
    permission_covers,
    require_installation_token,
    require_repository_access,
    require_user_token,
    verify_app_jwt,
)
from emulator.errors import HostError, invalid_field, not_found, validation_failed
from emulator.routing import Reply, RequestContext, Router
from emulator.runs import RunEngine
from emulator.state import CheckRun, IssueComment, Repository, State, iso, utcnow

MAX_TEXT = 65535
MAX_COMMENT = 65536
MAX_ANNOTATIONS = 50
MAX_INPUTS = 25
CHECK_STATUSES_CREATE = ("queued", "in_progress", "completed")
CHECK_STATUSES_UPDATE = ("queued", "in_progress", "completed", "waiting", "requested", "pending")
CHECK_CONCLUSIONS = ("action_required", "cancelled", "failure", "neutral", "success", "skipped", "stale", "timed_out")
ANNOTATION_LEVELS = ("notice", "warning", "failure")


def invalid_request(detail: str) -> HostError:
    # The real API words body-schema failures as "Invalid request.\n\n<detail>".
    return HostError(422, f"Invalid request.\n\n{detail}")


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _parse_time(value, field: str) -> datetime:
    if not isinstance(value, str):
        raise invalid_request(f"Invalid value for '{field}'.")
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise invalid_request(f"Invalid value for '{field}'.") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc).replace(microsecond=0)


def paginate(ctx: RequestContext, items: list) -> tuple[list, dict]:
    """Slice ``items`` by per_page (max 100) and page, with the real API's Link header."""
    per_page = max(1, min(100, ctx.int_arg("per_page", 30)))
    page = max(1, ctx.int_arg("page", 1))
    last = max(1, -(-len(items) // per_page))
    chunk = items[(page - 1) * per_page : page * per_page]

    def link(number: int, rel: str) -> str:
        query = {k: v[-1] for k, v in ctx.query.items()}
        query.update({"per_page": per_page, "page": number})
        return f'<{ctx.base_url}{ctx.path}?{urlencode(query)}>; rel="{rel}"'

    links = []
    if page < last:
        links += [link(page + 1, "next"), link(last, "last")]
    if page > 1:
        links += [link(1, "first"), link(page - 1, "prev")]
    return chunk, ({"Link": ", ".join(links)} if links else {})


class RestApi:
    def __init__(self, state: State, runs: RunEngine):
        self.state = state
        self.runs = runs

    def register(self, router: Router) -> None:
        add = router.add
        add("POST", "/app/installations/{installation_id}/access_tokens", "apps/create-installation-access-token", self.create_access_token)
        add("GET", "/app/installations/{installation_id}", "apps/get-installation", self.get_installation)
        add("GET", "/repos/{owner}/{repo}/installation", "apps/get-repo-installation", self.get_repo_installation)
        add("GET", "/installation/repositories", "apps/list-repos-accessible-to-installation", self.list_installation_repositories)
        add("POST", "/repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches", "actions/create-workflow-dispatch", self.dispatch_workflow)
        add("GET", "/repos/{owner}/{repo}/actions/workflows/{workflow_id}/runs", "actions/list-workflow-runs", self.list_workflow_runs)
        add("GET", "/repos/{owner}/{repo}/actions/runs/{run_id}/attempts/{attempt_number}", "actions/get-workflow-run-attempt", self.get_run_attempt)
        add("GET", "/repos/{owner}/{repo}/actions/runs/{run_id}", "actions/get-workflow-run", self.get_run)
        add("POST", "/repos/{owner}/{repo}/check-runs", "checks/create", self.create_check_run)
        add("GET", "/repos/{owner}/{repo}/check-runs/{check_run_id}/annotations", "checks/list-annotations", self.list_annotations)
        add("GET", "/repos/{owner}/{repo}/check-runs/{check_run_id}", "checks/get", self.get_check_run)
        add("PATCH", "/repos/{owner}/{repo}/check-runs/{check_run_id}", "checks/update", self.update_check_run)
        add("GET", "/repos/{owner}/{repo}/commits/{ref+}/check-runs", "checks/list-for-ref", self.list_check_runs_for_ref)
        add("GET", "/repos/{owner}/{repo}/issues/comments/{comment_id}", "issues/get-comment", self.get_comment)
        add("PATCH", "/repos/{owner}/{repo}/issues/comments/{comment_id}", "issues/update-comment", self.update_comment)
        add("DELETE", "/repos/{owner}/{repo}/issues/comments/{comment_id}", "issues/delete-comment", self.delete_comment)
        add("GET", "/repos/{owner}/{repo}/issues/{issue_number}/comments", "issues/list-comments", self.list_comments)
        add("POST", "/repos/{owner}/{repo}/issues/{issue_number}/comments", "issues/create-comment", self.create_comment)
        add("GET", "/repos/{owner}/{repo}/pulls/{pull_number}", "pulls/get", self.get_pull)
        add("GET", "/user", "users/get-authenticated", self.get_user)
        add("GET", "/user/installations", "apps/list-installations-for-authenticated-user", self.list_user_installations)
        add("GET", "/user/installations/{installation_id}/repositories", "apps/list-installation-repos-for-authenticated-user", self.list_user_installation_repositories)

    # ---- helpers ---------------------------------------------------------------------------

    def _repo(self, ctx: RequestContext, permission: tuple[str, str] | None):
        return require_repository_access(
            self.state, ctx.header("authorization"), ctx.params["owner"], ctx.params["repo"], permission
        )

    @staticmethod
    def _int_param(ctx: RequestContext, name: str) -> int:
        try:
            return int(ctx.params[name])
        except ValueError:
            raise not_found() from None

    def _app_of(self, app_id: int | None):
        return self.state.apps.get(app_id) if app_id is not None else None

    # ---- apps and installations ------------------------------------------------------------

    def create_access_token(self, ctx: RequestContext) -> Reply:
        app = verify_app_jwt(self.state, ctx.header("authorization"))
        installation_id = self._int_param(ctx, "installation_id")
        body = ctx.json(required=False) or {}
        if not isinstance(body, dict):
            raise invalid_request("The request body must be an object.")
        with self.state.lock:
            inst = self.state.installations.get(installation_id)
            if inst is None or inst.app_id != app.id:
                raise not_found()
            if inst.suspended_at is not None:
                raise HostError(403, "This installation has been suspended")
            repos = self.state.installation_repositories(inst.id)
            selected_ids = None
            names, ids = body.get("repositories"), body.get("repository_ids")
            if names is not None or ids is not None:
                by_name = {r.name.lower(): r.id for r in repos}
                by_name.update({r.full_name.lower(): r.id for r in repos})
                wanted: list[int] = []
                for name in names or []:
                    if not isinstance(name, str) or name.lower() not in by_name:
                        raise validation_failed(
                            message="There is at least one repository that does not exist or is not accessible to the parent installation."
                        )
                    wanted.append(by_name[name.lower()])
                for rid in ids or []:
                    if not _is_int(rid) or rid not in {r.id for r in repos}:
                        raise validation_failed(
                            message="There is at least one repository that does not exist or is not accessible to the parent installation."
                        )
                    wanted.append(rid)
                selected_ids = sorted(set(wanted))
            requested = body.get("permissions")
            if requested is None:
                permissions = dict(inst.permissions)
            else:
                if not isinstance(requested, dict):
                    raise invalid_request("Invalid value for 'permissions'.")
                for name, level in requested.items():
                    if level not in ("read", "write", "admin") or not permission_covers(inst.permissions, name, level):
                        raise validation_failed(
                            message="The permissions requested are not granted to this installation."
                        )
                permissions = dict(requested)
            token = issue_installation_token(self.state, inst.id, selected_ids, permissions)
            reply = {
                "token": token.value,
                "expires_at": iso(token.expires_at),
                "permissions": permissions,
                "repository_selection": "selected" if selected_ids is not None else inst.repository_selection,
            }
            if selected_ids is not None:
                reply["repositories"] = [
                    shapes.repository(ctx.base_url, r) for r in repos if r.id in selected_ids
                ]
        return Reply(201, reply)

    def get_installation(self, ctx: RequestContext) -> Reply:
        app = verify_app_jwt(self.state, ctx.header("authorization"))
        installation_id = self._int_param(ctx, "installation_id")
        with self.state.lock:
            inst = self.state.installations.get(installation_id)
            if inst is None or inst.app_id != app.id:
                raise not_found()
            return Reply(200, shapes.installation(ctx.base_url, inst, app))

    def get_repo_installation(self, ctx: RequestContext) -> Reply:
        app = verify_app_jwt(self.state, ctx.header("authorization"))
        with self.state.lock:
            repo = self.state.repository_by_name(ctx.params["owner"], ctx.params["repo"])
            inst = self.state.installations.get(repo.installation_id) if repo and repo.installation_id else None
            if inst is None or inst.app_id != app.id:
                raise not_found()
            return Reply(200, shapes.installation(ctx.base_url, inst, app))

    def list_installation_repositories(self, ctx: RequestContext) -> Reply:
        token = require_installation_token(self.state, ctx.header("authorization"))
        with self.state.lock:
            inst = self.state.installations[token.installation_id]
            repos = [
                r
                for r in self.state.installation_repositories(inst.id)
                if token.repository_ids is None or r.id in token.repository_ids
            ]
            page, headers = paginate(ctx, repos)
            body = {
                "total_count": len(repos),
                "repositories": [shapes.repository(ctx.base_url, r) for r in page],
                "repository_selection": inst.repository_selection,
            }
        return Reply(200, body, headers)

    # ---- workflow dispatch and runs --------------------------------------------------------

    def _workflow(self, repo: Repository, workflow_id: str):
        for workflow in repo.workflows.values():
            if workflow_id in (workflow.file_name, str(workflow.id), workflow.path):
                return workflow
        raise not_found()

    def dispatch_workflow(self, ctx: RequestContext) -> Reply:
        token, repo = self._repo(ctx, ("actions", "write"))
        body = ctx.json()
        with self.state.lock:
            workflow = self._workflow(repo, ctx.params["workflow_id"])
        if not isinstance(body, dict):
            raise invalid_request("The request body must be an object.")
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
        pulls = [p for p in self.state.pulls_of(repo.id) if p.state == "open" and p.head_sha == run.head_sha]
        return shapes.workflow_run(ctx.base_url, repo, run, attempt, pulls)

    def _run_of(self, repo: Repository, ctx: RequestContext):
        run = self.state.runs.get(self._int_param(ctx, "run_id"))
        if run is None or run.repository_id != repo.id:
            raise not_found()
        return run

    def get_run(self, ctx: RequestContext) -> Reply:
        _, repo = self._repo(ctx, ("actions", "read"))
        with self.state.lock:
            run = self._run_of(repo, ctx)
            return Reply(200, self._run_shape(ctx, repo, run, run.current))

    def get_run_attempt(self, ctx: RequestContext) -> Reply:
        _, repo = self._repo(ctx, ("actions", "read"))
        number = self._int_param(ctx, "attempt_number")
        with self.state.lock:
            run = self._run_of(repo, ctx)
            if not 1 <= number <= len(run.attempts):
                raise not_found()
            return Reply(200, self._run_shape(ctx, repo, run, run.attempts[number - 1]))

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

    # ---- check runs ------------------------------------------------------------------------

    def _validate_output(self, output, creating: bool) -> dict:
        if not isinstance(output, dict):
            raise invalid_request("For 'properties/output', it is not an object.")
        required = ("title", "summary") if creating else ("summary",)
        for name in required:
            if name not in output:
                raise invalid_request(f'"{name}" wasn\'t supplied.')
        for name in ("title", "summary", "text"):
            if name in output and not isinstance(output[name], str):
                raise invalid_request(f"For 'properties/{name}', it is not a string.")
        for name in ("summary", "text"):
            if len(output.get(name) or "") > MAX_TEXT:
                raise validation_failed(
                    invalid_field("CheckRun", f"output.{name}", "custom", f"Only {MAX_TEXT} characters are allowed; {len(output[name])} were supplied."),
                )
        annotations = output.get("annotations", [])
        if not isinstance(annotations, list):
            raise invalid_request("For 'properties/annotations', it is not an array.")
        if len(annotations) > MAX_ANNOTATIONS:
            raise invalid_request(f"For 'properties/annotations', it has more than {MAX_ANNOTATIONS} items.")
        for index, item in enumerate(annotations):
            self._validate_annotation(index, item)
        for image in output.get("images", []) or []:
            if not isinstance(image, dict) or not isinstance(image.get("alt"), str) or not isinstance(image.get("image_url"), str):
                raise invalid_request("For 'items', \"alt\" and \"image_url\" are required.")
        return output

    @staticmethod
    def _validate_annotation(index: int, item) -> None:
        where = f"properties/annotations/{index}"
        if not isinstance(item, dict):
            raise invalid_request(f"For '{where}', it is not an object.")
        for name in ("path", "start_line", "end_line", "annotation_level", "message"):
            if name not in item:
                raise invalid_request(f'"{name}" wasn\'t supplied.')
        for name in ("path", "message", "title", "raw_details"):
            if name in item and not isinstance(item[name], str):
                raise invalid_request(f"For '{where}/{name}', it is not a string.")
        for name in ("start_line", "end_line", "start_column", "end_column"):
            if name in item and not _is_int(item[name]):
                raise invalid_request(f"For '{where}/{name}', it is not an integer.")
        if item["annotation_level"] not in ANNOTATION_LEVELS:
            raise invalid_request(f"For '{where}/annotation_level', it is not one of {list(ANNOTATION_LEVELS)}.")
        has_columns = "start_column" in item or "end_column" in item
        if has_columns and item["start_line"] != item["end_line"]:
            # The real API only takes columns on single-line annotations.
            raise validation_failed(
                invalid_field("CheckRun", "annotations", "custom", "start_column and end_column may only be used when start_line and end_line are the same")
            )

    def _validate_actions(self, actions) -> list:
        if not isinstance(actions, list) or len(actions) > 3:
            raise invalid_request("For 'properties/actions', it must be an array of at most 3 items.")
        for action in actions:
            if not isinstance(action, dict):
                raise invalid_request("For 'properties/actions/items', it is not an object.")
            for name, limit in (("label", 20), ("description", 40), ("identifier", 20)):
                if not isinstance(action.get(name), str) or len(action[name]) > limit:
                    raise invalid_request(f"For 'properties/actions/items/{name}', it must be a string of at most {limit} characters.")
        return actions

    def _apply_check_body(self, check: CheckRun, body: dict, creating: bool) -> None:
        """Validate everything first, then change ``check``: a 422 changes nothing."""
        statuses = CHECK_STATUSES_CREATE if creating else CHECK_STATUSES_UPDATE
        status = body.get("status")
        conclusion = body.get("conclusion")
        if status is not None and status not in statuses:
            raise invalid_request(f"For 'properties/status', \"{status}\" is not one of {list(statuses)}.")
        if conclusion is not None and conclusion not in CHECK_CONCLUSIONS:
            raise invalid_request(f"For 'properties/conclusion', \"{conclusion}\" is not one of {list(CHECK_CONCLUSIONS)}.")
        if status == "completed" and conclusion is None:
            raise invalid_request("No subschema in \"anyOf\" matched: 'conclusion' is required when 'status' is 'completed'.")
        for name in ("name", "details_url", "external_id"):
            if name in body and not isinstance(body[name], str):
                raise invalid_request(f"For 'properties/{name}', it is not a string.")
        if "name" in body and not body["name"].strip():
            raise validation_failed(invalid_field("CheckRun", "name", "missing_field"))
        started = _parse_time(body["started_at"], "started_at") if "started_at" in body else None
        completed = _parse_time(body["completed_at"], "completed_at") if "completed_at" in body else None
        output = self._validate_output(body["output"], creating) if "output" in body else None
        actions = self._validate_actions(body["actions"]) if "actions" in body else None
        if output is not None and len(check.annotations) + len(output.get("annotations", [])) > 65535:
            raise validation_failed(invalid_field("CheckRun", "annotations", "custom", "Too many annotations"))

        now = utcnow()
        for name in ("name", "details_url", "external_id"):
            if name in body:
                setattr(check, name, body[name])
        if actions is not None:
            check.actions = actions
        if conclusion is not None:
            # Giving a conclusion completes the check run, whatever status says.
            check.status, check.conclusion = "completed", conclusion
        elif status is not None:
            check.status = status
            if status != "completed":
                check.conclusion = None
        if started is not None:
            check.started_at = started
        elif creating or (check.started_at is None and check.status != "queued"):
            check.started_at = now
        if check.status == "completed":
            check.completed_at = completed or (check.completed_at if not conclusion else None) or now
        else:
            check.completed_at = None
        if output is not None:
            if "title" in output:
                check.title = output["title"]
            check.summary = output["summary"]
            if "text" in output:
                check.text = output["text"]
            check.annotations.extend(dict(a) for a in output.get("annotations", []))

    def _check_shape(self, ctx: RequestContext, repo: Repository, check: CheckRun) -> dict:
        pulls = [p for p in self.state.pulls_of(repo.id) if p.state == "open" and p.head_sha == check.head_sha]
        return shapes.check_run(ctx.base_url, repo, check, self._app_of(check.app_id), pulls)

    def _check_of(self, repo: Repository, ctx: RequestContext) -> CheckRun:
        check = self.state.check_runs.get(self._int_param(ctx, "check_run_id"))
        if check is None or check.repository_id != repo.id:
            raise not_found()
        return check

    def create_check_run(self, ctx: RequestContext) -> Reply:
        token, repo = self._repo(ctx, ("checks", "write"))
        body = ctx.json()
        if not isinstance(body, dict):
            raise invalid_request("The request body must be an object.")
        for name in ("name", "head_sha"):
            if name not in body:
                raise invalid_request(f'"{name}" wasn\'t supplied.')
            if not isinstance(body[name], str):
                raise invalid_request(f"For 'properties/{name}', it is not a string.")
        with self.state.lock:
            if body["head_sha"] not in repo.commits:
                raise validation_failed(
                    invalid_field("CheckRun", "head_sha", "invalid"), message=f"No commit found for SHA: {body['head_sha']}"
                )
            check = CheckRun(
                id=self.state.next_id("check_run"),
                repository_id=repo.id,
                app_id=token.app_id,
                name=body["name"],
                head_sha=body["head_sha"],
                check_suite_id=self.state.next_id("check_suite"),
            )
            self._apply_check_body(check, body, creating=True)
            self.state.check_runs[check.id] = check
            return Reply(201, self._check_shape(ctx, repo, check))

    def get_check_run(self, ctx: RequestContext) -> Reply:
        _, repo = self._repo(ctx, ("checks", "read"))
        with self.state.lock:
            return Reply(200, self._check_shape(ctx, repo, self._check_of(repo, ctx)))

    def update_check_run(self, ctx: RequestContext) -> Reply:
        token, repo = self._repo(ctx, ("checks", "write"))
        body = ctx.json()
        if not isinstance(body, dict):
            raise invalid_request("The request body must be an object.")
        with self.state.lock:
            check = self._check_of(repo, ctx)
            if check.app_id is not None and check.app_id != token.app_id:
                # Only the app that created a check run may update it.
                raise HostError(403, "Invalid app_id `%s` - check run can only be modified by its creator." % token.app_id)
            self._apply_check_body(check, body, creating=False)
            return Reply(200, self._check_shape(ctx, repo, check))

    def list_annotations(self, ctx: RequestContext) -> Reply:
        _, repo = self._repo(ctx, ("checks", "read"))
        with self.state.lock:
            check = self._check_of(repo, ctx)
            page, headers = paginate(ctx, check.annotations)
            return Reply(200, [shapes.annotation(ctx.base_url, repo, check, a) for a in page], headers)

    def list_check_runs_for_ref(self, ctx: RequestContext) -> Reply:
        _, repo = self._repo(ctx, ("checks", "read"))
        ref = ctx.params["ref"]
        with self.state.lock:
            lookup = ref[len("heads/"):] if ref.startswith("heads/") else ref
            resolved = repo.resolve_ref(lookup)
            if resolved is None:
                raise validation_failed(message=f"No commit found for SHA: {ref}")
            sha = resolved[1]
            checks = sorted(
                (c for c in self.state.check_runs.values() if c.repository_id == repo.id and c.head_sha == sha),
                key=lambda c: c.id,
                reverse=True,
            )
            name, status, app_id = ctx.arg("check_name"), ctx.arg("status"), ctx.arg("app_id")
            if name:
                checks = [c for c in checks if c.name == name]
            if status:
                checks = [c for c in checks if c.status == status]
            if app_id:
                checks = [c for c in checks if str(c.app_id) == app_id]
            if ctx.arg("filter", "latest") == "latest":
                seen, latest = set(), []
                for check in checks:
                    if check.name not in seen:
                        seen.add(check.name)
                        latest.append(check)
                checks = latest
            page, headers = paginate(ctx, checks)
            body = {"total_count": len(checks), "check_runs": [self._check_shape(ctx, repo, c) for c in page]}
        return Reply(200, body, headers)

    # ---- issue comments --------------------------------------------------------------------

    COMMENT_PERMISSIONS = (("issues", "write"), ("pull_requests", "write"))

    def _comment_repo(self, ctx: RequestContext, write: bool):
        token, repo = self._repo(ctx, None)
        level = "write" if write else "read"
        if not any(permission_covers(token.permissions, name, level) for name, _ in self.COMMENT_PERMISSIONS):
            raise HostError(403, "Resource not accessible by integration")
        return token, repo

    def _comment_body(self, body) -> str:
        if not isinstance(body, dict):
            raise invalid_request("The request body must be an object.")
        if "body" not in body:
            raise invalid_request('"body" wasn\'t supplied.')
        if not isinstance(body["body"], str):
            raise invalid_request("For 'properties/body', it is not a string.")
        if len(body["body"]) > MAX_COMMENT:
            raise validation_failed(
                invalid_field("IssueComment", "data", "custom", f"Body is too long (maximum is {MAX_COMMENT} characters)"),
            )
        return body["body"]

    def _comment_of(self, repo: Repository, ctx: RequestContext) -> IssueComment:
        comment = self.state.comments.get(self._int_param(ctx, "comment_id"))
        if comment is None or comment.repository_id != repo.id:
            raise not_found()
        return comment

    def _issue_exists(self, repo: Repository, ctx: RequestContext) -> int:
        number = self._int_param(ctx, "issue_number")
        if (repo.id, number) not in self.state.pulls:
            raise not_found()
        return number

    def create_comment(self, ctx: RequestContext) -> Reply:
        token, repo = self._comment_repo(ctx, write=True)
        text = self._comment_body(ctx.json())
        with self.state.lock:
            number = self._issue_exists(repo, ctx)
            app = self._app_of(token.app_id)
            comment = IssueComment(
                id=self.state.next_id("comment"),
                repository_id=repo.id,
                issue_number=number,
                body=text,
                author=shapes.bot_account(app),
                app_id=token.app_id,
            )
            self.state.comments[comment.id] = comment
            shape = shapes.issue_comment(ctx.base_url, repo, comment, app)
        return Reply(201, shape, {"Location": shape["url"]})

    def list_comments(self, ctx: RequestContext) -> Reply:
        _, repo = self._comment_repo(ctx, write=False)
        with self.state.lock:
            number = self._issue_exists(repo, ctx)
            comments = sorted(
                (c for c in self.state.comments.values() if c.repository_id == repo.id and c.issue_number == number),
                key=lambda c: c.id,
            )
            if ctx.arg("since"):
                since = _parse_time(ctx.arg("since"), "since")
                comments = [c for c in comments if c.updated_at >= since]
            page, headers = paginate(ctx, comments)
            body = [shapes.issue_comment(ctx.base_url, repo, c, self._app_of(c.app_id)) for c in page]
        return Reply(200, body, headers)

    def get_comment(self, ctx: RequestContext) -> Reply:
        _, repo = self._comment_repo(ctx, write=False)
        with self.state.lock:
            comment = self._comment_of(repo, ctx)
            return Reply(200, shapes.issue_comment(ctx.base_url, repo, comment, self._app_of(comment.app_id)))

    def update_comment(self, ctx: RequestContext) -> Reply:
        _, repo = self._comment_repo(ctx, write=True)
        text = self._comment_body(ctx.json())
        with self.state.lock:
            comment = self._comment_of(repo, ctx)
            comment.body = text
            comment.updated_at = utcnow()
            return Reply(200, shapes.issue_comment(ctx.base_url, repo, comment, self._app_of(comment.app_id)))

    def delete_comment(self, ctx: RequestContext) -> Reply:
        _, repo = self._comment_repo(ctx, write=True)
        with self.state.lock:
            comment = self._comment_of(repo, ctx)
            del self.state.comments[comment.id]
        return Reply(204)

    # ---- pull requests ---------------------------------------------------------------------

    def get_pull(self, ctx: RequestContext) -> Reply:
        _, repo = self._repo(ctx, ("pull_requests", "read"))
        with self.state.lock:
            pull = self.state.pulls.get((repo.id, self._int_param(ctx, "pull_number")))
            if pull is None:
                raise not_found()
            return Reply(200, shapes.pull_request(ctx.base_url, repo, pull))

    # ---- the signed-in user ----------------------------------------------------------------

    def _user_installations(self, token, user):
        visible = {user.login.lower(), *(o.lower() for o in user.organizations)}
        return [
            inst
            for inst in sorted(self.state.installations.values(), key=lambda i: i.id)
            if inst.account.login.lower() in visible and (token.app_id is None or inst.app_id == token.app_id)
        ]

    def get_user(self, ctx: RequestContext) -> Reply:
        _, user = require_user_token(self.state, ctx.header("authorization"))
        return Reply(200, shapes.private_user(ctx.base_url, user))

    def list_user_installations(self, ctx: RequestContext) -> Reply:
        token, user = require_user_token(self.state, ctx.header("authorization"))
        with self.state.lock:
            installations = self._user_installations(token, user)
            page, headers = paginate(ctx, installations)
            body = {
                "total_count": len(installations),
                "installations": [
                    shapes.installation(ctx.base_url, i, self.state.apps[i.app_id]) for i in page
                ],
            }
        return Reply(200, body, headers)

    def list_user_installation_repositories(self, ctx: RequestContext) -> Reply:
        token, user = require_user_token(self.state, ctx.header("authorization"))
        installation_id = self._int_param(ctx, "installation_id")
        with self.state.lock:
            inst = next((i for i in self._user_installations(token, user) if i.id == installation_id), None)
            if inst is None:
                raise not_found()
            repos = self.state.installation_repositories(inst.id)
            page, headers = paginate(ctx, repos)
            body = {
                "total_count": len(repos),
                "repository_selection": inst.repository_selection,
                "repositories": [shapes.repository(ctx.base_url, r) for r in page],
            }
        return Reply(200, body, headers)
