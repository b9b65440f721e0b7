"""Control of pull requests: open, push a new head, close, reopen, merge, draft."""
from __future__ import annotations

from emulator import webhooks
from emulator.control.base import ControlBase, ControlError
from emulator.routing import route
from emulator.state import Account, IssueComment, PullRequest, random_sha, utcnow


class PullRequestControls(ControlBase):
    @route("POST", "/_emulator/repositories/{owner}/{repo}/pulls")
    def open_pull_request(self, full_name: str, number: int | None = None, head_ref: str | None = None,
                          head_sha: str | None = None, base_ref: str | None = None, title: str | None = None,
                          draft: bool = False, author_login: str | None = None, deliver: bool = False) -> dict:
        with self.state.lock:
            repo = self._repo(full_name)
            number = int(number) if number else self.state.next_pull_number(repo.id)
            if (repo.id, number) in self.state.pulls:
                raise ControlError(f"pull request #{number} exists")
            head_ref = head_ref or f"feature-{number}"
            head_sha = head_sha or random_sha()
            base_ref = base_ref or repo.default_branch
            if base_ref not in repo.branches:
                raise ControlError(f"unknown base branch {base_ref}")
            repo.branches[head_ref] = head_sha
            repo.commits.add(head_sha)
            author = Account(author_login, self.state.next_id("account"), "User") if author_login else webhooks.default_sender(repo.owner)
            pull = PullRequest(id=self.state.next_id("pull"), number=number, repository_id=repo.id, head_ref=head_ref,
                               head_sha=head_sha, base_ref=base_ref, base_sha=repo.branches[base_ref],
                               title=title or f"Change {number}", author=author, draft=draft)
            self.state.pulls[(repo.id, number)] = pull
            result = self._pull_dict(repo, pull)
        if deliver:
            result["delivery"] = self.send_pull_request_event(full_name, number, "opened")
        return result

    @route("POST", "/_emulator/repositories/{owner}/{repo}/pulls/{number}/synchronize")
    def synchronize_pull_request(self, full_name: str, number: int, head_sha: str | None = None, deliver: bool = False) -> dict:
        """Push a new head commit to the pull request's branch."""
        with self.state.lock:
            repo = self._repo(full_name)
            pull = self._pull(repo, number)
            before = pull.head_sha
            pull.head_sha = head_sha or random_sha()
            pull.updated_at = utcnow()
            repo.branches[pull.head_ref] = pull.head_sha
            repo.commits.add(pull.head_sha)
            result = self._pull_dict(repo, pull)
        if deliver:
            result["delivery"] = self.send_pull_request_event(full_name, number, "synchronize", before=before)
        return result

    @route("POST", "/_emulator/repositories/{owner}/{repo}/pulls/{number}/comments")
    def comment_as_person(self, full_name: str, number: int, login: str, body: str) -> dict:
        """A comment a person writes on the pull request in the code host's web page (its
        author is that person, no app performed it)."""
        with self.state.lock:
            repo = self._repo(full_name)
            self._pull(repo, number)
            author = next((u.account for u in self.state.users.values() if u.login == login), None)
            if author is None:
                raise ControlError(f"unknown user {login}", 404)
            comment = IssueComment(id=self.state.next_id("comment"), repository_id=repo.id, issue_number=int(number),
                                   body=body, author=author, app_id=None)
            self.state.comments[comment.id] = comment
            return {"id": comment.id, "body": body, "author": login}

    @route("POST", "/_emulator/repositories/{owner}/{repo}/pulls/{number}/state")
    def set_pull_request_state(self, full_name: str, number: int, action: str, deliver: bool = False) -> dict:
        """closed | reopened | ready_for_review | converted_to_draft | merged (closed with merged=true)."""
        with self.state.lock:
            repo = self._repo(full_name)
            pull = self._pull(repo, number)
            now = utcnow()
            if action in ("closed", "merged"):
                pull.state, pull.closed_at, pull.merged = "closed", now, action == "merged"
            elif action == "reopened":
                pull.state, pull.closed_at, pull.merged = "open", None, False
            elif action in ("ready_for_review", "converted_to_draft"):
                pull.draft = action == "converted_to_draft"
            else:
                raise ControlError(f"unknown pull request action {action}")
            pull.updated_at = now
            result = self._pull_dict(repo, pull)
        if deliver:
            result["delivery"] = self.send_pull_request_event(full_name, number, "closed" if action == "merged" else action)
        return result
