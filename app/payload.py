"""Reading fields out of a verified webhook payload, shared by the lifecycle
and marketplace parsers: a field is addressed by its dotted path, and a field
that is missing or malformed raises InvalidPayload naming that path, which the
endpoint answers with a 400 before anything is stored."""
from __future__ import annotations

import re
from functools import lru_cache


class InvalidPayload(ValueError):
    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


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


def positive_id(obj, path: str) -> int:
    """A code host id: a positive integer that fits PostgreSQL's bigint."""
    value = get(obj, path)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value < 2**63:
        raise InvalidPayload(path, "must be a positive integer")
    return value


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
