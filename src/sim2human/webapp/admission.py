"""Who may start a call: a budget per visitor (browser cookie), per client (address), and a
fair share of the whole server's budget that a flood cannot take from newcomers.

The server-wide ceiling (``Limits.starts_per_minute``) exists so that a runaway script cannot
fill the database. A plain ceiling is a lockout, though: 37 addresses starting 20 calls each
filled it in 2.2 s and every later client got 429 for a minute (audit N7). Here the ceiling is
split. A start from a client that has already started a call in the last minute (by its
address or its visitor cookie) may only fill the budget up to ``starts_per_minute -
newcomer_reserve``; the last ``newcomer_reserve`` starts are kept for clients that have not.
A flood is made of repeat starts, so it is refused (429 with ``Retry-After``) before the
reserve, and a person opening the page for the first time still gets in. To take the reserve
too, a flood needs ``newcomer_reserve`` fresh addresses every minute (an IPv6 /64 counts as one
address, ``guard.client_key``); against that many, a proxy's challenge is the tool, not this.

The visitor cookie is a random name the consent page hands out, not a credential: a script can
drop it, and then it is held by its address alone. It lets one browser behind a shared address
(a lab's NAT) use only ``starts_per_visitor`` of that address's starts, and it marks a browser
that changed address as a repeat client.

No queue: a start is one database row, so a request either starts at once or gets 429 with the
seconds to wait; holding the form post open would only hold a connection (uvicorn's
``limit_concurrency`` bounds those). Written here rather than with a rate-limit library
(slowapi, limits) because those count per key and have no notion of a shared budget with a
share kept for new keys.
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass

from sim2human.webapp.guard import Clock, RateLimit

VISITOR_COOKIE = "s2h_visitor"
"""The consent page's cookie naming the browser (a random name, nothing else)."""
_VISITOR_LEN = 22
"""Characters of ``secrets.token_urlsafe(16)``; any other value is ignored."""
ALL = "all"


def new_visitor() -> str:
    return secrets.token_urlsafe(16)


def visitor_key(cookie: str | None) -> str | None:
    """The visitor a cookie names, or None for no cookie or one the page never handed out."""
    if cookie is None or len(cookie) != _VISITOR_LEN:
        return None
    if not all(c.isalnum() or c in "-_" for c in cookie):
        return None
    return cookie


@dataclass(frozen=True)
class Refusal:
    """Why a start was refused, and when to try again."""

    text: str
    retry_after_s: float


MINE = "You have started many calls in the last minute; try again in a minute."
BUSY = "Too many calls are starting right now; try again in a minute."


class StartAdmission:
    """Counts starts per visitor, per client and for the whole server (all over the last 60
    seconds, bounded in memory by ``RateLimit``) and decides each new start."""

    def __init__(
        self,
        per_visitor: int,
        per_client: int,
        per_minute: int,
        newcomer_reserve: int,
        clock: Clock = time.monotonic,
    ) -> None:
        self.visitors = RateLimit(per_visitor, clock)
        self.clients = RateLimit(per_client, clock)
        self.everyone = RateLimit(per_minute, clock)
        self.shared = max(0, per_minute - newcomer_reserve)
        """Starts a minute that repeat clients may take; the rest are kept for newcomers."""

    def admit(self, client: str, visitor: str | None) -> Refusal | None:
        """None (and the start counted everywhere) if it may start now; else a refusal."""
        own = self.clients.wait(client)
        if visitor is not None:
            own = max(own, self.visitors.wait(visitor))
        if own:
            return Refusal(MINE, own)
        repeat = self.clients.used(client) > 0 or (
            visitor is not None and self.visitors.used(visitor) > 0
        )
        room = self.everyone.wait(ALL, self.shared if repeat else None)
        if room:
            return Refusal(BUSY, room)
        self.clients.take(client)
        if visitor is not None:
            self.visitors.take(visitor)
        self.everyone.take(ALL)
        return None
