"""The OIDC issuer of workflow ID tokens, at ``{emulator url}/oidc``.

Discovery is at ``{issuer}/.well-known/openid-configuration`` and keys at
``{issuer}/.well-known/jwks``, the same layout as the real token issuer. Keys
carry a ``kid``; rotation adds a new signing key and keeps the old one published
until it is retired, so verifiers that cache the JWKS can be tested both ways.

Tokens are RS256 with the claims a workflow_dispatch job gets on the real host.
``mint`` builds tokens with chosen faults (wrong audience, expired, unknown kid,
a key the JWKS never published, another repository) for negative tests.
"""
from __future__ import annotations

import json
import secrets
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm

from emulator.state import Repository, RunAttempt, WorkflowRun

DEFAULT_TOKEN_LIFETIME_SECONDS = 300
ISSUER_PATH = "/oidc"


@dataclass
class SigningKey:
    kid: str
    private_key: Any
    published: bool = True

    def public_jwk(self) -> dict:
        jwk = json.loads(RSAAlgorithm.to_jwk(self.private_key.public_key()))
        jwk.update({"kid": self.kid, "use": "sig", "alg": "RS256"})
        return jwk


def _new_key() -> SigningKey:
    return SigningKey(kid=secrets.token_hex(16), private_key=rsa.generate_private_key(public_exponent=65537, key_size=2048))


class OidcIssuer:
    def __init__(self, base_url: Callable[[], str]):
        self._base_url = base_url
        self._lock = threading.Lock()
        self._keys: list[SigningKey] = [_new_key()]  # the last one signs

    @property
    def issuer(self) -> str:
        return self._base_url() + ISSUER_PATH

    def discovery(self) -> dict:
        return {
            "issuer": self.issuer,
            "jwks_uri": f"{self.issuer}/.well-known/jwks",
            "subject_types_supported": ["public", "pairwise"],
            "response_types_supported": ["id_token"],
            "claims_supported": [
                "sub", "aud", "exp", "iat", "iss", "jti", "nbf", "ref", "sha", "repository",
                "repository_id", "repository_owner", "repository_owner_id", "run_id", "run_number",
                "run_attempt", "actor", "actor_id", "workflow", "workflow_ref", "workflow_sha",
                "job_workflow_ref", "job_workflow_sha", "event_name", "ref_type", "repository_visibility",
                "runner_environment",
            ],
            "id_token_signing_alg_values_supported": ["RS256"],
            "scopes_supported": ["openid"],
        }

    def jwks(self) -> dict:
        with self._lock:
            return {"keys": [key.public_jwk() for key in self._keys if key.published]}

    @property
    def current_kid(self) -> str:
        with self._lock:
            return self._keys[-1].kid

    def rotate(self, retire_previous: bool = False) -> str:
        """Sign with a new key from now on; the previous keys stay published unless retired."""
        key = _new_key()
        with self._lock:
            if retire_previous:
                for old in self._keys:
                    old.published = False
            self._keys.append(key)
        return key.kid

    def retire(self, kid: str) -> bool:
        """Stop publishing ``kid`` in the JWKS (tokens it signed stop verifying)."""
        with self._lock:
            for key in self._keys:
                if key.kid == kid:
                    key.published = False
                    return True
        return False

    def run_claims(self, repo: Repository, run: WorkflowRun, attempt: RunAttempt, audience: str) -> dict:
        """The claims the real issuer puts in a workflow_dispatch job's ID token."""
        ref = run.ref if run.ref.startswith("refs/") else f"refs/heads/{run.ref}"
        workflow_ref = f"{repo.full_name}/.github/workflows/{run.workflow_file}@{ref}"
        return {
            "sub": f"repo:{repo.full_name}:ref:{ref}",
            "aud": audience,
            "ref": ref,
            "ref_type": "branch",
            "sha": run.head_sha,
            "repository": repo.full_name,
            "repository_id": str(repo.id),
            "repository_owner": repo.owner.login,
            "repository_owner_id": str(repo.owner.id),
            "repository_visibility": "private" if repo.private else "public",
            "run_id": str(run.id),
            "run_number": str(run.run_number),
            "run_attempt": str(attempt.number),
            "actor": run.actor.login,
            "actor_id": str(run.actor.id),
            "workflow": run.workflow_file.rsplit(".", 1)[0],
            "workflow_ref": workflow_ref,
            "workflow_sha": run.head_sha,
            "job_workflow_ref": workflow_ref,
            "job_workflow_sha": run.head_sha,
            "event_name": "workflow_dispatch",
            "runner_environment": "github-hosted",
        }

    def sign(
        self,
        claims: dict,
        lifetime_seconds: int = DEFAULT_TOKEN_LIFETIME_SECONDS,
        issued_at: int | None = None,
        header_kid: str | None = None,
        unpublished_key: bool = False,
    ) -> str:
        """Sign ``claims`` (adding iss, iat, nbf, exp, jti unless given).

        ``header_kid`` replaces the kid in the header (e.g. one the JWKS does not
        have); ``unpublished_key`` signs with a throw-away key the JWKS never shows,
        under the current kid.
        """
        now = int(time.time()) if issued_at is None else int(issued_at)
        full = {"iss": self.issuer, "jti": str(uuid.uuid4()), "iat": now, "nbf": now, "exp": now + lifetime_seconds}
        full.update(claims)
        full = {k: v for k, v in full.items() if v is not None}
        with self._lock:
            current = self._keys[-1]
        # An unpublished key still claims the current kid: the verifier finds a key and
        # must notice that the signature does not match it.
        key = _new_key() if unpublished_key else current
        headers = {"kid": header_kid or current.kid, "typ": "JWT"}
        return jwt.encode(full, key.private_key, algorithm="RS256", headers=headers)
