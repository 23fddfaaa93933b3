"""Sticky routing: an endpoint with several servers of one model keeps each conversation on one
of them, so a server's prefix cache holds the conversation's earlier turns (verl routes an
agent loop's conversation to one server for the same reason).

The rollout engine names the conversation a coroutine plays (``conversation``: a context
variable, so every request awaited inside it, and in tasks it starts, carries it); the client
picks the server by a stable hash of that name (``pick``). A request outside any conversation
(the start-up probe, ``model bench``) goes to the first server.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar

_current: ContextVar[str | None] = ContextVar("sim2human_conversation", default=None)


@contextmanager
def conversation(key: str) -> Iterator[None]:
    """Requests made inside the block belong to the conversation ``key``."""
    token = _current.set(key)
    try:
        yield
    finally:
        _current.reset(token)


def current() -> str | None:
    return _current.get()


def pick(servers: Sequence[str], key: str | None) -> str:
    """The server for conversation ``key``: the same for one key in every process and run
    (sha256, not Python's salted ``hash``); the first one for no key."""
    if key is None or len(servers) == 1:
        return servers[0]
    digest = hashlib.sha256(key.encode()).digest()
    return servers[int.from_bytes(digest[:8], "big") % len(servers)]
