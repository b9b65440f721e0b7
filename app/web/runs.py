"""Run results in: POST /api/v1/runs (ingest for the review pages),
POST /api/v1/runs/result (a release run's result with a bearer token, check
run completed synchronously) and POST /api/v1/runs/github-actions-result (the
readiness workflow's callback, authenticated by the code host's OIDC ID token).
"""
from __future__ import annotations

import re

import falcon
from psycopg.types.json import Jsonb

from app import run_results, sql_api
from app.jsonlog import log
from app.oidc import OidcRefused, workflow_file
from app.web import auth_throttle, db
from app.web.bearer_auth import require
from app.web.bodies import (
    RESULT_MAX_BYTES,
    parse_json_object,
    read_bounded,
    read_json_object,
    require_json_content_type,
)
from app.web.errors import ApiError, quoted_prefix

WORKFLOW_PATH = ".github/workflows/readiness-runner.yml"
CALLBACK_ENVELOPE = {"attemptId", "result", "digest"}
ATTEMPT_REF = re.compile(r"^[0-9]{1,18}-[0-9a-f]{32}$")
CLAIM_ID = re.compile(r"^[0-9]{1,18}$")   # repository_id and run_id: bigint columns
DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")

# release_result_accept outcomes that refuse, as (status, code, message).
REFUSALS = {
    "attempt_not_found": (404, "attempt_not_found", "no release run attempt has this id"),
    "repository_mismatch": (403, "repository_mismatch", "the attempt belongs to another repository"),
    "run_id_mismatch": (403, "run_id_mismatch", "the token's workflow run is not the one dispatched for this attempt"),
    "attempt_not_current": (409, "attempt_not_current",
                            "the attempt was superseded by a newer commit or already closed"),
    "head_sha_mismatch": (409, "head_sha_mismatch", "the result is for another commit than the release run"),
    "conflict": (409, "result_conflict", "the attempt already has a different result"),
    # Only the signed callback decides, unless the repository opted in (PUT /api/v1/repositories/{id}/settings).
    "oidc_result_required": (409, "oidc_result_required",
                             "only the readiness workflow's signed result decides this release run; record findings "
                             "for review with POST /api/v1/runs, or opt the repository in to token-published results"),
}


def _validated(result) -> dict:
    try:
        return run_results.validate(result)
    except run_results.InvalidResult as exc:
        raise ApiError(400, exc.code, exc.message) from None


def _refuse_unknown(body: dict, known: set[str]) -> None:
    unknown = sorted(set(body) - known)
    if unknown:
        raise ApiError(400, "unknown_property", f"unknown property {quoted_prefix(unknown[0])}")


def _attempt_ref(body: dict) -> str:
    ref = body.get("attemptId")
    if not isinstance(ref, str) or not ATTEMPT_REF.match(ref):
        raise ApiError(400, "invalid_attempt_id", "attemptId must be the attempt_id input of the dispatched workflow")
    return ref


def _accept(pool, config, **params) -> dict:
    with db.connection(pool, config) as conn:
        row = sql_api.release_result_accept(conn, **params)
    if row["outcome"] in REFUSALS:
        status, code, message = REFUSALS[row["outcome"]]
        raise ApiError(status, code, message)
    return row


def _answer(resp, row: dict, **extra) -> None:
    resp.media = {"ok": True, "outcome": row["outcome"], "releaseRunId": str(row["release_run_id"]),
                  "decision": row["decision"], "conclusion": row["conclusion"], **extra}


def require_default_branch_workflow(pool, config, claims: dict, attempt_ref: str) -> None:
    """403 `workflow_ref_mismatch` unless the token's job ran readiness-runner.yml as it is on the
    branch the attempt was dispatched on (the default branch): a pull request into a branch its
    author controls cannot choose the workflow that judges it. An unknown attempt is left to
    release_result_accept (404)."""
    with db.connection(pool, config) as conn:
        branch = sql_api.release_attempt_dispatch_ref(conn, attempt_ref=attempt_ref)
    if branch is None:
        return
    expected = f"{claims['repository']}/{WORKFLOW_PATH}@refs/heads/{branch}"
    if claims.get("job_workflow_ref") != expected:
        log("runs.workflow_ref_mismatch", expected=expected, presented=str(claims.get("job_workflow_ref"))[:300])
        raise ApiError(403, "workflow_ref_mismatch",
                       f"only {WORKFLOW_PATH} on the repository's default branch ({branch}) decides a release run")


class RunIngest:
    """Bearer `runs:write`; the repository comes from the token, never the body."""

    def __init__(self, config, pool):
        self.config, self.pool = config, pool

    def on_post(self, req, resp):
        require(req, scope="runs:write")
        body = read_json_object(req, RESULT_MAX_BYTES)
        if "repositoryId" not in body:
            raise ApiError(400, "missing_repository_id", "repositoryId is required")
        auth = require(req, repository_id=body["repositoryId"])
        result = _validated(body)
        with db.connection(self.pool, self.config) as conn:
            row = sql_api.run_ingest(conn, repository_id=int(auth.repository_id),
                                     api_token_id=auth.token_id, result=Jsonb(result))
        if row["outcome"] != "accepted":
            raise ApiError(404, "repository_unknown", "the token's repository is not known to the service")
        resp.status = falcon.HTTP_201
        resp.media = {"ok": True, "runId": str(row["run_result_id"]), "decision": row["decision"],
                      "findings": len(result["findings"])}


class ReleaseResult:
    """Bearer `runs:write`: a release run's result from CI, published synchronously."""

    def __init__(self, config, pool, publisher):
        self.config, self.pool, self.publisher = config, pool, publisher

    def on_post(self, req, resp):
        auth = require(req, scope="runs:write")
        body = read_json_object(req, RESULT_MAX_BYTES)
        # Unknown properties are dropped (the spec's versioning section): only the
        # callback's top-level envelope and the runner activation refuse them.
        body = {k: v for k, v in body.items() if k in ("attemptId", "result")}
        ref = _attempt_ref(body)
        result = _validated(body.get("result"))
        row = _accept(self.pool, self.config, attempt_ref=ref, repository_id=int(auth.repository_id),
                      workflow_run_id=None, source="bearer_result", result=Jsonb(result),
                      digest=run_results.digest(body["result"]), api_token_id=auth.token_id, oidc_jti=None)
        published = False
        if row["outcome"] == "accepted" and self.publisher is not None:
            published = self.publisher.publish_now(row["release_run_id"])
        _answer(resp, row, published=published)


class WorkflowResultCallback:
    """The readiness workflow's callback: OIDC-authenticated and bound to the attempt."""

    auth = "oidc"

    def __init__(self, config, pool, verifier):
        self.config, self.pool, self.verifier = config, pool, verifier

    def _claims(self, req) -> dict:
        if self.verifier is None:
            raise ApiError(503, "oidc_not_configured", "SERVICE_OIDC_AUDIENCE is not configured")
        header = (req.get_header("Authorization") or "").strip()
        if not header:
            # No credential at all (what any page can make a browser send) is
            # neither counted nor limited: it cannot lock out the real caller.
            raise ApiError(401, "missing_token", "an OIDC ID token is required as a bearer token")
        key, at = auth_throttle.client_key(req), auth_throttle.now()
        with db.connection(self.pool, self.config) as conn:
            auth_throttle.refuse_if_limited(conn, auth_throttle.BEARER, key, self.config.auth_rate_limit_per_minute, at)
            scheme, _, token = header.partition(" ")
            try:
                if scheme.lower() != "bearer" or not token.strip():
                    raise OidcRefused("missing_token", "an OIDC ID token is required as a bearer token")
                claims = self.verifier.verify(token.strip())
                if workflow_file(claims) != WORKFLOW_PATH:
                    raise OidcRefused("oidc_wrong_workflow", f"the ID token is not from {WORKFLOW_PATH}")
                if not CLAIM_ID.match(str(claims["repository_id"])) or not CLAIM_ID.match(str(claims["run_id"])):
                    raise OidcRefused("oidc_invalid_token", "repository_id and run_id must be numeric")
            except OidcRefused as exc:
                if exc.code != "oidc_issuer_unavailable":
                    auth_throttle.record_failure(conn, auth_throttle.BEARER, key, at)
                    raise ApiError(401, exc.code, exc.message) from None
                raise ApiError(503, exc.code, exc.message) from None
        return claims

    def before_body(self, req) -> dict:
        """The content type, then the ID token's claims: they are in the headers,
        so they are checked before the body is read (AuthenticateBeforeBody,
        app/web/bodies.py, puts them in req.context.auth)."""
        require_json_content_type(req)
        return self._claims(req)

    def on_post(self, req, resp):
        claims = req.context.auth
        body = parse_json_object(read_bounded(req, RESULT_MAX_BYTES))
        _refuse_unknown(body, CALLBACK_ENVELOPE)
        if not isinstance(body.get("digest"), str) or not DIGEST.match(body["digest"]):
            raise ApiError(400, "invalid_digest", "digest must be sha256:<64 hex digits>")
        ref = _attempt_ref(body)
        if not isinstance(body.get("result"), dict) or run_results.digest(body["result"]) != body["digest"]:
            raise ApiError(400, "digest_mismatch", "digest is not the SHA-256 of the result's RFC 8785 form")
        result = _validated(body["result"])
        require_default_branch_workflow(self.pool, self.config, claims, ref)
        row = _accept(self.pool, self.config, attempt_ref=ref, repository_id=int(claims["repository_id"]),
                      workflow_run_id=int(claims["run_id"]), source="workflow_callback", result=Jsonb(result),
                      digest=body["digest"], api_token_id=None, oidc_jti=str(claims["jti"])[:200])
        log("runs.workflow_result", outcome=row["outcome"], releaseRunId=row["release_run_id"],
            decision=row["decision"], workflowRunId=int(claims["run_id"]))
        _answer(resp, row)
