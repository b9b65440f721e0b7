"""Where the operator tools (`bin/load`, `bin/soak`) write their JSON reports.

A report holds aggregate figures only, but it describes a deployment, so it is
created readable by its owner alone (0600) from the first byte: the file is
opened with that mode, never chmod-ed after a world-readable write.
"""
from __future__ import annotations

import datetime
import os
from pathlib import Path

import orjson


def default_report_path(kind: str, data_dir: str | os.PathLike = ".data") -> Path:
    """`.data/<kind>-20261123T142501Z.json`: one new file per run."""
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y%m%dT%H%M%SZ")
    return Path(data_dir) / f"{kind}-{stamp}.json"


def write_private_json(path: str | os.PathLike, document: dict) -> Path:
    """Write `document` to `path` with mode 0600, replacing any earlier file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    body = orjson.dumps(document, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.fchmod(fd, 0o600)  # the umask may not widen it, but an old file of that name might be wider
        with os.fdopen(fd, "wb") as out:
            fd = -1
            out.write(body)
            out.flush()
            os.fsync(out.fileno())
    finally:
        if fd != -1:
            os.close(fd)
    os.replace(temporary, path)
    return path
