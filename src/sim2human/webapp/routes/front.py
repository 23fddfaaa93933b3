"""The consent page and starting a call (limited per client and for the whole server)."""

from __future__ import annotations

import logging
from importlib import resources

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, PlainTextResponse, Response

from sim2human.store.call_records import Mode
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
async def consent(app: App) -> HTMLResponse:
    return app.pages.page("consent.html", title="Welcome", step="1 · consent")


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
    if wait := app.starts.retry_after(client_key(request)):
        text = "You have started many calls in the last minute; try again in a minute."
        return app.pages.message("Busy", text, 429, retry_header(wait))
    if wait := app.everyone.retry_after("all"):
        text = "Too many calls are starting right now; try again in a minute."
        return app.pages.message("Busy", text, 429, retry_header(wait))
    mode: Mode = "self" if f.get("mode") == "self" else "card"
    try:
        sid, token = app.calls.start(mode)
    except CallError as err:
        return app.pages.message("Card calls only", str(err), 400)
    log.info("session %s started (%s)", sid, mode)
    return there(token)
