"""The review pages: server-rendered HTML over the same responders, queries and
SQL functions as the JSON API (docs/reviews.md, "Review pages and report artifacts").

    /                          what the service is, sign in
    /sign-in[?returnTo=]       the sign-in button (it remembers where the viewer was going)
    /runs                      the viewer's release runs (app/web/pages/runs_page.py)
    /release-runs/{id}         one run, its findings, review forms and history (run_page.py)
    /artifacts/{id}?exp=&sig=  a report, through a capability link (artifacts.py)
    /static/boardready.css     the one stylesheet
    /release-runs/{id}/board.json, /static/board-view.{js,css}   the board drawing (board_view.py)
"""
from __future__ import annotations

import falcon

from app.web.pages import rendering
from app.web.pages.artifacts import UPLOAD_PATH, ArtifactPage, ArtifactUpload
from app.web.pages.board_view import BoardViewAsset, RunBoard
from app.web.pages.public import Home, SignInPage, Stylesheet
from app.web.pages.run_page import ApprovalForm, RunPage, WaiverForm
from app.web.pages.runs_page import RunsPage


def add_routes(app: falcon.App, config, pool, oidc_verifier) -> None:
    rendering.install(app, config)
    app.add_route("/", Home(config))
    app.add_route("/sign-in", SignInPage(config))
    app.add_route("/static/boardready.css", Stylesheet())
    app.add_route("/runs", RunsPage(config, pool))
    run_page = RunPage(config, pool)
    app.add_route("/release-runs/{run_id}", run_page)
    app.add_route("/release-runs/{run_id}/approvals", ApprovalForm(config, pool, run_page))
    app.add_route("/release-runs/{run_id}/waivers", WaiverForm(config, pool, run_page))
    app.add_route("/release-runs/{run_id}/board.json", RunBoard(config, pool))
    app.add_route("/static/board-view.js", BoardViewAsset("board-view.js"))
    app.add_route("/static/board-view.css", BoardViewAsset("board-view.css"))
    app.add_route("/artifacts/{artifact_id}", ArtifactPage(config, pool))
    app.add_route(UPLOAD_PATH, ArtifactUpload(config, pool, oidc_verifier))
