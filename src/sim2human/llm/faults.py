"""A fault-injecting HTTP proxy for testing and benchmarking clients against a flaky endpoint.

``FaultProxy`` listens on 127.0.0.1 in front of an upstream OpenAI-compatible endpoint and, for
each request in arrival order, draws one fault from a seeded generator: an injected HTTP 500 or
429, a stall longer than any sane client timeout, a dropped connection, a truncated body, a
non-JSON body, or no fault (the request is forwarded). Every decision is recorded in
``proxy.events`` so a test can reconcile what the client saw with what the proxy did.

One request per connection (``Connection: close`` both ways) keeps the parsing minimal: the
proxy needs ``Content-Length`` request bodies, which is what every JSON client sends.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections import Counter
from dataclasses import dataclass
from types import TracebackType
from typing import Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, model_validator

from sim2human.llm.client import EndpointConfig

Fault = Literal["ok", "error_500", "error_429", "stall", "drop", "truncate", "garbage"]
FAULTS: tuple[Fault, ...] = ("error_500", "error_429", "stall", "drop", "truncate", "garbage")


class FaultRates(BaseModel):
    """Probability of each fault per request; the rest are forwarded untouched."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    error_500: float = Field(default=0.0, ge=0, le=1)
    error_429: float = Field(default=0.0, ge=0, le=1)
    stall: float = Field(default=0.0, ge=0, le=1)
    drop: float = Field(default=0.0, ge=0, le=1)
    truncate: float = Field(default=0.0, ge=0, le=1)
    garbage: float = Field(default=0.0, ge=0, le=1)

    @model_validator(mode="after")
    def _total_at_most_one(self) -> FaultRates:
        if sum(getattr(self, f) for f in FAULTS) > 1.0 + 1e-9:
            raise ValueError("fault rates add up to more than 1")
        return self

    def draw(self, rng: random.Random) -> Fault:
        u = rng.random()
        for fault in FAULTS:
            u -= getattr(self, fault)
            if u < 0:
                return fault
        return "ok"


@dataclass(frozen=True)
class FaultEvent:
    index: int
    fault: Fault
    method: str
    path: str
    at: float


class FaultProxy:
    """``async with FaultProxy(upstream_base_url, FaultRates(...), seed=0) as proxy: ...``"""

    def __init__(
        self,
        upstream: str,
        rates: FaultRates,
        *,
        seed: int = 0,
        stall_s: float = 30.0,
        upstream_timeout_s: float = 120.0,
        port: int = 0,
    ) -> None:
        parts = urlsplit(upstream)
        if parts.scheme != "http" or parts.hostname is None:
            raise ValueError(f"FaultProxy needs a plain http:// upstream, not {upstream!r}")
        self._up_host = parts.hostname
        self._up_port = parts.port or 80
        self._prefix = parts.path.rstrip("/")
        self.rates = rates
        self.stall_s = stall_s
        self.upstream_timeout_s = upstream_timeout_s
        self._rng = random.Random(seed)
        self._port = port
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self.events: list[FaultEvent] = []

    @property
    def base_url(self) -> str:
        if self._server is None:
            raise RuntimeError("FaultProxy is not started")
        port = self._server.sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}{self._prefix}"

    def endpoint(self, config: EndpointConfig) -> EndpointConfig:
        """``config`` rerouted through this proxy."""
        return config.model_copy(update={"base_url": self.base_url})

    def counts(self) -> Counter[str]:
        return Counter(e.fault for e in self.events)

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", self._port)

    async def aclose(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._server is not None:
            await self._server.wait_closed()
            self._server = None

    async def __aenter__(self) -> FaultProxy:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            request = await _read_request(reader)
            if request is not None:
                await self._serve_one(request, writer)
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass
        except asyncio.CancelledError:
            pass  # the proxy is closing; ending quietly keeps asyncio from logging the cancel
        finally:
            self._tasks.discard(task)
            writer.close()

    async def _serve_one(self, request: _Request, writer: asyncio.StreamWriter) -> None:
        fault = self.rates.draw(self._rng)
        self.events.append(
            FaultEvent(len(self.events), fault, request.method, request.path, time.time())
        )
        if fault == "error_500":
            writer.write(_response(500, _error_body("injected HTTP 500")))
        elif fault == "error_429":
            writer.write(_response(429, _error_body("injected HTTP 429"), {"Retry-After": "0"}))
        elif fault == "garbage":
            writer.write(_response(200, b"<html>injected garbage</html>", ctype="text/html"))
        elif fault == "stall":
            await asyncio.sleep(self.stall_s)
            return
        elif fault == "drop":
            return
        else:
            head, body = await self._forward(request)
            if fault == "truncate":
                body = body[: len(body) // 2]
            writer.write(head + body)
        await writer.drain()

    async def _forward(self, request: _Request) -> tuple[bytes, bytes]:
        """Send the request upstream; return the response head (rewritten to close) and body."""
        try:
            async with asyncio.timeout(self.upstream_timeout_s):
                up_reader, up_writer = await asyncio.open_connection(self._up_host, self._up_port)
                try:
                    up_writer.write(request.encode(f"{self._up_host}:{self._up_port}"))
                    await up_writer.drain()
                    raw = await up_reader.read()
                finally:
                    up_writer.close()
        except (OSError, TimeoutError) as exc:
            return _response(502, _error_body(f"proxy: upstream failed: {exc!r}")), b""
        head, _, body = raw.partition(b"\r\n\r\n")
        lines = [ln for ln in head.split(b"\r\n") if not ln.lower().startswith(b"connection:")]
        return b"\r\n".join([*lines, b"Connection: close"]) + b"\r\n\r\n", body


@dataclass(frozen=True)
class _Request:
    method: str
    path: str
    headers: list[tuple[str, str]]
    body: bytes

    def encode(self, host: str) -> bytes:
        drop = {"connection", "host", "keep-alive"}
        lines = [f"{self.method} {self.path} HTTP/1.1", f"Host: {host}", "Connection: close"]
        lines += [f"{k}: {v}" for k, v in self.headers if k.lower() not in drop]
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + self.body


async def _read_request(reader: asyncio.StreamReader) -> _Request | None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError:
        return None  # the client went away before sending a request
    first, *rest = head.decode("latin-1").rstrip("\r\n").split("\r\n")
    method, path, _version = first.split(" ", 2)
    headers = [(k.strip(), v.strip()) for k, _, v in (ln.partition(":") for ln in rest)]
    length = next((int(v) for k, v in headers if k.lower() == "content-length"), 0)
    body = await reader.readexactly(length) if length else b""
    return _Request(method, path, headers, body)


def _error_body(message: str) -> bytes:
    return json.dumps({"error": {"message": message, "type": "server_error"}}).encode()


def _response(
    status: int,
    body: bytes,
    extra: dict[str, str] | None = None,
    ctype: str = "application/json",
) -> bytes:
    reason = {200: "OK", 429: "Too Many Requests", 500: "Internal Server Error"}.get(
        status, "Error"
    )
    lines = [
        f"HTTP/1.1 {status} {reason}",
        f"Content-Type: {ctype}",
        f"Content-Length: {len(body)}",
        "Connection: close",
        *(f"{k}: {v}" for k, v in (extra or {}).items()),
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body
