"""Reading fields out of a verified webhook payload, shared by the lifecycle
and marketplace parsers: a field is addressed by its dotted path, and a field
that is missing or malformed raises InvalidPayload naming that path, which the
endpoint answers with a 400 before anything is stored.

These readers are the webhooks' whole check of what they keep: text without
NUL (PostgreSQL cannot store it: `invalid_text`), integers within RFC 7493's
interoperable range or the column's (`number_out_of_range`), as the JSON body
parser (app/web/bodies.py) refuses them anywhere in a body that is stored
whole."""
from __future__ import annotations

import re
from functools import lru_cache

#: The interoperable integer range of RFC 7493 (I-JSON), ±(2^53 - 1).
SAFE_INTEGER = 2**53 - 1


class InvalidPayload(ValueError):
    """`code` is the stable error code the endpoint answers with."""

    def __init__(self, field: str, message: str, code: str = "missing_or_invalid_field"):
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message
        self.code = code


def get(obj, path: str):
    """The value at a dotted path (`installation.account.id`); InvalidPayload when absent."""
    current = obj
    try:
        for part in _parts(path):
            current = current[part]
    except (KeyError, TypeError):  # absent, or a step that is not an object (every other JSON value refuses a str index)
        raise InvalidPayload(path, "is required") from None
    return current


@lru_cache(maxsize=256)
def _parts(path: str) -> tuple[str, ...]:
    """A path's steps, split once: the paths are the parsers' constants, and
    an intake reads a dozen of them per delivery."""
    return tuple(path.split("."))


def positive_id(obj, path: str, maximum: int = SAFE_INTEGER) -> int:
    """A code host id (or another positive integer, at most `maximum`)."""
    value = get(obj, path)
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise InvalidPayload(path, "must be a positive integer")
    if value > maximum:
        raise InvalidPayload(path, f"must be at most {maximum}", code="number_out_of_range")
    return value


def optional_id(obj, path: str) -> int | None:
    """An id kept only when it is one (positive_id), else None: for the
    events that are recorded and acknowledged whatever they carry."""
    try:
        return positive_id(obj, path)
    except InvalidPayload:
        return None


def text(obj, path: str, pattern: re.Pattern | None = None, max_length: int = 255,
         optional: bool = False) -> str | None:
    """A non-empty string of at most max_length characters matching pattern;
    None when optional and absent or null."""
    try:
        value = get(obj, path)
    except InvalidPayload:
        if optional:
            return None
        raise
    if value is None and optional:
        return None
    if isinstance(value, str) and "\x00" in value:
        raise InvalidPayload(path, "must not contain NUL characters", code="invalid_text")
    if not isinstance(value, str) or not 0 < len(value) <= max_length or (pattern and not pattern.match(value)):
        raise InvalidPayload(path, "has an invalid value")
    return value


def flag(obj, path: str) -> bool | None:
    """A boolean, or None when absent or not a boolean (flags are informational)."""
    try:
        value = get(obj, path)
    except InvalidPayload:
        return None
    return value if isinstance(value, bool) else None
