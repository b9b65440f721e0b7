"""Issue comments (the pull request comment the service keeps up to date)."""
from __future__ import annotations

from emulator import shapes
from emulator.auth import permission_covers
from emulator.errors import HostError, invalid_field, not_found, validation_failed
from emulator.rest.common import RouteGroup, invalid_request, json_object, paginate, parse_time
from emulator.routing import Reply, RequestContext, route
from emulator.state import IssueComment, Repository, utcnow

MAX_COMMENT = 65536


class IssueCommentRoutes(RouteGroup):
    COMMENT_PERMISSIONS = (("issues", "write"), ("pull_requests", "write"))

    def _comment_repo(self, ctx: RequestContext, write: bool):
        token, repo = self._repo(ctx, None)
        level = "write" if write else "read"
        if not any(permission_covers(token.permissions, name, level) for name, _ in self.COMMENT_PERMISSIONS):
            raise HostError(403, "Resource not accessible by integration")
        return token, repo

    def _comment_write(self, ctx: RequestContext):
        """The token, repository and new text of a comment being written: access is checked before the body."""
        token, repo = self._comment_repo(ctx, write=True)
        return token, repo, self._comment_text(json_object(ctx.json()))

    @staticmethod
    def _comment_text(body: dict) -> str:
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
        return self._record_of(repo, self.state.comments, ctx, "comment_id")

    def _issue_exists(self, repo: Repository, ctx: RequestContext) -> int:
        number = self._int_param(ctx, "issue_number")
        if (repo.id, number) not in self.state.pulls:
            raise not_found()
        return number

    @route("GET", "/repos/{owner}/{repo}/issues/comments/{comment_id}", "issues/get-comment")
    def get_comment(self, ctx: RequestContext) -> Reply:
        _, repo = self._comment_repo(ctx, write=False)
        with self.state.lock:
            comment = self._comment_of(repo, ctx)
            return Reply(200, shapes.issue_comment(ctx.base_url, repo, comment, self._app_of(comment.app_id)))

    @route("PATCH", "/repos/{owner}/{repo}/issues/comments/{comment_id}", "issues/update-comment")
    def update_comment(self, ctx: RequestContext) -> Reply:
        _, repo, text = self._comment_write(ctx)
        with self.state.lock:
            comment = self._comment_of(repo, ctx)
            comment.body = text
            comment.updated_at = utcnow()
            return Reply(200, shapes.issue_comment(ctx.base_url, repo, comment, self._app_of(comment.app_id)))

    @route("DELETE", "/repos/{owner}/{repo}/issues/comments/{comment_id}", "issues/delete-comment")
    def delete_comment(self, ctx: RequestContext) -> Reply:
        _, repo = self._comment_repo(ctx, write=True)
        with self.state.lock:
            comment = self._comment_of(repo, ctx)
            del self.state.comments[comment.id]
        return Reply(204)

    @route("POST", "/repos/{owner}/{repo}/issues/{issue_number}/comments", "issues/create-comment")
    def create_comment(self, ctx: RequestContext) -> Reply:
        token, repo, text = self._comment_write(ctx)
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

    @route("GET", "/repos/{owner}/{repo}/issues/{issue_number}/comments", "issues/list-comments")
    def list_comments(self, ctx: RequestContext) -> Reply:
        _, repo = self._comment_repo(ctx, write=False)
        with self.state.lock:
            number = self._issue_exists(repo, ctx)
            comments = sorted(
                (c for c in self.state.comments.values() if c.repository_id == repo.id and c.issue_number == number),
                key=lambda c: c.id,
            )
            if ctx.arg("since"):
                since = parse_time(ctx.arg("since"), "since")
                comments = [c for c in comments if c.updated_at >= since]
            page, headers = paginate(ctx, comments)
            body = [shapes.issue_comment(ctx.base_url, repo, c, self._app_of(c.app_id)) for c in page]
        return Reply(200, body, headers)
