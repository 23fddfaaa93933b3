"""What every route may depend on: the app's services, and the session a call token opens.

``create_app`` builds one ``Services`` and keeps it on ``app.state``; routes take it (and the
session) through FastAPI dependencies, so the routers are plain module-level objects and each
handler says in its signature what it reads.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request

from sim2human.store.call_records import Session
from sim2human.webapp.admission import StartAdmission
from sim2human.webapp.calls import Calls
from sim2human.webapp.card import words as card_words
from sim2human.webapp.guard import Backoff, Clock, RateLimit
from sim2human.webapp.pages import Limits, Pages

LOGIN_FREE = 10
"""Addresses that sent a first wrong admin token (in a row), before the whole server's back-off
starts: many addresses guessing once each spend it; one address is held by its own."""


@dataclass(frozen=True)
class Services:
    """One app's collaborators and its rate limiters (each app has its own)."""

    calls: Calls
    pages: Pages
    limits: Limits
    admin_token: str | None
    messages: RateLimit
    """Messages per session per minute."""
    starts: StartAdmission
    """New calls per visitor, per client and for the whole server, per minute."""
    logins: Backoff
    """The lockout after wrong admin tokens, per client."""
    all_logins: Backoff
    """The same for the whole server (key ``guard.GLOBAL``), after ``LOGIN_FREE`` free wrong
    tokens: 200 addresses guessing once each are not 200 free guesses."""

    @classmethod
    def build(cls, calls: Calls, limits: Limits, admin_token: str | None, clock: Clock) -> Services:
        return cls(
            calls=calls,
            pages=Pages(card_words(calls.scenario)),
            limits=limits,
            admin_token=admin_token,
            messages=RateLimit(limits.per_minute, clock),
            starts=StartAdmission(
                limits.starts_per_visitor,
                limits.starts_per_client,
                limits.starts_per_minute,
                limits.newcomer_reserve,
                clock,
            ),
            logins=Backoff(limits.login_backoff_s, limits.login_backoff_cap_s, clock=clock),
            all_logins=Backoff(
                limits.login_backoff_s, limits.login_backoff_cap_s, clock=clock, free=LOGIN_FREE
            ),
        )


class NoSuchCall(Exception):
    """The token opens no call (unknown, or not a token's length)."""


def services(request: Request) -> Services:
    found: Services = request.app.state.services
    return found


def current_session(token: str, app: Services = Depends(services)) -> Session:
    """The session ``token`` opens; ``NoSuchCall`` (one 404 page) when it opens none."""
    s = app.calls.store.by_token(token) if 20 <= len(token) <= 64 else None
    if s is None:
        raise NoSuchCall
    return s


App = Annotated[Services, Depends(services)]
"""A route's parameter for this app's ``Services``."""
CallSession = Annotated[Session, Depends(current_session)]
"""A route's parameter for the session its path's token opens."""
