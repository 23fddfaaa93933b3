"""The admin page: sign in with the admin token, see the sessions, export the episodes."""

from __future__ import annotations

import time
from typing import Annotated

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response

from sim2human.webapp import admin
from sim2human.webapp.guard import GLOBAL, client_key, retry_header
from sim2human.webapp.http import form
from sim2human.webapp.routes.deps import App

router = APIRouter(prefix="/admin")


def signed_in(request: Request, app: App) -> bool:
    """Whether the request carries a live admin session's cookie."""
    cookie = request.cookies.get(admin.COOKIE)
    if not app.admin_token or not cookie:
        return False
    return app.calls.store.admin_session(admin.session_key(app.admin_token, cookie))


SignedIn = Annotated[bool, Depends(signed_in)]


@router.get("", response_class=HTMLResponse)
async def admin_page(authorised: SignedIn, app: App) -> Response:
    if not app.admin_token:
        return app.pages.message(
            "Admin is off",
            f"Start the server with {admin.ADMIN_TOKEN_ENV} set to use the admin page.",
            403,
        )
    if not authorised:
        return app.pages.page("admin_login.html", title="Admin")
    sessions = app.calls.store.sessions()
    episodes = [s.episode for s in sessions if s.status == "done" and s.episode]
    return app.pages.page(
        "admin.html",
        title="Admin",
        run=app.calls.pool.run,
        sessions=admin.session_rows(sessions, app.calls.store.turn_counts()),
        finished=len(episodes),
        agents=admin.agent_rows(episodes),
    )


@router.post("/login")
async def login(request: Request, app: App) -> Response:
    who, token = client_key(request), app.admin_token
    # no guess is even looked at while locked out: this client, or every client at once
    # (many addresses guessing in turn, each under its own back-off, spend the shared budget)
    if wait := max(app.logins.wait(who), app.all_logins.wait(GLOBAL)):
        retry = retry_header(wait)
        text = f"Too many wrong tokens from here; try again in {retry['Retry-After']} s."
        return app.pages.message("Admin", text, 429, retry)
    f = await form(request)
    if not token or not admin.token_matches(token, f.get("token", "")):
        later = None
        if token:
            own = app.logins.fail(who)  # the server's budget is spent by new addresses only:
            shared = app.all_logins.fail(GLOBAL) if app.logins.count(who) == 1 else 0.0
            later = retry_header(max(own, shared))  # one address is held by its own back-off
        return app.pages.page("admin_login.html", 403, later, title="Admin", error="Wrong token.")
    app.logins.clear(who)
    session = admin.new_session()
    app.calls.store.add_admin_session(
        admin.session_key(token, session), time.time() + admin.SESSION_S
    )
    response = RedirectResponse("/admin", status_code=303)
    response.set_cookie(  # Secure when served over TLS (or a proxy that says so, if trusted)
        admin.COOKIE,
        session,
        httponly=True,
        samesite="strict",
        max_age=admin.SESSION_S,
        secure=request.url.scheme == "https",
    )
    return response


@router.post("/logout")
async def logout(request: Request, app: App) -> Response:
    cookie = request.cookies.get(admin.COOKIE)
    if app.admin_token and cookie:
        app.calls.store.drop_admin_session(admin.session_key(app.admin_token, cookie))
    response = RedirectResponse("/admin", status_code=303)
    response.delete_cookie(admin.COOKIE, httponly=True, samesite="strict")
    return response


@router.get("/export.jsonl")
async def export(authorised: SignedIn, app: App) -> Response:
    if not authorised:
        return PlainTextResponse("sign in at /admin first", status_code=403)
    lines = [e.model_dump_json() for e in app.calls.store.episodes()]
    body = "".join(line + "\n" for line in lines)  # the admin page's link downloads it
    return Response(body, media_type="text/plain; charset=utf-8")
