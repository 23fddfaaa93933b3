"""The call page: consent, patient card, the call, rating; and the admin page.

Plain HTML forms and one stylesheet, no JavaScript at all: the Content-Security-Policy allows
no script, every text a person or agent wrote is escaped by Jinja's autoescape, every request
body and header block is capped (``http``), each session may send only so many messages a
minute and each client start only so many calls (``guard``), and a form posted from another
site is refused. A participant's page lives at ``/call/<token>`` (an unguessable token only
they hold); reloading it resumes the call. When the database cannot save (a full disk), a
request gets a plain 503 page and the log one line; nothing acknowledged is lost.

This module assembles the app: the edge (headers, limits, error pages) and three routers
(``routes.front``, ``routes.call``, ``routes.admin``).
"""

from __future__ import annotations

import logging
import os
import sqlite3
import time
from collections.abc import Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import RedirectResponse, Response
from starlette.middleware.trustedhost import TrustedHostMiddleware

from sim2human.store.calls import StaleSession
from sim2human.webapp import admin
from sim2human.webapp.calls import Calls
from sim2human.webapp.guard import Clock, cross_site, retry_header
from sim2human.webapp.http import HEADERS, BodyLimit
from sim2human.webapp.pages import Limits, Pages
from sim2human.webapp.routes import admin as admin_routes
from sim2human.webapp.routes import call as call_routes
from sim2human.webapp.routes import front as front_routes
from sim2human.webapp.routes.deps import NoSuchCall, Services

__all__ = ["Limits", "create_app"]

log = logging.getLogger("sim2human.webapp")


def create_app(
    calls: Calls,
    limits: Limits | None = None,
    admin_token: str | None = None,
    clock: Clock = time.monotonic,
    allowed_hosts: Sequence[str] | None = None,
) -> FastAPI:
    """The web app over ``calls``; ``admin_token`` defaults to $SIM2HUMAN_ADMIN_TOKEN (a
    UsageError if it is too short); ``limits`` default to ``Limits()``; ``clock`` times the
    rate limits and the login back-off. ``allowed_hosts``: the Host names it answers (400 for
    any other), so a page on another site that rebinds its own name to this server's address
    (DNS rebinding) cannot drive it; None answers any (tests)."""
    limits = limits or Limits()
    token = admin_token if admin_token is not None else os.environ.get(admin.ADMIN_TOKEN_ENV)
    admin.check_token(token)
    services = Services.build(calls, limits, token, clock)
    app = FastAPI(docs_url=None, redoc_url=None, openapi_url=None)
    app.state.services = services
    app.add_middleware(BodyLimit, limit=limits.max_body, header_limit=limits.max_header)
    if allowed_hosts is not None:  # added last: the outermost check, before any other work
        app.add_middleware(TrustedHostMiddleware, allowed_hosts=list(allowed_hosts))
    _protect(app, services.pages)
    for routes in (front_routes, call_routes, admin_routes):
        app.include_router(routes.router)
    return app


def _protect(app: FastAPI, pages: Pages) -> None:
    """Security headers on every response; cross-site posts refused; store failures, lost
    races and unknown calls answered with a page, never a traceback."""

    @app.middleware("http")
    async def headers(request: Request, call_next: Any) -> Response:
        if request.method not in ("GET", "HEAD", "OPTIONS") and cross_site(request.headers):
            response: Response = pages.message(
                "Refused",
                "This form was sent from another site. Open the study's own page and try there.",
                403,
            )
        else:
            response = await call_next(request)
        for k, v in HEADERS.items():
            response.headers.setdefault(k, v)
        return response

    async def cannot_save(request: Request, err: Exception) -> Response:
        route = getattr(request.scope.get("route"), "path", "?")  # never the path: it has a token
        name = getattr(err, "sqlite_errorname", type(err).__name__)
        log.error("cannot save (%s %s): %s %s", request.method, route, name, _line(err))
        return pages.message(
            "Please try again",
            "The server cannot save right now. Nothing you already sent is lost; "
            "try again in a minute.",
            503,
            retry_header(60),
        )

    async def moved_on(request: Request, err: Exception) -> Response:
        token = request.path_params.get("token")  # another request got there first
        return RedirectResponse(f"/call/{token}", status_code=303) if token else Response(None, 409)

    async def unknown_call(request: Request, err: Exception) -> Response:
        return call_routes.no_such_call(pages)

    app.add_exception_handler(sqlite3.Error, cannot_save)
    app.add_exception_handler(StaleSession, moved_on)
    app.add_exception_handler(NoSuchCall, unknown_call)


def _line(err: Exception) -> str:
    return " ".join(str(err).split())[:200]
