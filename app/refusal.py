"""A request refused for a reason the client can act on, said the same way by
every check (token requests, run results, OIDC tokens): a stable code (the
error codes of contracts/openapi.json) and a message for people. The web edge
answers it with its status (app/web/errors.ApiError)."""
from __future__ import annotations


class Refused(Exception):
    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code
        self.message = message
