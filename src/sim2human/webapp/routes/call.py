"""One call's page and its forms; every post checks the ``seen`` count (see ``calls``).

Each route takes its session through one dependency (``deps.current_session``): a token that
opens no call raises ``NoSuchCall``, which the app answers with one 404 page.
"""

from __future__ import annotations

import logging

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from sim2human.scenarios.capabilities import fields
from sim2human.store.call_records import Session
from sim2human.webapp.calls import CallError
from sim2human.webapp.card import card_lines, form_defaults, label
from sim2human.webapp.http import form, form_int
from sim2human.webapp.pages import Pages, there
from sim2human.webapp.routes.deps import App, CallSession, Services

log = logging.getLogger("sim2human.webapp")
router = APIRouter(prefix="/call/{token}")


def no_such_call(pages: Pages) -> HTMLResponse:
    return pages.message(
        "No such call",
        "This link does not open a call. Start a new one from the study's front page.",
        404,
    )


def render(
    app: Services, s: Session, token: str, error: str | None = None, status: int = 200
) -> Response:
    """The page of the step ``s`` is in (card, call, details, rating, done)."""
    page, max_chars = app.pages.page, app.limits.max_chars
    card = card_lines(app.calls.scenario, s.profile) if s.profile is not None else None
    if s.status == "card":
        return page(
            "card.html",
            status,
            title="Your card",
            step="2 · your card",
            card=card,
            token=token,
            error=error,
        )
    if s.status == "calling":
        return page(
            "call.html",
            status,
            title="Call",
            step="3 · the call",
            turns=s.turns,
            card=card,
            max_chars=max_chars,
            agent_turns=sum(t.speaker == "agent" for t in s.turns),
            max_turns=s.max_turns,
            token=token,
            error=error,
        )
    if s.status == "confirm":
        return confirm_page(app, token, form_defaults(app.calls.scenario, s.record or {}), {})
    if s.status == "rating":
        return page(
            "rate.html",
            status,
            title="Rate the call",
            step="4 · rating",
            max_chars=max_chars,
            token=token,
            error=error,
        )
    return page("done.html", title="Thank you", step="done")


def confirm_page(
    app: Services, token: str, values: dict[str, str], problems: dict[str, str]
) -> HTMLResponse:
    return app.pages.page(
        "confirm.html",
        400 if problems else 200,
        title="Your details",
        step="4 · your details",
        token=token,
        fields=[(f, label(app.calls.scenario, f)) for f in fields(app.calls.scenario)],
        values=values,
        problems=problems,
        error="Some boxes need another look." if problems else None,
    )


@router.get("", response_class=HTMLResponse)
async def call(token: str, s: CallSession, app: App) -> Response:
    return render(app, s, token)


@router.post("/begin")
async def begin(token: str, s: CallSession, app: App) -> Response:
    app.calls.begin(s)
    return there(token)


@router.post("/say")
async def say(token: str, request: Request, s: CallSession, app: App) -> Response:
    f = await form(request)
    text = " ".join(f.get("text", "").split())
    limit = app.limits.max_chars
    if not text:
        return render(app, s, token, "Type something to say (or hang up).", 400)
    if len(text) > limit:
        return render(app, s, token, f"Messages are at most {limit} characters.", 413)
    if not app.messages.allow(s.id):
        return render(app, s, token, "You are sending messages very fast; wait a moment.", 429)
    async with app.calls.lock(s.id):
        s = app.calls.store.by_token(token) or s
        try:
            await app.calls.say(s, form_int(f.get("seen")), text)
        except CallError as err:
            return render(app, s, token, str(err), 409)
    return there(token, "#say")


@router.post("/hangup")
async def hang_up(token: str, request: Request, s: CallSession, app: App) -> Response:
    f = await form(request)
    async with app.calls.lock(s.id):
        s = app.calls.store.by_token(token) or s
        app.calls.hang_up(s, form_int(f.get("seen")))
    return there(token)


@router.post("/confirm")
async def confirm(token: str, request: Request, s: CallSession, app: App) -> Response:
    f = await form(request)
    typed = {k: f.get(k, "")[:200] for k in fields(app.calls.scenario)}
    async with app.calls.lock(s.id):
        try:
            problems = app.calls.confirm(s, typed)
        except CallError as err:
            return render(app, s, token, str(err), 409)
    return confirm_page(app, token, typed, problems) if problems else there(token)


@router.post("/rate")
async def rate_call(token: str, request: Request, s: CallSession, app: App) -> Response:
    f = await form(request)
    comment = f.get("comment", "").strip()[: app.limits.max_chars]
    async with app.calls.lock(s.id):
        s = app.calls.store.by_token(token) or s
        if s.status == "done":
            return there(token)  # a repeated submission: the first rating stands
        try:
            app.calls.rate(s, form_int(f.get("rating")), f.get("details", ""), comment)
        except CallError as err:
            return render(app, s, token, str(err), 400)
    log.info("session %s rated", s.id)
    return there(token)
