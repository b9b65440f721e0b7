"""GET /runs: the viewer's release runs, newest first, as the run listing API
answers them (RunsCollection: the same keyset query, cursor and filters),
with what a reviewer scans the list for beside each (runs_page_extras.sql):
the pull request's title (from the code host, app/web/pages/host_names.py),
the score, the blocking and all findings, the review's state, when the run
last changed, and whether it is its pull request's newest run or superseded.

"Older" follows the API's nextCursor. The API pages one way only, so the page
carries the cursors it came through in `back` (the last MAX_BACK of them):
"newer" is the one before. Filters travel with the cursor, which the API
refuses for any other filters.
"""
from __future__ import annotations

from urllib.parse import urlencode

from app import queries, sql_api
from app.web import db
from app.web.pages.host_names import HostNames
from app.web.pages.rendering import api_media, render
from app.web.run_listing import DECISIONS, RUN_STATUSES, RunsCollection
from app.web.session_auth import session_of

MAX_BACK = 20
CURSOR_CHARS = 600


class RunsPage:
    auth = "none"
    session_methods = frozenset({"GET"})

    def __init__(self, config, pool):
        self.config, self.pool = config, pool
        self.api = RunsCollection(config, pool)
        self.names = HostNames(config, pool)

    def on_get(self, req, resp):
        viewer = session_of(req)
        if not viewer.repository_ids:
            return self._nothing_visible(req, resp, viewer)
        listing = api_media(self.api.on_get, req)
        filters = {name: req.get_param(name) for name in ("repositoryId", "status", "decision")
                   if req.get_param(name)}
        back = [c for c in (req.get_param("back") or "").split(",") if 0 < len(c) <= CURSOR_CHARS][-MAX_BACK:]
        cursor = req.get_param("cursor")
        older = newer = None
        if listing["nextCursor"]:
            trail = (back + [cursor]) if cursor else []
            older = "/runs?" + urlencode({**filters, "cursor": listing["nextCursor"], "back": ",".join(trail[-MAX_BACK:])})
        if cursor:
            previous = {**filters, **({"cursor": back[-1], "back": ",".join(back[:-1])} if back else {})}
            newer = "/runs" + ("?" + urlencode(previous) if previous else "")
        with db.connection(self.pool, self.config) as conn:
            repositories = queries.fetch_all(conn, "viewer_repositories", repository_ids=sorted(viewer.repository_ids))
            extras = {str(row["id"]): row for row in queries.fetch_all(
                conn, "runs_page_extras", run_ids=[int(r["id"]) for r in listing["items"]],
                repository_ids=sorted(viewer.repository_ids))}
        titles = self.names.titles(sorted({(int(r["repository"]["id"]), r["pullRequestNumber"],
                                            r["repository"]["fullName"], extras[r["id"]]["installation_id"])
                                           for r in listing["items"] if r["id"] in extras}))
        rows = [{**run, **listing_extras(extras.get(run["id"])),
                 "title": titles.get((int(run["repository"]["id"]), run["pullRequestNumber"]))}
                for run in listing["items"]]
        render(req, resp, "runs.html", title="Release runs", runs=rows, older=older, newer=newer,
               newest="/runs" + ("?" + urlencode(filters) if filters else ""), filters=filters,
               repositories=repositories, statuses=RUN_STATUSES, decisions=DECISIONS)

    def _nothing_visible(self, req, resp, viewer):
        with db.connection(self.pool, self.config) as conn:
            canceled = [r["login"] for r in sql_api.session_canceled_accounts(conn, session_id=viewer.session_id)]
        if canceled:
            return render(req, resp, "canceled.html", status="403 Forbidden", title="Account canceled",
                          accounts=canceled)
        render(req, resp, "runs.html", title="Release runs", runs=[], older=None, newer=None, newest="/runs",
               filters={}, repositories=[], statuses=RUN_STATUSES, decisions=DECISIONS)


REVIEW_STATES = {"approved": "approved", "changes_requested": "changes requested"}


def listing_extras(row: dict | None) -> dict:
    """A listed run's extras as the template shows them (a run deleted since the page was listed has none)."""
    if row is None:
        return {"score": None, "findings": None, "blocking": None, "review": None, "updatedAt": None,
                "superseded": False}
    review = row["review_decision"]
    return {"score": row["score"], "findings": row["findings"], "blocking": row["blocking"],
            "review": REVIEW_STATES.get(review, "wanted" if review == "pending" else None),
            "updatedAt": row["updated_at"], "superseded": row["superseded"]}
