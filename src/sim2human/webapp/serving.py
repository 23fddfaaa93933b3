"""Serving the call page with uvicorn, bounded against slow and oversized clients.

uvicorn's own settings bound keep-alive idling (``timeout_keep_alive``), the bytes buffered for
an unfinished request head (``h11_max_incomplete_event_size``) and the connections served at
once (``limit_concurrency``, then 503), but nothing bounds how long a request may take to
arrive: ``timeout_keep_alive`` is disarmed by the first byte, so a client trickling a header a
byte at a time (slowloris) holds its connection forever. ``DeadlineH11`` adds that one timer.

uvicorn trusts ``X-Forwarded-For`` from 127.0.0.1 by default, which would let any local client
choose its own address and walk past the per-client limits; here proxy headers are read only
from the addresses given as ``trusted_proxies``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

REQUEST_DEADLINE_S = 10.0
"""Longest a request (head and body, at most ~24 KB: 2.4 KB/s at the least) may take to arrive,
and a new connection may stay silent, before the server closes it."""
MAX_HEAD_BYTES = 16_384
"""Bytes buffered for a request head still arriving (the app refuses >8 KB heads with 431)."""
MAX_CONNECTIONS = 1000
"""Connections and requests served at once; more are answered 503."""
KEEP_ALIVE_S = 5


class DeadlineH11(H11Protocol):
    """uvicorn's h11 protocol, closing a connection whose request has not fully arrived
    ``deadline_s`` after its first byte (or after the connection opened)."""

    deadline_s = REQUEST_DEADLINE_S
    _timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        if self._timer is None and self.conn.their_state is h11.IDLE:
            self._arm()  # the next request on a kept-alive connection starts arriving
        super().data_received(data)
        if self.conn.their_state is not h11.IDLE and self.conn.their_state is not h11.SEND_BODY:
            self._disarm()  # arrived in full (or the connection is done)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._disarm()
        self._timer = self.loop.call_later(self.deadline_s, self._expired)

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _expired(self) -> None:
        self._timer = None
        if not self.transport.is_closing():
            self.transport.close()


def config(
    app: Any,
    host: str,
    port: int,
    trusted_proxies: Sequence[str] = (),
    deadline_s: float = REQUEST_DEADLINE_S,
) -> uvicorn.Config:
    """The uvicorn settings ``human serve`` runs with."""
    protocol = type("DeadlineH11", (DeadlineH11,), {"deadline_s": deadline_s})
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        http=protocol,
        proxy_headers=bool(trusted_proxies),
        forwarded_allow_ips=list(trusted_proxies) or None,
        timeout_keep_alive=KEEP_ALIVE_S,
        h11_max_incomplete_event_size=MAX_HEAD_BYTES,
        limit_concurrency=MAX_CONNECTIONS,
        access_log=False,
        log_level="warning",
    )


def serve(app: Any, host: str, port: int, trusted_proxies: Sequence[str] = ()) -> None:
    uvicorn.Server(config(app, host, port, trusted_proxies)).run()
