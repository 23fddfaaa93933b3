"""The call page: consent, patient card, the call, rating; and the admin page.

Plain HTML forms and one stylesheet, no JavaScript at all: the Content-Security-Policy allows
no script, every text a person or agent wrote is escaped by Jinja's autoescape, every request
body and header block is capped, each session may send only so many messages a minute and
each client start only so many calls (``guard``), and a form posted from another site is
refused. A participant's page lives at ``/call/<token>`` (an unguessable token only they hold);
reloading it resumes the call. When the database cannot save (a full disk), a request gets a
plain 503 page and the log one line; nothing acknowledged is lost.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import time
from dataclasses import dataclass
from importlib import resources
from typing import Any
from urllib.parse import parse_qs

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
from jinja2 import Environment, PackageLoader, select_autoescape
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from sim2human.human_store import Mode, Session, StaleSession
from sim2human.webapp import admin
from sim2human.webapp.calls import CallError, Calls
from sim2human.webapp.card import card_lines, form_defaults, label
from sim2human.webapp.guard import Backoff, Clock, RateLimit, client_key, cross_site, retry_header

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
    max_header: int = 8192
    """Largest request line plus headers accepted (bytes); larger ones get 431."""
    per_minute: int = 30
    """Messages one session may send in any 60 seconds; more get 429."""
    starts_per_client: int = 20
    """New calls one client (address) may open in any 60 seconds; more get 429."""
    starts_per_minute: int = 600
    """New calls the whole server opens in any 60 seconds (a runaway script cannot fill the
    database; well above what one client may start); more get 429."""
    login_backoff_s: float = 1.0
    """A wrong admin token locks that client out for this long, doubling per miss in a row."""
    login_backoff_cap_s: float = 60.0
    """The longest lockout after wrong admin tokens."""


class BodyLimit:
    """Refuse request bodies over ``limit`` bytes, by header or as they stream in."""

    def __init__(self, app: ASGIApp, limit: int, header_limit: int = 8192) -> None:
        self.app = app
        self.limit = limit
        self.header_limit = header_limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        head = sum(len(k) + len(v) for k, v in scope.get("headers", []))
        if (
            head + len(scope.get("raw_path") or b"") + len(scope["query_string"])
            > self.header_limit
        ):
            await too_large(send, 431, b"request headers too large")
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


async def too_large(send: Send, status: int = 413, text: bytes = b"request too large") -> None:
    headers = [(k.lower().encode(), v.encode()) for k, v in HEADERS.items()]
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"text/plain"), *headers],
        }
    )
    await send({"type": "http.response.body", "body": text})


async def form(request: Request) -> dict[str, str]:
    """A urlencoded form (the body size is already capped by ``BodyLimit``)."""
    body = await request.body()
    try:
        parsed = parse_qs(body.decode("utf-8"), keep_blank_values=True, max_num_fields=50)
    except (UnicodeDecodeError, ValueError):
        return {}
    return {k: v[0] for k, v in parsed.items()}


class Pages:
    """The templates (autoescaped), each rendered as a response."""

    def __init__(self) -> None:
        escape = select_autoescape(default=True, default_for_string=True)
        loader = PackageLoader("sim2human.webapp", "templates")
        self.env = Environment(loader=loader, autoescape=escape)

    def page(
        self, name: str, status: int = 200, headers: dict[str, str] | None = None, **ctx: Any
    ) -> HTMLResponse:
        ctx.setdefault("error", None)
        ctx.setdefault("step", None)
        html = self.env.get_template(name).render(**ctx)
        return HTMLResponse(html, status_code=status, headers=headers)

    def message(
        self, title: str, text: str, status: int, headers: dict[str, str] | None = None
    ) -> HTMLResponse:
        return self.page("message.html", status, headers, title=title, message=text)


def create_app(
    calls: Calls,
    limits: Limits = Limits(),
    admin_token: str | None = None,
    clock: Clock = time.monotonic,
) -> FastAPI:
    """The web app over ``calls``; ``admin_token`` defaults to $SIM2HUMAN_ADMIN_TOKEN (a
    UsageError if it is too short); ``clock`` times the rate limits and the login back-off."""
    token = admin_token if admin_token is not None else os.environ.get(admin.ADMIN_TOKEN_ENV)
    admin.check_token(token)
    pages = Pages()
    app = FastAPI(docs_url=None, redoc_url=None, openapi_url=None)
    app.add_middleware(BodyLimit, limit=limits.max_body, header_limit=limits.max_header)
    _protect(app, pages)
    _front_routes(app, calls, pages, limits, clock)
    _call_routes(app, calls, pages, limits, clock)
    _admin_routes(app, calls, pages, token, limits, clock)
    return app


def _protect(app: FastAPI, pages: Pages) -> None:
    """Security headers on every response; cross-site posts refused; store failures and lost
    races answered with a page, never a traceback."""

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

    app.add_exception_handler(sqlite3.Error, cannot_save)
    app.add_exception_handler(StaleSession, moved_on)


def there(token: str, anchor: str = "") -> RedirectResponse:
    return RedirectResponse(f"/call/{token}{anchor}", status_code=303)


def _front_routes(app: FastAPI, calls: Calls, pages: Pages, limits: Limits, clock: Clock) -> None:
    """The consent page and starting a call (limited per client and for the whole server)."""
    page, message = pages.page, pages.message
    css = resources.files("sim2human.webapp").joinpath("templates", "style.css").read_text()
    starts = RateLimit(limits.starts_per_client, clock)
    everyone = RateLimit(limits.starts_per_minute, clock)

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
        if wait := starts.retry_after(client_key(request)):
            text = "You have started many calls in the last minute; try again in a minute."
            return message("Busy", text, 429, retry_header(wait))
        if wait := everyone.retry_after("all"):
            text = "Too many calls are starting right now; try again in a minute."
            return message("Busy", text, 429, retry_header(wait))
        mode: Mode = "self" if f.get("mode") == "self" else "card"
        sid, token = calls.start(mode)
        log.info("session %s started (%s)", sid, mode)
        return there(token)


def _call_routes(app: FastAPI, calls: Calls, pages: Pages, limits: Limits, clock: Clock) -> None:
    """One call's page and its forms; every post checks the ``seen`` count (see ``calls``)."""
    page, message = pages.page, pages.message
    rate = RateLimit(limits.per_minute, clock)
    scenario = calls.scenario

    def session(token: str) -> Session | None:
        return calls.store.by_token(token) if 20 <= len(token) <= 64 else None

    def missing() -> HTMLResponse:
        return message(
            "No such call",
            "This link does not open a call. Start a new one from the study's front page.",
            404,
        )

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


def _admin_routes(
    app: FastAPI,
    calls: Calls,
    pages: Pages,
    token: str | None,
    limits: Limits,
    clock: Clock,
) -> None:
    page, message = pages.page, pages.message
    backoff = Backoff(limits.login_backoff_s, limits.login_backoff_cap_s, clock=clock)

    def authorised(request: Request) -> bool:
        cookie = request.cookies.get(admin.COOKIE)
        if not token or not cookie:
            return False
        return calls.store.admin_session(admin.session_key(token, cookie))

    @app.get("/admin", response_class=HTMLResponse)
    async def admin_page(request: Request) -> Response:
        if not token:
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
        who = client_key(request)
        if wait := backoff.wait(who):  # no guess is even looked at while locked out
            retry = retry_header(wait)
            text = f"Too many wrong tokens from here; try again in {retry['Retry-After']} s."
            return message("Admin", text, 429, retry)
        f = await form(request)
        if not token or not admin.token_matches(token, f.get("token", "")):
            later = retry_header(backoff.fail(who)) if token else None
            return page("admin_login.html", 403, later, title="Admin", error="Wrong token.")
        backoff.clear(who)
        signed_in = admin.new_session()
        expires = time.time() + admin.SESSION_S
        calls.store.add_admin_session(admin.session_key(token, signed_in), expires)
        response = RedirectResponse("/admin", status_code=303)
        response.set_cookie(
            admin.COOKIE, signed_in, httponly=True, samesite="strict", max_age=admin.SESSION_S
        )
        return response

    @app.post("/admin/logout")
    async def logout(request: Request) -> Response:
        cookie = request.cookies.get(admin.COOKIE)
        if token and cookie:
            calls.store.drop_admin_session(admin.session_key(token, cookie))
        response = RedirectResponse("/admin", status_code=303)
        response.delete_cookie(admin.COOKIE, httponly=True, samesite="strict")
        return response

    @app.get("/admin/export.jsonl")
    async def export(request: Request) -> Response:
        if not authorised(request):
            return PlainTextResponse("sign in at /admin first", status_code=403)
        lines = [e.model_dump_json() for e in calls.store.episodes()]
        body = "".join(line + "\n" for line in lines)  # the admin page's link downloads it
        return Response(body, media_type="text/plain; charset=utf-8")


def _line(err: Exception) -> str:
    return " ".join(str(err).split())[:200]


def _int(text: str | None) -> int:
    try:
        return int(text or "")
    except ValueError:
        return -1
