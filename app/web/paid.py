"""POST /api/v1/billing/checkout and POST /api/v1/billing/portal.

Community (free) is the only published plan, so there is nothing to buy and
no customer portal: any authenticated call gets 410 `marketplace_free_only`.
Any valid bearer token (no scope needed) or signed-in session (with its CSRF
token, as every unsafe session request), so that an anonymous caller learns
nothing more than from any other /api/v1 route.
"""
from __future__ import annotations

from app.web.bearer_auth import require
from app.web.errors import ApiError


class _Gone:
    auth = "bearer"
    session_methods = frozenset({"POST"})
    what = ""

    def on_post(self, req, resp):
        require(req)
        raise ApiError(410, "marketplace_free_only",
                       f"{self.what} is not available: Community (free) is the only published plan")


class PaidCheckout(_Gone):
    what = "paid checkout"


class PaidPortal(_Gone):
    what = "the customer portal"
