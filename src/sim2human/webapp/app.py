"""The call page: consent, patient card, the call, rating; and the admin page.

Plain HTML forms and one stylesheet, no JavaScript at all: the Content-Security-Policy allows
no script, every text a person or agent wrote is escaped by Jinja's autoescape, every request
body is capped, and each session may send only so many messages a minute. A participant's page
lives at ``/call/<token>`` (an unguessable token only they hold); reloading it resumes the call.
"""

from __future__ import annotations

import logging
import os
import time
from collections import deque
from dataclasses import dataclass
from importlib import resources
from typing import Any
from urllib.parse import parse_qs

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
from jinja2 import Environment, PackageLoader, select_autoescape
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from sim2human.human_store import Mode, Session
from sim2human.webapp import admin
from sim2human.webapp.calls import CallError, Calls
from sim2human.webapp.card import card_lines, form_defaults, label

log = logging.getLogger("sim2human.webapp")

CSP = (
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
    "frame-ancestors 'none'; base-uri 'none'"
)
HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


@dataclass(frozen=True)
class Limits:
    max_chars: int = 1000
    """Longest message a person may send (characters)."""
    max_body: int = 16_384
    """Largest request body accepted (bytes); larger ones get 413."""
    per_minute: int = 30
    """Messages one session may send in any 60 seconds; more get 429."""
    starts_per_minute: int = 300
    """New calls the whole server opens in any 60 seconds (a runaway script cannot fill the
    database); more get 429."""


class BodyLimit:
    """Refuse request bodies over ``limit`` bytes, by header or as they stream in."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        length = dict(scope.get("headers", [])).get(b"content-length")
        if length is not None and (not length.isdigit() or int(length) > self.limit):
            await too_large(send)
            return
        seen = 0

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > self.limit:
                raise BodyTooLarge
            return message

        try:
            await self.app(scope, counted, send)
        except BodyTooLarge:
            await too_large(send)


class BodyTooLarge(Exception):
    pass


async def too_large(send: Send) -> None:
    headers = [(k.lower().encode(), v.encode()) for k, v in HEADERS.items()]
    await send(
        {
            "type": "http.response.start",
            "status": 413,
            "headers": [(b"content-type", b"text/plain"), *headers],
        }
    )
    await send({"type": "http.response.body", "body": b"request too large"})


class RateLimit:
    def __init__(self, per_minute: int) -> None:
        self.per_minute = per_minute
        self.sent: dict[str, deque[float]] = {}

    def allow(self, key: str) -> bool:
        now = time.monotonic()
        q = self.sent.setdefault(key, deque())
        while q and now - q[0] > 60.0:
            q.popleft()
        if len(q) >= self.per_minute:
            return False
        q.append(now)
        return True


async def form(request: Request) -> dict[str, str]:
    """A urlencoded form (the body size is already capped by ``BodyLimit``)."""
    body = await request.body()
    try:
        parsed = parse_qs(body.decode("utf-8"), keep_blank_values=True, max_num_fields=50)
    except (UnicodeDecodeError, ValueError):
        return {}
    return {k: v[0] for k, v in parsed.items()}


def create_app(calls: Calls, limits: Limits = Limits(), admin_token: str | None = None) -> FastAPI:
    """The web app over ``calls``; ``admin_token`` defaults to $SIM2HUMAN_ADMIN_TOKEN."""
    token_env = admin_token if admin_token is not None else os.environ.get(admin.ADMIN_TOKEN_ENV)
    escape = select_autoescape(default=True, default_for_string=True)
    env = Environment(loader=PackageLoader("sim2human.webapp", "templates"), autoescape=escape)
    css = resources.files("sim2human.webapp").joinpath("templates", "style.css").read_text()
    rate = RateLimit(limits.per_minute)
    starts = RateLimit(limits.starts_per_minute)
    app = FastAPI(docs_url=None, redoc_url=None, openapi_url=None)
    app.add_middleware(BodyLimit, limit=limits.max_body)
    scenario = calls.scenario

    @app.middleware("http")
    async def headers(request: Request, call_next: Any) -> Response:
        response: Response = await call_next(request)
        for k, v in HEADERS.items():
            response.headers.setdefault(k, v)
        return response

    def page(name: str, status: int = 200, **ctx: Any) -> HTMLResponse:
        ctx.setdefault("error", None)
        ctx.setdefault("step", None)
        return HTMLResponse(env.get_template(name).render(**ctx), status_code=status)

    def message(title: str, text: str, status: int) -> HTMLResponse:
        return page("message.html", status, title=title, message=text)

    def there(token: str, anchor: str = "") -> RedirectResponse:
        return RedirectResponse(f"/call/{token}{anchor}", status_code=303)

    def session(token: str) -> Session | None:
        return calls.store.by_token(token) if 20 <= len(token) <= 64 else None

    def missing() -> HTMLResponse:
        return message(
            "No such call",
            "This link does not open a call. Start a new one from the study's front page.",
            404,
        )

    @app.get("/static/style.css")
    async def style() -> Response:
        return Response(css, media_type="text/css", headers={"Cache-Control": "max-age=3600"})

    @app.get("/favicon.ico")
    async def favicon() -> Response:
        return Response(status_code=204)

    @app.get("/healthz")
    async def health() -> PlainTextResponse:
        return PlainTextResponse("ok")

    @app.get("/", response_class=HTMLResponse)
    async def consent() -> HTMLResponse:
        return page("consent.html", title="Welcome", step="1 · consent")

    @app.post("/start")
    async def start(request: Request) -> Response:
        f = await form(request)
        if f.get("consent") != "yes":
            return page(
                "consent.html",
                400,
                title="Welcome",
                step="1 · consent",
                error="Please tick the box to agree before starting.",
            )
        if not starts.allow("start"):
            return message(
                "Busy", "Too many calls are starting right now; try again in a minute.", 429
            )
        mode: Mode = "self" if f.get("mode") == "self" else "card"
        sid, token = calls.start(mode)
        log.info("session %s started (%s)", sid, mode)
        return there(token)

    def render(s: Session, token: str, error: str | None = None, status: int = 200) -> Response:
        card = card_lines(scenario, s.profile) if s.profile is not None else None
        if s.status == "card":
            return page(
                "card.html",
                status,
                title="Your card",
                step="2 · your card",
                token=token,
                card=card,
                error=error,
            )
        if s.status == "calling":
            return page(
                "call.html",
                status,
                title="Call",
                step="3 · the call",
                token=token,
                turns=s.turns,
                card=card,
                error=error,
                max_chars=limits.max_chars,
                agent_turns=sum(t.speaker == "agent" for t in s.turns),
                max_turns=s.max_turns,
            )
        if s.status == "confirm":
            return confirm_page(s, token, form_defaults(scenario, s.record or {}), {})
        if s.status == "rating":
            return page(
                "rate.html",
                status,
                title="Rate the call",
                step="4 · rating",
                token=token,
                error=error,
                max_chars=limits.max_chars,
            )
        return page("done.html", title="Thank you", step="done")

    def confirm_page(
        s: Session, token: str, values: dict[str, str], problems: dict[str, str]
    ) -> HTMLResponse:
        fields = [(f, label(f)) for f in scenario.fields]
        return page(
            "confirm.html",
            400 if problems else 200,
            title="Your details",
            step="4 · your details",
            token=token,
            fields=fields,
            values=values,
            problems=problems,
            error="Some boxes need another look." if problems else None,
        )

    @app.get("/call/{token}", response_class=HTMLResponse)
    async def call(token: str) -> Response:
        s = session(token)
        return missing() if s is None else render(s, token)

    @app.post("/call/{token}/begin")
    async def begin(token: str) -> Response:
        s = session(token)
        if s is None:
            return missing()
        calls.begin(s)
        return there(token)

    @app.post("/call/{token}/say")
    async def say(token: str, request: Request) -> Response:
        f = await form(request)
        s = session(token)
        if s is None:
            return missing()
        text = " ".join(f.get("text", "").split())
        if not text:
            return render(s, token, "Type something to say (or hang up).", 400)
        if len(text) > limits.max_chars:
            return render(s, token, f"Messages are at most {limits.max_chars} characters.", 413)
        if not rate.allow(s.id):
            return render(s, token, "You are sending messages very fast; wait a moment.", 429)
        async with calls.lock(s.id):
            s = calls.store.by_token(token) or s
            try:
                await calls.say(s, _int(f.get("seen")), text)
            except CallError as err:
                return render(s, token, str(err), 409)
        return there(token, "#say")

    @app.post("/call/{token}/hangup")
    async def hang_up(token: str, request: Request) -> Response:
        f = await form(request)
        s = session(token)
        if s is None:
            return missing()
        async with calls.lock(s.id):
            s = calls.store.by_token(token) or s
            calls.hang_up(s, _int(f.get("seen")))
        return there(token)

    @app.post("/call/{token}/confirm")
    async def confirm(token: str, request: Request) -> Response:
        f = await form(request)
        s = session(token)
        if s is None:
            return missing()
        typed = {k: f.get(k, "")[:200] for k in scenario.fields}
        async with calls.lock(s.id):
            try:
                problems = calls.confirm(s, typed)
            except CallError as err:
                return render(s, token, str(err), 409)
        return confirm_page(s, token, typed, problems) if problems else there(token)

    @app.post("/call/{token}/rate")
    async def rate_call(token: str, request: Request) -> Response:
        f = await form(request)
        s = session(token)
        if s is None:
            return missing()
        comment = f.get("comment", "").strip()[: limits.max_chars]
        async with calls.lock(s.id):
            s = calls.store.by_token(token) or s
            if s.status == "done":
                return there(token)  # a repeated submission: the first rating stands
            try:
                calls.rate(s, _int(f.get("rating")), f.get("details", ""), comment)
            except CallError as err:
                return render(s, token, str(err), 400)
        log.info("session %s rated", s.id)
        return there(token)

    # -- admin --------------------------------------------------------------------------------

    def authorised(request: Request) -> bool:
        return admin.is_admin(token_env, request.cookies.get(admin.COOKIE))

    @app.get("/admin", response_class=HTMLResponse)
    async def admin_page(request: Request) -> Response:
        if not token_env:
            return message(
                "Admin is off",
                f"Start the server with {admin.ADMIN_TOKEN_ENV} set to use the admin page.",
                403,
            )
        if not authorised(request):
            return page("admin_login.html", title="Admin")
        sessions = calls.store.sessions()
        episodes = [s.episode for s in sessions if s.status == "done" and s.episode]
        return page(
            "admin.html",
            title="Admin",
            run=calls.pool.run,
            sessions=admin.session_rows(sessions, calls.store.turn_counts()),
            finished=len(episodes),
            agents=admin.agent_rows(episodes),
        )

    @app.post("/admin/login")
    async def login(request: Request) -> Response:
        f = await form(request)
        if not token_env or not admin.is_admin(token_env, admin.cookie_value(f.get("token", ""))):
            return page("admin_login.html", 403, title="Admin", error="Wrong token.")
        response = RedirectResponse("/admin", status_code=303)
        response.set_cookie(
            admin.COOKIE,
            admin.cookie_value(token_env),
            httponly=True,
            samesite="strict",
            max_age=12 * 3600,
        )
        return response

    @app.get("/admin/export.jsonl")
    async def export(request: Request) -> Response:
        if not authorised(request):
            return PlainTextResponse("sign in at /admin first", status_code=403)
        lines = [e.model_dump_json() for e in calls.store.episodes()]
        body = "".join(line + "\n" for line in lines)  # the admin page's link downloads it
        return Response(body, media_type="text/plain; charset=utf-8")

    return app


def _int(text: str | None) -> int:
    try:
        return int(text or "")
    except ValueError:
        return -1
