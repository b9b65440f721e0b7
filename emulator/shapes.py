"""REST shapes of the emulator's records, as the real API renders them.

Every function takes the emulator's base URL (it plays both the API host and the
web host) and a record, and returns the JSON object the real API would send,
with at least every field the REST description marks as required.
"""
from __future__ import annotations

import base64

from emulator.state import (
    Account,
    App,
    CheckRun,
    Installation,
    IssueComment,
    PullRequest,
    Repository,
    RunAttempt,
    User,
    WorkflowRun,
    iso,
)


def node_id(kind: str, number: int) -> str:
    return base64.b64encode(f"0:{kind}{number}".encode()).decode().rstrip("=")


def simple_user(base: str, account: Account) -> dict:
    api = f"{base}/users/{account.login}"
    return {
        "login": account.login,
        "id": account.id,
        "node_id": node_id("User" if account.type != "Organization" else "Organization", account.id),
        "avatar_url": f"{base}/avatars/u/{account.id}?v=4",
        "gravatar_id": "",
        "url": api,
        "html_url": f"{base}/{account.login}",
        "followers_url": f"{api}/followers",
        "following_url": f"{api}/following{{/other_user}}",
        "gists_url": f"{api}/gists{{/gist_id}}",
        "starred_url": f"{api}/starred{{/owner}}{{/repo}}",
        "subscriptions_url": f"{api}/subscriptions",
        "organizations_url": f"{api}/orgs",
        "repos_url": f"{api}/repos",
        "events_url": f"{api}/events{{/privacy}}",
        "received_events_url": f"{api}/received_events",
        "type": account.type,
        "site_admin": False,
    }


def bot_account(app: App) -> Account:
    # The app acts on the code host as "<slug>[bot]", a Bot account.
    return Account(f"{app.slug}[bot]", app.id + 41_000_000, "Bot")


def private_user(base: str, user: User) -> dict:
    shape = simple_user(base, user.account)
    created = "2020-01-01T00:00:00Z"
    shape.update(
        {
            "name": user.name,
            "company": None,
            "blog": "",
            "location": None,
            "email": user.email,
            "hireable": None,
            "bio": None,
            "public_repos": 0,
            "public_gists": 0,
            "followers": 0,
            "following": 0,
            "created_at": created,
            "updated_at": created,
            "private_gists": 0,
            "total_private_repos": 0,
            "owned_private_repos": 0,
            "disk_usage": 0,
            "collaborators": 0,
            "two_factor_authentication": True,
        }
    )
    return shape


#: The fields of a private-user that the public-user shape (GET /user/{account_id}) does not have.
PRIVATE_USER_ONLY = ("private_gists", "total_private_repos", "owned_private_repos", "disk_usage", "collaborators",
                     "two_factor_authentication")


def public_user(base: str, user: User) -> dict:
    """A person as anyone sees them (GET /user/{account_id}, GET /users/{username})."""
    return {k: v for k, v in private_user(base, user).items() if k not in PRIVATE_USER_ONLY}


def app_shape(base: str, app: App) -> dict:
    return {
        "id": app.id,
        "slug": app.slug,
        "node_id": node_id("Integration", app.id),
        "client_id": app.client_id,
        "owner": simple_user(base, app.owner),
        "name": app.name,
        "description": "",
        "external_url": f"{base}/apps/{app.slug}/external",
        "html_url": f"{base}/apps/{app.slug}",
        "created_at": iso(app.created_at),
        "updated_at": iso(app.created_at),
        "permissions": dict(app.permissions),
        "events": list(app.events),
    }


def installation(base: str, inst: Installation, app: App) -> dict:
    return {
        "id": inst.id,
        "account": simple_user(base, inst.account),
        "repository_selection": inst.repository_selection,
        "access_tokens_url": f"{base}/app/installations/{inst.id}/access_tokens",
        "repositories_url": f"{base}/installation/repositories",
        "html_url": f"{base}/organizations/{inst.account.login}/settings/installations/{inst.id}"
        if inst.account.type == "Organization"
        else f"{base}/settings/installations/{inst.id}",
        "app_id": inst.app_id,
        "app_slug": app.slug,
        "target_id": inst.account.id,
        "target_type": inst.account.type,
        "permissions": dict(inst.permissions),
        "events": list(inst.events),
        "created_at": iso(inst.created_at),
        "updated_at": iso(inst.updated_at),
        "single_file_name": None,
        "has_multiple_single_files": False,
        "single_file_paths": [],
        "suspended_by": None,
        "suspended_at": iso(inst.suspended_at),
    }


def repository_identity(repo: Repository) -> dict:
    """The fields every repository shape starts with."""
    return {
        "id": repo.id,
        "node_id": node_id("Repository", repo.id),
        "name": repo.name,
        "full_name": repo.full_name,
        "private": repo.private,
    }


def minimal_repository(base: str, repo: Repository) -> dict:
    api = f"{base}/repos/{repo.full_name}"
    return {
        **repository_identity(repo),
        "owner": simple_user(base, repo.owner),
        "html_url": f"{base}/{repo.full_name}",
        "description": None,
        "fork": False,
        "url": api,
        "archive_url": f"{api}/{{archive_format}}{{/ref}}",
        "assignees_url": f"{api}/assignees{{/user}}",
        "blobs_url": f"{api}/git/blobs{{/sha}}",
        "branches_url": f"{api}/branches{{/branch}}",
        "collaborators_url": f"{api}/collaborators{{/collaborator}}",
        "comments_url": f"{api}/comments{{/number}}",
        "commits_url": f"{api}/commits{{/sha}}",
        "compare_url": f"{api}/compare/{{base}}...{{head}}",
        "contents_url": f"{api}/contents/{{+path}}",
        "contributors_url": f"{api}/contributors",
        "deployments_url": f"{api}/deployments",
        "downloads_url": f"{api}/downloads",
        "events_url": f"{api}/events",
        "forks_url": f"{api}/forks",
        "git_commits_url": f"{api}/git/commits{{/sha}}",
        "git_refs_url": f"{api}/git/refs{{/sha}}",
        "git_tags_url": f"{api}/git/tags{{/sha}}",
        "hooks_url": f"{api}/hooks",
        "issue_comment_url": f"{api}/issues/comments{{/number}}",
        "issue_events_url": f"{api}/issues/events{{/number}}",
        "issues_url": f"{api}/issues{{/number}}",
        "keys_url": f"{api}/keys{{/key_id}}",
        "labels_url": f"{api}/labels{{/name}}",
        "languages_url": f"{api}/languages",
        "merges_url": f"{api}/merges",
        "milestones_url": f"{api}/milestones{{/number}}",
        "notifications_url": f"{api}/notifications{{?since,all,participating}}",
        "pulls_url": f"{api}/pulls{{/number}}",
        "releases_url": f"{api}/releases{{/id}}",
        "stargazers_url": f"{api}/stargazers",
        "statuses_url": f"{api}/statuses/{{sha}}",
        "subscribers_url": f"{api}/subscribers",
        "subscription_url": f"{api}/subscription",
        "tags_url": f"{api}/tags",
        "teams_url": f"{api}/teams",
        "trees_url": f"{api}/git/trees{{/sha}}",
    }


def repository(base: str, repo: Repository) -> dict:
    shape = minimal_repository(base, repo)
    host = base.split("://", 1)[-1]
    shape.update(
        {
            "clone_url": f"{base}/{repo.full_name}.git",
            "git_url": f"git://{host}/{repo.full_name}.git",
            "ssh_url": f"git@{host}:{repo.full_name}.git",
            "svn_url": f"{base}/{repo.full_name}",
            "mirror_url": None,
            "homepage": None,
            "language": None,
            "forks": 0,
            "forks_count": 0,
            "stargazers_count": 0,
            "watchers": 0,
            "watchers_count": 0,
            "size": 0,
            "default_branch": repo.default_branch,
            "open_issues": 0,
            "open_issues_count": 0,
            "is_template": False,
            "topics": [],
            "has_issues": True,
            "has_projects": False,
            "has_wiki": False,
            "has_pages": False,
            "has_downloads": True,
            "has_discussions": False,
            "archived": False,
            "disabled": False,
            "visibility": "private" if repo.private else "public",
            "pushed_at": iso(repo.created_at),
            "created_at": iso(repo.created_at),
            "updated_at": iso(repo.created_at),
            "permissions": {"admin": False, "maintain": False, "push": False, "triage": False, "pull": True},
            "allow_forking": False,
            "web_commit_signoff_required": False,
            "custom_properties": {},
            "license": None,
        }
    )
    return shape


ROLE_ORDER = ("pull", "triage", "push", "maintain", "admin")
#: the legacy permission name of each role (GET .../collaborators/{username}/permission).
LEGACY_PERMISSION = {"admin": "admin", "maintain": "write", "push": "write", "triage": "read", "pull": "read",
                     "none": "none"}
ROLE_NAME = {"admin": "admin", "maintain": "maintain", "push": "write", "triage": "triage", "pull": "read",
             "none": "none"}


def role_permissions(role: str) -> dict:
    """The ``permissions`` object of a repository as a user with ``role`` sees it: each role includes the lower ones."""
    rank = ROLE_ORDER.index(role) if role in ROLE_ORDER else -1
    return {name: rank >= ROLE_ORDER.index(name) for name in ("admin", "maintain", "push", "triage", "pull")}


def webhook_repository(base: str, repo: Repository) -> dict:
    """The short repository entry of installation and installation_repositories events."""
    return repository_identity(repo)


def pull_request_minimal(base: str, repo: Repository, pull: PullRequest) -> dict:
    repo_ref = {"id": repo.id, "url": f"{base}/repos/{repo.full_name}", "name": repo.name}
    return {
        "id": pull.id,
        "number": pull.number,
        "url": f"{base}/repos/{repo.full_name}/pulls/{pull.number}",
        "head": {"ref": pull.head_ref, "sha": pull.head_sha, "repo": repo_ref},
        "base": {"ref": pull.base_ref, "sha": pull.base_sha, "repo": repo_ref},
    }


def pull_request(base: str, repo: Repository, pull: PullRequest) -> dict:
    """The full pull request object (webhook payloads and GET /pulls/{number})."""
    api = f"{base}/repos/{repo.full_name}"
    html = f"{base}/{repo.full_name}/pull/{pull.number}"
    full_repo = repository(base, repo)
    full_repo.pop("permissions", None)
    # The repositories inside a pull request also carry the merge settings.
    full_repo.update({"allow_merge_commit": True, "allow_rebase_merge": True, "allow_squash_merge": True,
                      "allow_auto_merge": False, "delete_branch_on_merge": False})

    def side(ref: str, sha: str) -> dict:
        return {
            "label": f"{repo.owner.login}:{ref}",
            "ref": ref,
            "sha": sha,
            "user": simple_user(base, repo.owner),
            "repo": full_repo,
        }

    return {
        "url": f"{api}/pulls/{pull.number}",
        "id": pull.id,
        "node_id": node_id("PullRequest", pull.id),
        "html_url": html,
        "diff_url": f"{html}.diff",
        "patch_url": f"{html}.patch",
        "issue_url": f"{api}/issues/{pull.number}",
        "number": pull.number,
        "state": pull.state,
        "locked": False,
        "title": pull.title,
        "user": simple_user(base, pull.author),
        "body": None,
        "created_at": iso(pull.created_at),
        "updated_at": iso(pull.updated_at),
        "closed_at": iso(pull.closed_at),
        "merged_at": iso(pull.closed_at) if pull.merged else None,
        "merge_commit_sha": None,
        "assignee": None,
        "assignees": [],
        "requested_reviewers": [],
        "requested_teams": [],
        "labels": [],
        "milestone": None,
        "draft": pull.draft,
        "commits_url": f"{api}/pulls/{pull.number}/commits",
        "review_comments_url": f"{api}/pulls/{pull.number}/comments",
        "review_comment_url": f"{api}/pulls/comments{{/number}}",
        "comments_url": f"{api}/issues/{pull.number}/comments",
        "statuses_url": f"{api}/statuses/{pull.head_sha}",
        "head": side(pull.head_ref, pull.head_sha),
        "base": side(pull.base_ref, pull.base_sha),
        "_links": {
            "self": {"href": f"{api}/pulls/{pull.number}"},
            "html": {"href": html},
            "issue": {"href": f"{api}/issues/{pull.number}"},
            "comments": {"href": f"{api}/issues/{pull.number}/comments"},
            "review_comments": {"href": f"{api}/pulls/{pull.number}/comments"},
            "review_comment": {"href": f"{api}/pulls/comments{{/number}}"},
            "commits": {"href": f"{api}/pulls/{pull.number}/commits"},
            "statuses": {"href": f"{api}/statuses/{pull.head_sha}"},
        },
        "author_association": "MEMBER",
        "auto_merge": None,
        "active_lock_reason": None,
        "merged": pull.merged,
        "mergeable": None,
        "rebaseable": None,
        "mergeable_state": "unknown",
        "merged_by": None,
        "comments": 0,
        "review_comments": 0,
        "maintainer_can_modify": False,
        "commits": 1,
        "additions": 0,
        "deletions": 0,
        "changed_files": 0,
    }


def workflow_run(base: str, repo: Repository, run: WorkflowRun, attempt: RunAttempt, pulls: list) -> dict:
    api = f"{base}/repos/{repo.full_name}/actions/runs/{run.id}"
    html = f"{base}/{repo.full_name}/actions/runs/{run.id}"
    previous = f"{api}/attempts/{attempt.number - 1}" if attempt.number > 1 else None
    actor = simple_user(base, run.actor)
    return {
        "id": run.id,
        "name": "readiness-runner" if run.workflow_file == "readiness-runner.yml" else run.workflow_file,
        "node_id": node_id("WorkflowRun", run.id),
        "check_suite_id": run.id + 1,
        "check_suite_node_id": node_id("CheckSuite", run.id + 1),
        "head_branch": run.head_branch,
        "head_sha": run.head_sha,
        "path": f".github/workflows/{run.workflow_file}",
        "display_title": run.display_title or run.workflow_file.rsplit(".", 1)[0],
        "run_number": run.run_number,
        "run_attempt": attempt.number,
        "referenced_workflows": [],
        "event": "workflow_dispatch",
        "status": attempt.status,
        "conclusion": attempt.conclusion,
        "workflow_id": run.workflow_id,
        "url": api,
        "html_url": html if attempt.number == 1 else f"{html}/attempts/{attempt.number}",
        # A workflow_dispatch run lists the open pull requests whose head is the run's commit.
        "pull_requests": [pull_request_minimal(base, repo, p) for p in pulls],
        "created_at": iso(attempt.created_at),
        "updated_at": iso(attempt.updated_at),
        "actor": actor,
        "triggering_actor": actor,
        "run_started_at": iso(attempt.started_at or attempt.created_at),
        "jobs_url": f"{api}/jobs",
        "logs_url": f"{api}/logs",
        "check_suite_url": f"{base}/repos/{repo.full_name}/check-suites/{run.id + 1}",
        "artifacts_url": f"{api}/artifacts",
        "cancel_url": f"{api}/cancel",
        "rerun_url": f"{api}/rerun",
        "previous_attempt_url": previous,
        "workflow_url": f"{base}/repos/{repo.full_name}/actions/workflows/{run.workflow_id}",
        "head_commit": {
            "id": run.head_sha,
            "tree_id": run.head_sha[::-1],
            "message": "emulated commit",
            "timestamp": iso(run.created_at),
            "author": {"name": run.actor.login, "email": f"{run.actor.login}@users.noreply.example"},
            "committer": {"name": run.actor.login, "email": f"{run.actor.login}@users.noreply.example"},
        },
        "repository": minimal_repository(base, repo),
        "head_repository": minimal_repository(base, repo),
        "head_repository_id": repo.id,
    }


def check_run(base: str, repo: Repository, check: CheckRun, app: App | None, pulls: list) -> dict:
    api = f"{base}/repos/{repo.full_name}/check-runs/{check.id}"
    return {
        "id": check.id,
        "head_sha": check.head_sha,
        "node_id": node_id("CheckRun", check.id),
        "external_id": check.external_id,
        "url": api,
        "html_url": f"{base}/{repo.full_name}/runs/{check.id}",
        "details_url": check.details_url,
        "status": check.status,
        "conclusion": check.conclusion,
        "started_at": iso(check.started_at),
        "completed_at": iso(check.completed_at),
        "output": {
            "title": check.title,
            "summary": check.summary,
            "text": check.text,
            "annotations_count": len(check.annotations),
            "annotations_url": f"{api}/annotations",
        },
        "name": check.name,
        "check_suite": {"id": check.check_suite_id},
        "app": app_shape(base, app) if app else None,
        "pull_requests": [pull_request_minimal(base, repo, p) for p in pulls],
    }


def annotation(base: str, repo: Repository, check: CheckRun, item: dict) -> dict:
    return {
        "path": item["path"],
        "start_line": item["start_line"],
        "end_line": item["end_line"],
        "start_column": item.get("start_column"),
        "end_column": item.get("end_column"),
        "annotation_level": item["annotation_level"],
        "title": item.get("title", ""),
        "message": item["message"],
        "raw_details": item.get("raw_details", ""),
        "blob_href": f"{base}/{repo.full_name}/blob/{check.head_sha}/{item['path']}",
    }


def issue_comment(base: str, repo: Repository, comment: IssueComment, app: App | None) -> dict:
    api = f"{base}/repos/{repo.full_name}"
    return {
        "id": comment.id,
        "node_id": node_id("IssueComment", comment.id),
        "url": f"{api}/issues/comments/{comment.id}",
        "html_url": f"{base}/{repo.full_name}/pull/{comment.issue_number}#issuecomment-{comment.id}",
        "body": comment.body,
        "user": simple_user(base, comment.author),
        "created_at": iso(comment.created_at),
        "updated_at": iso(comment.updated_at),
        "issue_url": f"{api}/issues/{comment.issue_number}",
        "author_association": "NONE",
        "performed_via_github_app": app_shape(base, app) if app else None,
        "reactions": {
            "url": f"{api}/issues/comments/{comment.id}/reactions",
            "total_count": 0,
            "+1": 0,
            "-1": 0,
            "laugh": 0,
            "confused": 0,
            "heart": 0,
            "hooray": 0,
            "eyes": 0,
            "rocket": 0,
        },
    }


def error(status: int, message: str, errors: list | None = None) -> dict:
    """The real API's error body."""
    body = {
        "message": message,
        "documentation_url": "https://docs.github.com/rest",
        "status": str(status),
    }
    if errors is not None:
        body["errors"] = errors
    return body
