"""Report artifacts: the checker's HTML report, in and out.

POST /api/v1/runs/github-actions-artifact?attemptId=<attempt>
    The readiness workflow uploads its HTML report after its signed result
    was accepted, with the same OIDC ID token (checked before the body is
    read) and the same attempt binding (sql/functions/artifacts.sql).
    `Content-Type: text/html`; at most SERVICE_ARTIFACT_MAX_BYTES (413).
    It must be the report the signed result announced (reportArtifact's
    sha256 and bytes), else 409 and nothing stored. 201 stored, 200 unchanged. 503 `artifacts_not_configured` without
    SERVICE_ARTIFACT_SIGNING_KEY: a report nobody could open is not taken.
GET /artifacts/{id}?exp=<unix seconds>&sig=<HMAC>
    Served only through a capability link: an HMAC-SHA256 over the id and
    the expiry with SERVICE_ARTIFACT_SIGNING_KEY, valid for
    SERVICE_ARTIFACT_CAPABILITY_TTL_SECONDS. The run page mints a fresh link
    on each view. An expired, forged or unknown link is the same 403 that
    names nothing. No session is looked at: the link is the authority.

The report is content a repository produced, so it is served as untrusted:
a sandbox without allow-same-origin gives it an opaque origin (no cookie,
no storage, no same-site requests), `default-src 'none'` forbids every
request it could make, and nothing it contains can frame or navigate us.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import time

import falcon

from app import queries, sql_api
from app.jsonlog import log
from app.web import db
from app.web.bodies import read_bounded
from app.web.errors import ApiError
from app.web.params import positive_id
from app.web.runs import ATTEMPT_REF, WorkflowResultCallback

ARTIFACT_CSP = ("sandbox allow-scripts; default-src 'none'; img-src data:; style-src 'unsafe-inline'; "
                "script-src 'unsafe-inline'")
UPLOAD_PATH = "/api/v1/runs/github-actions-artifact"

# artifact_store outcomes that refuse, as (status, code, message): the result callback's words.
REFUSALS = {
    "attempt_not_found": (404, "attempt_not_found", "no release run attempt has this id"),
    "repository_mismatch": (403, "repository_mismatch", "the attempt belongs to another repository"),
    "run_id_mismatch": (403, "run_id_mismatch", "the token's workflow run is not the one dispatched for this attempt"),
    "result_not_found": (409, "result_required", "send the signed result first; the report goes with it"),
    "report_not_announced": (409, "report_not_announced", "the signed result names no reportArtifact"),
    "report_mismatch": (409, "report_mismatch",
                        "the report is not the one the signed result names (reportArtifact sha256 and bytes)"),
}


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _signature(key: str, artifact_id: int, expires: int) -> str:
    return _b64(hmac.new(key.encode(), f"report-artifact:{artifact_id}:{expires}".encode(), hashlib.sha256).digest())


def capability_url(config, artifact_id: int, now: float | None = None) -> str | None:
    """A fresh link to a report, or None when links cannot be made (no signing key)."""
    if config.artifact_signing_key is None:
        return None
    expires = int(now if now is not None else time.time()) + config.artifact_capability_ttl_seconds
    return f"/artifacts/{artifact_id}?exp={expires}&sig={_signature(config.artifact_signing_key.reveal(), artifact_id, expires)}"


def _refused() -> ApiError:
    return ApiError(403, "artifact_link_refused", "this link is not valid; open the report again from its run page")


class ArtifactPage:
    auth = "none"   # the capability link is the authority; sessions are never read here

    def __init__(self, config, pool):
        self.config, self.pool = config, pool

    def on_get(self, req, resp, artifact_id: str):
        artifact = positive_id(artifact_id)
        expires, signature = req.get_param("exp") or "", req.get_param("sig") or ""
        key = self.config.artifact_signing_key
        if key is None or artifact is None or not (expires.isascii() and expires.isdigit()) or len(expires) > 12 or len(signature) > 100:
            raise _refused()
        if not hmac.compare_digest(signature.encode(), _signature(key.reveal(), artifact, int(expires)).encode()) \
                or int(expires) <= time.time():
            raise _refused()
        with db.connection(self.pool, self.config) as conn:
            row = queries.fetch_one(conn, "artifact_content", artifact_id=artifact)
        if row is None:   # deleted with its run since the link was made
            raise _refused()
        resp.set_header("Content-Security-Policy", ARTIFACT_CSP)
        resp.set_header("Cross-Origin-Resource-Policy", "same-origin")
        resp.content_type = "text/html; charset=utf-8"
        resp.data = bytes(row["content"])


class ArtifactUpload(WorkflowResultCallback):
    """The readiness workflow's report: the result callback's OIDC check, then one SQL call."""

    def before_body(self, req) -> dict:
        """Everything the headers and the query decide, then the ID token's
        claims, before the body is read (AuthenticateBeforeBody, app/web/bodies.py)."""
        if self.config.artifact_signing_key is None:
            raise ApiError(503, "artifacts_not_configured", "report artifacts need SERVICE_ARTIFACT_SIGNING_KEY")
        media_type, _, parameters = (req.content_type or "").partition(";")
        if media_type.strip().lower() != "text/html" or parameters.strip().lower() not in ("", "charset=utf-8"):
            raise ApiError(415, "invalid_content_type", "Content-Type must be text/html; charset=utf-8")
        ref = req.get_param("attemptId") or ""
        if not ATTEMPT_REF.match(ref):
            raise ApiError(400, "invalid_attempt_id", "attemptId must be the attempt_id input of the dispatched workflow")
        return self._claims(req)

    def on_post(self, req, resp):
        claims = req.context.auth
        ref = req.get_param("attemptId")
        content = read_bounded(req, self.config.artifact_max_bytes)
        if not content:
            raise ApiError(400, "empty_artifact", "the report is empty")
        row = db.call(self.pool, self.config, sql_api.artifact_store, idempotent=False, attempt_ref=ref,
                      repository_id=int(claims["repository_id"]), workflow_run_id=int(claims["run_id"]),
                      sha256=hashlib.sha256(content).hexdigest(), content=content,
                      size_bytes=len(content))
        if row["outcome"] in REFUSALS:
            status, code, message = REFUSALS[row["outcome"]]
            raise ApiError(status, code, message)
        log("runs.report_artifact", outcome=row["outcome"], artifactId=row["artifact_id"],
            releaseRunId=row["release_run_id"], bytes=len(content))
        resp.status = falcon.HTTP_201 if row["outcome"] == "stored" else falcon.HTTP_200
        resp.media = {"ok": True, "outcome": row["outcome"], "artifactId": str(row["artifact_id"]),
                      "releaseRunId": str(row["release_run_id"])}
