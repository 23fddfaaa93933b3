"""One cap on the requests a process has in flight to one endpoint server, shared by every
client of that server on an event loop (``client.ChatClient``): an LLM agent and the LLM
users it talks to, named as two endpoints of one ``base_url``, wait at one gate.

Hand-written rather than an ``asyncio.Semaphore`` because the cap must be able to go down
when a client with a smaller ``max_concurrency`` joins a gate already in use.
"""

from __future__ import annotations

import asyncio
import weakref


class Gate:
    """At most ``cap`` requests in flight to one server from one event loop; ``cap`` only
    ever goes down (a client with a smaller ``max_concurrency`` joins)."""

    def __init__(self, cap: int) -> None:
        self.cap, self.held = cap, 0
        self._free = asyncio.Condition()

    async def __aenter__(self) -> None:
        async with self._free:
            await self._free.wait_for(lambda: self.held < self.cap)
            self.held += 1

    async def __aexit__(self, *exc: object) -> None:
        async with self._free:
            self.held -= 1
            self._free.notify()


_gates: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, Gate]] = (
    weakref.WeakKeyDictionary()
)
"""Per event loop, the gate of each server (by ``base_url``) its clients share."""


def server_gate(loop: asyncio.AbstractEventLoop, base_url: str, cap: int) -> Gate:
    """The gate of ``base_url`` on ``loop``, capped at ``cap`` at most."""
    gates = _gates.setdefault(loop, {})
    gate = gates.setdefault(base_url.rstrip("/"), Gate(cap))
    gate.cap = min(gate.cap, cap)
    return gate
