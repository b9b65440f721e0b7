"""GET /simple/...: the service's own checker distribution as a PEP 503 simple index.

The runner installs boardready-checker from the service it reports to, so the
checker always matches the service and nothing waits on a public release
(issue 38). The wheel is built at deploy (`bin/build-checker --out
$SERVICE_DATA_DIR/checker`; the demo builds it on start); only the wheel of the
service's own checker version is served, each link carrying `#sha256=`.

- /simple/                                 the projects: boardready-checker alone
- /simple/boardready-checker/              its files, with `#sha256=` and data-requires-python
- /simple/boardready-checker/requirements.txt   `boardready-checker==V --hash=sha256:H`, for
  `pip install --require-hashes --no-deps --index-url {URL}/simple/ -r requirements.txt`
- /simple/boardready-checker/{file}        the wheel

Its dependencies (shapely, numpy, jsonschema, httpx, rfc8785) are not served:
they are platform wheels from the runner's own index, installed after the
checker from the wheel's declared ranges and confirmed by `pip check`
(docs/checker-index.md says why).

Public, as the checker's source is: the runner has no credential before it
has the checker. Answers are small and read from the data folder each time,
so a wheel rebuilt at deploy is served without a restart.
"""
from __future__ import annotations

import hashlib
import html
import re
from pathlib import Path

import falcon

from checker import TOOL_VERSION

PROJECT = "boardready-checker"
REQUIRES_PYTHON = ">=3.11"
_WHEEL = re.compile(r"^boardready_checker-(?P<version>[0-9][0-9A-Za-z.+!]*)-py3-none-any\.whl$")


def checker_folder(config) -> Path:
    return Path(config.data_dir) / "checker"


def served_wheel(config) -> tuple[Path, str] | None:
    """(the wheel of this service's checker version, its SHA-256), or None when not built."""
    folder = checker_folder(config)
    if not folder.is_dir():
        return None
    for path in sorted(folder.iterdir()):
        match = _WHEEL.match(path.name)
        if match and match["version"] == TOOL_VERSION and path.is_file():
            return path, hashlib.sha256(path.read_bytes()).hexdigest()
    return None


def _page(title: str, links: list[str]) -> str:
    body = "\n".join(links)
    return (f"<!DOCTYPE html>\n<html><head><meta name=\"pypi:repository-version\" content=\"1.0\">"
            f"<title>{html.escape(title)}</title></head>\n<body>\n{body}\n</body></html>\n")


class _Index:
    auth = "none"

    def __init__(self, config):
        self.config = config


def _not_found(resp, code: str, message: str) -> None:
    """A plain-text 404 with a stable code: what pip and curl show as they are."""
    resp.status = falcon.HTTP_404
    resp.content_type = "text/plain; charset=utf-8"
    resp.text = f"{code}: {message}\n"


NOT_BUILT = "the checker distribution is not built on this service (bin/build-checker --out $SERVICE_DATA_DIR/checker)"
ONLY_CHECKER = "this index serves boardready-checker only"


class SimpleRoot(_Index):
    def on_get(self, req, resp):
        resp.content_type = "text/html; charset=utf-8"
        resp.text = _page("Simple index", [f'<a href="{PROJECT}/">{PROJECT}</a>'])


class SimpleProject(_Index):
    def on_get(self, req, resp, project):
        if re.sub(r"[-_.]+", "-", project).lower() != PROJECT:
            return _not_found(resp, "unknown_project", ONLY_CHECKER)
        if project != PROJECT:   # PEP 503: the normalised name is the one address
            raise falcon.HTTPMovedPermanently(f"../{PROJECT}/")
        found = served_wheel(self.config)
        if found is None:
            return _not_found(resp, "checker_not_built", NOT_BUILT)
        path, digest = found
        resp.content_type = "text/html; charset=utf-8"
        resp.text = _page(f"Links for {PROJECT}", [
            f'<a href="{html.escape(path.name)}#sha256={digest}" '
            f'data-requires-python="{html.escape(REQUIRES_PYTHON)}">{html.escape(path.name)}</a>'])


class SimpleFile(_Index):
    def on_get(self, req, resp, project, filename):
        if project != PROJECT:
            return _not_found(resp, "unknown_project", ONLY_CHECKER)
        found = served_wheel(self.config)
        if found is None:
            return _not_found(resp, "checker_not_built", NOT_BUILT)
        if filename == "requirements.txt":
            resp.content_type = "text/plain; charset=utf-8"
            resp.text = f"{PROJECT}=={TOOL_VERSION} --hash=sha256:{found[1]}\n"
            return
        if filename != found[0].name:
            return _not_found(resp, "unknown_file", "no such file in this index")
        resp.content_type = "application/octet-stream"
        resp.data = found[0].read_bytes()
        resp.set_header("Content-Disposition", f'attachment; filename="{found[0].name}"')


def add_routes(app, config) -> None:
    app.add_route("/simple", SimpleRoot(config))
    app.add_route("/simple/{project}", SimpleProject(config))
    app.add_route("/simple/{project}/{filename}", SimpleFile(config))
