"""Anti-automation for the call page: per-client rate limits, a login back-off, a same-origin
check (OWASP ASVS 2.2.1, 11.1.4, 4.2.2).

Written here rather than taken from a library (slowapi, starlette-csrf) because each is a few
lines over the standard library, the tables must stay bounded in memory whatever an attacker
sends, and the same-origin rule needs no token in the forms (the page has no JavaScript).

The client is the connection's address (``request.client``). Behind a reverse proxy every
request comes from the proxy; ``human serve --trusted-proxy ADDR`` makes uvicorn read
``X-Forwarded-For`` from that address only, and nothing is trusted by default.
"""

from __future__ import annotations

import ipaddress
import math
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from starlette.requests import Request

Clock = Callable[[], float]
MAX_KEYS = 10_000
"""Clients a table remembers; the least recently seen are forgotten first."""


def client_key(request: Request) -> str:
    """Who is asking: the client address; an IPv6 address counts as its /64 network (one
    host usually holds a whole /64, so single addresses would be free to rotate)."""
    host = request.client.host if request.client is not None else ""
    try:
        addr = ipaddress.ip_address(host)
    except ValueError:
        return host
    if isinstance(addr, ipaddress.IPv6Address):
        if addr.ipv4_mapped is not None:
            return str(addr.ipv4_mapped)
        return str(ipaddress.IPv6Network((addr, 64), strict=False))
    return str(addr)


class RateLimit:
    """At most ``per_minute`` events per key in any 60 seconds, for at most ``max_keys`` keys."""

    def __init__(self, per_minute: int, clock: Clock = time.monotonic, max_keys: int = MAX_KEYS):
        self.per_minute = per_minute
        self.clock = clock
        self.max_keys = max_keys
        self.sent: OrderedDict[str, deque[float]] = OrderedDict()

    def _window(self, key: str) -> deque[float]:
        """``key``'s events of the last 60 seconds (the key becomes the most recently seen)."""
        now = self.clock()
        q = self.sent.pop(key, None) or deque()
        while q and now - q[0] >= 60.0:
            q.popleft()
        self.sent[key] = q
        while len(self.sent) > self.max_keys:
            self.sent.popitem(last=False)
        return q

    def used(self, key: str) -> int:
        """Events ``key`` had in the last 60 seconds."""
        return len(self._window(key))

    def wait(self, key: str, below: int | None = None) -> float:
        """Seconds until ``key`` has fewer than ``below`` (default ``per_minute``) events in
        the window; 0 if it has now. Counts nothing."""
        q, limit = self._window(key), self.per_minute if below is None else below
        if len(q) < limit:
            return 0.0
        if limit <= 0:
            return 60.0
        return 60.0 - (self.clock() - q[len(q) - limit])

    def take(self, key: str) -> None:
        """Count one event for ``key`` now."""
        self._window(key).append(self.clock())

    def retry_after(self, key: str) -> float:
        """0 and the event counted if ``key`` may go ahead; else seconds until it may."""
        if wait := self.wait(key):
            return wait
        self.take(key)
        return 0.0

    def allow(self, key: str) -> bool:
        return self.retry_after(key) == 0.0


@dataclass
class _Failures:
    count: int
    until: float


GLOBAL = "*"
"""The key of a limit the whole server shares (no client key is ``*``)."""


class Backoff:
    """Per client, after the n-th wrong guess in a row, no guess is looked at for
    ``min(base_s * 2**(n-1), cap_s)`` seconds; a right one clears the count, and a client
    that has not failed for ``forget_s`` starts again from one second. The first ``free``
    wrong guesses earn no wait (the whole server's budget: ``GLOBAL``)."""

    def __init__(
        self,
        base_s: float = 1.0,
        cap_s: float = 60.0,
        forget_s: float = 900.0,
        clock: Clock = time.monotonic,
        max_keys: int = MAX_KEYS,
        free: int = 0,
    ) -> None:
        self.base_s, self.cap_s, self.forget_s = base_s, cap_s, forget_s
        self.free = free
        self.clock = clock
        self.max_keys = max_keys
        self.failed: OrderedDict[str, _Failures] = OrderedDict()

    def wait(self, key: str) -> float:
        """Seconds before ``key`` may try again (0: now)."""
        f = self.failed.get(key)
        return 0.0 if f is None else max(0.0, f.until - self.clock())

    def fail(self, key: str) -> float:
        """Count a wrong guess; returns the wait it earned."""
        now = self.clock()
        f = self.failed.pop(key, None)
        count = 1 if f is None or now - f.until > self.forget_s else f.count + 1
        paid = count - self.free
        delay = 0.0 if paid <= 0 else min(self.base_s * 2.0 ** min(paid - 1, 60), self.cap_s)
        self.failed[key] = _Failures(count, now + delay)
        while len(self.failed) > self.max_keys:
            self.failed.popitem(last=False)
        return delay

    def clear(self, key: str) -> None:
        self.failed.pop(key, None)

    def count(self, key: str) -> int:
        """Wrong guesses in a row from ``key`` (0 after a right one or none)."""
        f = self.failed.get(key)
        return 0 if f is None else f.count


def retry_header(seconds: float) -> dict[str, str]:
    return {"Retry-After": str(max(1, math.ceil(seconds)))}


def cross_site(headers: Mapping[str, str]) -> bool:
    """True for a request a browser sent from another site (OWASP's "verify origin with
    standard headers"). ``Sec-Fetch-Site`` decides where the browser sent it; without it, an
    ``Origin`` must name this server's ``Host``. A request with neither (curl, scripts, old
    browsers on a plain form post) passes: those are not cross-site forgeries. When the browser
    says ``same-origin``, a mismatched ``Origin`` is a proxy rewriting ``Host``, not an attack."""
    fetch = headers.get("sec-fetch-site")
    if fetch is not None:
        return fetch.strip().lower() not in ("same-origin", "none")
    origin = headers.get("origin")
    if origin is None:
        return False
    parts = urlsplit(origin.strip())
    if parts.scheme not in ("http", "https"):
        return True  # "null" (a sandboxed frame, a file) or garbage
    return parts.netloc.lower() != headers.get("host", "").strip().lower()
