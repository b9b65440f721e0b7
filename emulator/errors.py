"""The one exception handlers raise to answer with the real API's error shape."""
from __future__ import annotations


class HostError(Exception):
    """Answer ``status`` with ``{"message", "documentation_url", "status"[, "errors"]}``."""

    def __init__(self, status: int, message: str, errors: list | None = None, headers: dict | None = None):
        super().__init__(f"{status} {message}")
        self.status = status
        self.message = message
        self.errors = errors
        self.headers = headers or {}


def not_found() -> HostError:
    return HostError(404, "Not Found")


def bad_credentials() -> HostError:
    return HostError(401, "Bad credentials")


def validation_failed(*errors: dict, message: str = "Validation Failed") -> HostError:
    return HostError(422, message, list(errors))


def invalid_field(resource: str, field: str, code: str = "invalid", message: str | None = None) -> dict:
    error = {"resource": resource, "field": field, "code": code}
    if message:
        error["message"] = message
    return error
