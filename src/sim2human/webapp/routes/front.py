"""The consent page and starting a call (limited per visitor, per client and for the whole
server, with a share kept for newcomers: ``admission``)."""

from __future__ import annotations

import logging
from importlib import resources

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, PlainTextResponse, Response

from sim2human.store.call_records import Mode
from sim2human.webapp.admission import VISITOR_COOKIE, new_visitor, visitor_key
from sim2human.webapp.calls import CallError
from sim2human.webapp.guard import client_key, retry_header
from sim2human.webapp.http import form
from sim2human.webapp.pages import there
from sim2human.webapp.routes.deps import App

log = logging.getLogger("sim2human.webapp")
router = APIRouter()
CSS = resources.files("sim2human.webapp").joinpath("templates", "style.css").read_text()


@router.get("/static/style.css")
async def style() -> Response:
    return Response(CSS, media_type="text/css", headers={"Cache-Control": "max-age=3600"})


@router.get("/favicon.ico")
async def favicon() -> Response:
    return Response(status_code=204)


@router.get("/healthz")
async def health() -> PlainTextResponse:
    return PlainTextResponse("ok")


@router.get("/", response_class=HTMLResponse)
async def consent(request: Request, app: App) -> HTMLResponse:
    """The consent page; it names the browser with a visitor cookie (``admission``) unless the
    browser already holds one."""
    page = app.pages.page("consent.html", title="Welcome", step="1 · consent")
    if visitor_key(request.cookies.get(VISITOR_COOKIE)) is None:
        page.set_cookie(
            VISITOR_COOKIE,
            new_visitor(),
            max_age=86_400,
            httponly=True,
            samesite="lax",
            secure=request.url.scheme == "https",
        )
    return page


@router.post("/start")
async def start(request: Request, app: App) -> Response:
    f = await form(request)
    if f.get("consent") != "yes":
        return app.pages.page(
            "consent.html",
            400,
            title="Welcome",
            step="1 · consent",
            error="Please tick the box to agree before starting.",
        )
    visitor = visitor_key(request.cookies.get(VISITOR_COOKIE))
    if refused := app.starts.admit(client_key(request), visitor):
        return app.pages.message("Busy", refused.text, 429, retry_header(refused.retry_after_s))
    mode: Mode = "self" if f.get("mode") == "self" else "card"
    try:
        sid, token = app.calls.start(mode)
    except CallError as err:
        return app.pages.message("Card calls only", str(err), 400)
    log.info("session %s started (%s)", sid, mode)
    return there(token)
