"""The emulator's world: apps, installations, repositories, pull requests, runs,
check runs, comments, users and tokens, all held in memory behind one lock.

Every reader and writer goes through ``State.lock`` (re-entrant, so a helper may
call another helper while holding it). Records are plain dataclasses; their REST
shapes are built in ``emulator.shapes`` so that this module stays about data.

Identifiers start above 2**31 (runs and check runs above 2**32), as they do on the
real code host today, so that a 32-bit column or parser fails here, not in production.
"""
from __future__ import annotations

import itertools
import secrets
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime

DEFAULT_WORKFLOW = "readiness-runner.yml"
RUN_MODES = ("manual", "auto", "execute")


def utcnow() -> datetime:
    return datetime.now(UTC).replace(microsecond=0)


def iso(moment: datetime | None) -> str | None:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ") if moment else None


def random_sha() -> str:
    return secrets.token_hex(20)


@dataclass
class Account:
    """A user or organization that owns repositories and installations."""

    login: str
    id: int
    type: str = "Organization"  # or "User"


@dataclass
class App:
    id: int
    slug: str
    name: str
    public_key_pem: str
    client_id: str
    client_secret: str
    owner: Account
    permissions: dict
    events: list
    #: registered callback URLs; a redirect_uri must be one of them or below one (none: any).
    callback_urls: list = field(default_factory=list)
    created_at: datetime = field(default_factory=utcnow)


@dataclass
class Installation:
    id: int
    app_id: int
    account: Account
    repository_selection: str = "selected"
    permissions: dict = field(default_factory=dict)
    events: list = field(default_factory=list)
    created_at: datetime = field(default_factory=utcnow)
    updated_at: datetime = field(default_factory=utcnow)
    suspended_at: datetime | None = None


@dataclass
class Workflow:
    id: int
    file_name: str
    #: Input names the workflow file declares; None accepts any input (no check).
    declared_inputs: list | None = None
    #: The file's `run-name` template (None: read it from the content folder's copy, if any).
    run_name: str | None = None

    @property
    def path(self) -> str:
        return f".github/workflows/{self.file_name}"


@dataclass
class RunSettings:
    """How dispatched runs of one repository behave."""

    mode: str = "manual"
    auto_conclusion: str = "success"
    auto_delay_seconds: float = 0.2
    runner_command: str | list | None = None
    runner_env: dict = field(default_factory=dict)
    runner_timeout_seconds: float = 600.0
    #: execute mode: how long a run stays queued before a runner picks it up
    queue_seconds: float = 0.0


@dataclass
class Repository:
    id: int
    owner: Account
    name: str
    installation_id: int | None
    default_branch: str = "main"
    private: bool = True
    content_dir: str | None = None
    #: branch name -> head sha; the default branch is always present.
    branches: dict = field(default_factory=dict)
    #: every sha the repository has seen (check runs need a known commit).
    commits: set = field(default_factory=set)
    workflows: dict = field(default_factory=dict)  # file name -> Workflow
    run_settings: RunSettings = field(default_factory=RunSettings)
    created_at: datetime = field(default_factory=utcnow)

    @property
    def full_name(self) -> str:
        return f"{self.owner.login}/{self.name}"

    @property
    def head_sha(self) -> str:
        return self.branches[self.default_branch]

    def resolve_ref(self, ref: str) -> tuple[str, str] | None:
        """(branch name, sha) for a branch name, refs/heads/ name, or known sha."""
        name = ref[len("refs/heads/"):] if ref.startswith("refs/heads/") else ref
        if name in self.branches:
            return name, self.branches[name]
        if ref in self.commits:
            return None, ref
        return None


@dataclass
class PullRequest:
    id: int
    number: int
    repository_id: int
    head_ref: str
    head_sha: str
    base_ref: str
    base_sha: str
    title: str
    author: Account
    state: str = "open"
    draft: bool = False
    merged: bool = False
    created_at: datetime = field(default_factory=utcnow)
    updated_at: datetime = field(default_factory=utcnow)
    closed_at: datetime | None = None


@dataclass
class RunAttempt:
    number: int
    status: str = "queued"
    conclusion: str | None = None
    created_at: datetime = field(default_factory=utcnow)
    started_at: datetime | None = None
    updated_at: datetime = field(default_factory=utcnow)
    completed_at: datetime | None = None
    #: secret the runner presents to the ID-token endpoint (ACTIONS_ID_TOKEN_REQUEST_TOKEN).
    id_token_request_token: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    stdout_tail: str = ""
    stderr_tail: str = ""
    exit_code: int | None = None
    workspace: str | None = None


@dataclass
class WorkflowRun:
    id: int
    repository_id: int
    workflow_id: int
    workflow_file: str
    run_number: int
    head_branch: str | None
    head_sha: str
    ref: str
    inputs: dict
    actor: Account
    display_title: str | None = None  # the rendered `run-name`
    attempts: list = field(default_factory=list)
    created_at: datetime = field(default_factory=utcnow)

    @property
    def current(self) -> RunAttempt:
        return self.attempts[-1]


@dataclass
class CheckRun:
    id: int
    repository_id: int
    app_id: int | None
    name: str
    head_sha: str
    status: str = "queued"
    conclusion: str | None = None
    external_id: str = ""
    details_url: str | None = None
    started_at: datetime | None = None
    completed_at: datetime | None = None
    title: str | None = None
    summary: str | None = None
    text: str | None = None
    annotations: list = field(default_factory=list)
    check_suite_id: int = 0
    actions: list = field(default_factory=list)


@dataclass
class IssueComment:
    id: int
    repository_id: int
    issue_number: int
    body: str
    author: Account
    app_id: int | None
    created_at: datetime = field(default_factory=utcnow)
    updated_at: datetime = field(default_factory=utcnow)


@dataclass
class User:
    """A person who can sign in through the OAuth flow."""

    login: str
    id: int
    name: str | None = None
    email: str | None = None
    #: organization logins the user belongs to (their installations are visible).
    organizations: list = field(default_factory=list)
    #: full names of the repositories the user can access; None: every repository of a visible installation.
    repository_access: list | None = None
    #: the user's role per repository (lower-case full name): admin, maintain, push, triage or pull;
    #: a repository not named gets ``default_role``.
    roles: dict = field(default_factory=dict)
    default_role: str = "admin"

    def role_on(self, full_name: str) -> str:
        """admin, maintain, push, triage, pull, or none when the user cannot access the repository."""
        name = full_name.lower()
        if self.repository_access is not None and name not in self.repository_access:
            return "none"
        return self.roles.get(name, self.default_role)

    @property
    def account(self) -> Account:
        return Account(self.login, self.id, "User")


@dataclass
class Token:
    """An installation token or a user OAuth token."""

    value: str
    kind: str  # "installation" or "user"
    expires_at: datetime | None
    installation_id: int | None = None
    repository_ids: list | None = None  # None: every repository of the installation
    permissions: dict = field(default_factory=dict)
    user_id: int | None = None
    app_id: int | None = None


class State:
    """All records plus id sequences. Hold ``lock`` while reading or writing."""

    def __init__(self):
        self.lock = threading.RLock()
        self.apps: dict[int, App] = {}
        self.installations: dict[int, Installation] = {}
        self.repositories: dict[int, Repository] = {}
        self.pulls: dict[tuple[int, int], PullRequest] = {}
        self.runs: dict[int, WorkflowRun] = {}
        self.check_runs: dict[int, CheckRun] = {}
        self.comments: dict[int, IssueComment] = {}
        self.users: dict[int, User] = {}
        self.tokens: dict[str, Token] = {}
        self.oauth_codes: dict[str, dict] = {}
        #: the user the OAuth authorize endpoint signs in (no login form here).
        self.oauth_user_id: int | None = None
        #: the user refuses to authorize the app (authorize redirects with error=access_denied).
        self.oauth_denied = False
        self.default_run_settings = RunSettings()
        self.installation_token_ttl_seconds = 3600
        self._ids = {
            "app": itertools.count(100_001),
            "installation": itertools.count(50_000_001),
            "account": itertools.count(2_200_000_001),
            "repository": itertools.count(2_100_000_001),
            "workflow": itertools.count(3_000_001),
            "pull": itertools.count(2_600_000_001),
            "run": itertools.count(15_000_000_001),
            "check_run": itertools.count(30_000_000_001),
            "check_suite": itertools.count(25_000_000_001),
            "comment": itertools.count(2_500_000_001),
        }

    def next_id(self, kind: str) -> int:
        with self.lock:
            return next(self._ids[kind])

    # ---- lookups (callers hold the lock) -------------------------------------------------

    def repository_by_name(self, owner: str, name: str) -> Repository | None:
        wanted = f"{owner}/{name}".lower()
        for repo in self.repositories.values():
            if repo.full_name.lower() == wanted:
                return repo
        return None

    def installation_repositories(self, installation_id: int) -> list[Repository]:
        return sorted(
            (r for r in self.repositories.values() if r.installation_id == installation_id),
            key=lambda r: r.id,
        )

    def pulls_of(self, repository_id: int) -> list[PullRequest]:
        return sorted((p for (rid, _), p in self.pulls.items() if rid == repository_id), key=lambda p: p.number)

    def account_by_login(self, login: str) -> Account | None:
        for inst in self.installations.values():
            if inst.account.login.lower() == login.lower():
                return inst.account
        for repo in self.repositories.values():
            if repo.owner.login.lower() == login.lower():
                return repo.owner
        for user in self.users.values():
            if user.login.lower() == login.lower():
                return user.account
        return None

    def next_pull_number(self, repository_id: int) -> int:
        numbers = [n for (rid, n) in self.pulls if rid == repository_id]
        return max(numbers, default=0) + 1
