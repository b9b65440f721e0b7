"""Check runs: create and update with the host's validation, annotations, the list for a ref."""
from __future__ import annotations

from emulator import shapes
from emulator.errors import HostError, invalid_field, validation_failed
from emulator.rest.common import RouteGroup, invalid_request, is_int, json_object, paginate, parse_time
from emulator.routing import Reply, RequestContext, route
from emulator.state import CheckRun, Repository, utcnow

MAX_TEXT = 65535
MAX_ANNOTATIONS = 50
CHECK_STATUSES_CREATE = ("queued", "in_progress", "completed")
CHECK_STATUSES_UPDATE = ("queued", "in_progress", "completed", "waiting", "requested", "pending")
CHECK_CONCLUSIONS = ("action_required", "cancelled", "failure", "neutral", "success", "skipped", "stale", "timed_out")
ANNOTATION_LEVELS = ("notice", "warning", "failure")


class CheckRunRoutes(RouteGroup):
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
            if name in item and not is_int(item[name]):
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
        started = parse_time(body["started_at"], "started_at") if "started_at" in body else None
        completed = parse_time(body["completed_at"], "completed_at") if "completed_at" in body else None
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
        return shapes.check_run(ctx.base_url, repo, check, self._app_of(check.app_id), self._open_pulls_at(repo, check.head_sha))

    def _check_of(self, repo: Repository, ctx: RequestContext) -> CheckRun:
        return self._record_of(repo, self.state.check_runs, ctx, "check_run_id")

    @route("POST", "/repos/{owner}/{repo}/check-runs", "checks/create")
    def create_check_run(self, ctx: RequestContext) -> Reply:
        token, repo = self._repo(ctx, ("checks", "write"))
        body = json_object(ctx.json())
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

    @route("GET", "/repos/{owner}/{repo}/check-runs/{check_run_id}", "checks/get")
    def get_check_run(self, ctx: RequestContext) -> Reply:
        _, repo = self._repo(ctx, ("checks", "read"))
        with self.state.lock:
            return Reply(200, self._check_shape(ctx, repo, self._check_of(repo, ctx)))

    @route("PATCH", "/repos/{owner}/{repo}/check-runs/{check_run_id}", "checks/update")
    def update_check_run(self, ctx: RequestContext) -> Reply:
        token, repo = self._repo(ctx, ("checks", "write"))
        body = json_object(ctx.json())
        with self.state.lock:
            check = self._check_of(repo, ctx)
            if check.app_id is not None and check.app_id != token.app_id:
                # Only the app that created a check run may update it.
                raise HostError(403, f"Invalid app_id `{token.app_id}` - check run can only be modified by its creator.")
            self._apply_check_body(check, body, creating=False)
            return Reply(200, self._check_shape(ctx, repo, check))

    @route("GET", "/repos/{owner}/{repo}/check-runs/{check_run_id}/annotations", "checks/list-annotations")
    def list_annotations(self, ctx: RequestContext) -> Reply:
        _, repo = self._repo(ctx, ("checks", "read"))
        with self.state.lock:
            check = self._check_of(repo, ctx)
            page, headers = paginate(ctx, check.annotations)
            return Reply(200, [shapes.annotation(ctx.base_url, repo, check, a) for a in page], headers)

    @route("GET", "/repos/{owner}/{repo}/commits/{ref+}/check-runs", "checks/list-for-ref")
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
