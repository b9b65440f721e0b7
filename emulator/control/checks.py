"""What the app wrote on the host, for assertions: check runs, annotations, comments."""
from __future__ import annotations

from emulator.control.base import ControlBase, ControlError
from emulator.routing import route
from emulator.state import iso


class CheckControls(ControlBase):
    @route("GET", "/_emulator/check-runs")
    def check_runs(self, full_name: str | None = None) -> list[dict]:
        with self.state.lock:
            repo_id = self._repo(full_name).id if full_name else None
            return [
                {"id": c.id, "repository": self.state.repositories[c.repository_id].full_name, "app_id": c.app_id,
                 "name": c.name, "head_sha": c.head_sha, "status": c.status, "conclusion": c.conclusion,
                 "external_id": c.external_id, "details_url": c.details_url, "title": c.title, "summary": c.summary,
                 "text": c.text, "annotations_count": len(c.annotations), "started_at": iso(c.started_at),
                 "completed_at": iso(c.completed_at)}
                for c in sorted(self.state.check_runs.values(), key=lambda c: c.id)
                if repo_id is None or c.repository_id == repo_id
            ]

    @route("GET", "/_emulator/check-runs/{check_run_id}/annotations")
    def annotations(self, check_run_id: int) -> list[dict]:
        """Every annotation a check run accumulated across create and updates, in order."""
        with self.state.lock:
            check = self.state.check_runs.get(int(check_run_id))
            if check is None:
                raise ControlError(f"unknown check run {check_run_id}", 404)
            return [dict(a) for a in check.annotations]

    @route("GET", "/_emulator/comments")
    def comments(self, full_name: str | None = None, issue_number: int | None = None) -> list[dict]:
        with self.state.lock:
            repo_id = self._repo(full_name).id if full_name else None
            return [
                {"id": c.id, "repository": self.state.repositories[c.repository_id].full_name,
                 "issue_number": c.issue_number, "body": c.body, "author": c.author.login,
                 "created_at": iso(c.created_at), "updated_at": iso(c.updated_at)}
                for c in sorted(self.state.comments.values(), key=lambda c: c.id)
                if (repo_id is None or c.repository_id == repo_id)
                and (issue_number is None or c.issue_number == int(issue_number))
            ]
