"""Endpoints by name, their clients, and the one event loop that sync callers hand work to.

A study names endpoints (``local`` is the embedded model unless a config says otherwise);
``LLMRuntime.open`` starts the embedded server where one is needed, builds one ``ChatClient``
per endpoint (sharing one SQLite cache) and runs an event loop in a background thread, so the
trainer and evaluator stay synchronous and only ``run()`` crosses into async: sync wrappers at
the edges, as the client's docstring asks.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable, Coroutine, Iterator, Mapping
from contextlib import AbstractContextManager, ExitStack, contextmanager
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidatorFunctionWrapHandler,
    WrapValidator,
    field_validator,
)

from sim2human.errors import EndpointError, EndpointUnusableError, UsageError
from sim2human.llm.client import ChatClient, ClientStats, EndpointConfig

T = TypeVar("T")
LOCAL = "local"
CLOSE_TIMEOUT_S = 10.0
PROBE = [{"role": "user", "content": "Say OK."}]


class Embedded(BaseModel):
    """An endpoint served by the embedded SmolLM2 model, started when a run needs it."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    embedded: Literal[True] = True
    parallel: int = Field(4, ge=1, le=64, description="requests decoded together (slots)")
    threads: int | None = Field(
        None, ge=1, le=1024, description="llama.cpp threads (default: cores/2; at most 1024)"
    )
    ctx_per_slot: int = Field(
        2048, ge=256, le=8192, description="tokens of context per slot (SmolLM2's 8192 at most)"
    )


def _entry(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    """An entry validated as the model its keys name (``embedded:`` or not), so that an error
    names that model's field rather than pydantic's union of the two."""
    if isinstance(value, dict):
        return (Embedded if "embedded" in value else EndpointConfig).model_validate(value)
    if isinstance(value, EndpointConfig | Embedded):
        return handler(value)
    raise ValueError("an endpoint is a mapping: base_url and model, or embedded: true")


EndpointEntry = Annotated[EndpointConfig | Embedded, WrapValidator(_entry)]


def default_cache() -> Path:
    root = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(root) / "sim2human" / "llm-cache.sqlite"


class LLMSettings(BaseModel):
    """A study's ``llm:`` section: named endpoints, the cache, conversations in flight."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    endpoints: dict[str, EndpointEntry] = Field(default_factory=dict)
    cache: Path | None = Field(
        default_factory=default_cache, description="SQLite response cache; null disables it"
    )
    conversations: int = Field(16, ge=1, le=4096, description="conversations in flight per run")
    uncached: tuple[str, ...] = Field(
        (), description="endpoints never answered from the cache (the agent under test)"
    )

    @field_validator("cache")
    @classmethod
    def _expand(cls, path: Path | None) -> Path | None:
        return path.expanduser() if path is not None else None

    def capped(self, cap: int) -> LLMSettings:
        """Every served endpoint at ``cap`` requests in flight and ``cap`` conversations in
        flight (``--max-concurrency``); an embedded model keeps its own ``parallel`` slots."""
        endpoints = {
            name: e.model_copy(update={"max_concurrency": cap})
            if isinstance(e, EndpointConfig)
            else e
            for name, e in self.endpoints.items()
        }
        return self.model_copy(update={"endpoints": endpoints, "conversations": cap})

    def entry(self, name: str) -> EndpointEntry:
        if name in self.endpoints:
            return self.endpoints[name]
        if name == LOCAL:
            return Embedded()
        known = ", ".join(sorted({*self.endpoints, LOCAL}))
        raise UsageError(f"endpoint {name!r} is not configured under llm.endpoints ({known})")


EmbeddedServer = Callable[[Embedded], AbstractContextManager[EndpointConfig]]
"""What starts an embedded endpoint for the ``with`` block and yields how to reach it."""


@contextmanager
def serve_here(entry: Embedded) -> Iterator[EndpointConfig]:
    """The embedded model served by this process (``llm.local``), stopped at the end."""
    from sim2human.llm.local import local_model

    with local_model(
        n_parallel=entry.parallel, n_threads=entry.threads, ctx_per_slot=entry.ctx_per_slot
    ) as endpoint:
        yield endpoint


_server: EmbeddedServer = serve_here


def serve_embedded_by(server: EmbeddedServer | None) -> None:
    """Who serves embedded endpoints in this process from now on: ``None``, this process
    (the default); a Ray worker passes its node's one shared server
    (``experiments.executors.ray_embedded``)."""
    global _server
    _server = server or serve_here


@contextmanager
def serve_embedded(settings: LLMSettings, needed: set[str]) -> Iterator[LLMSettings]:
    """Start the embedded server for each needed ``Embedded`` endpoint (``serve_embedded_by``
    says who); yield settings where those entries are the running servers' addresses (what
    worker processes are handed)."""
    with ExitStack() as stack:
        resolved: dict[str, EndpointEntry] = dict(settings.endpoints)
        for name in sorted(needed):
            entry = settings.entry(name)
            if isinstance(entry, Embedded):
                resolved[name] = stack.enter_context(_server(entry))
        yield settings.model_copy(update={"endpoints": resolved})


class LLMRuntime:
    """Clients for named endpoints plus a private event loop; use ``LLMRuntime.open``."""

    def __init__(self, endpoints: Mapping[str, EndpointConfig], settings: LLMSettings) -> None:
        self.settings = settings
        self.conversations = settings.conversations
        self.clients = {
            name: ChatClient(cfg, cache_path=None if name in settings.uncached else settings.cache)
            for name, cfg in endpoints.items()
        }
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="sim2human-llm-loop", daemon=True
        )
        self._thread.start()

    @classmethod
    @contextmanager
    def open(
        cls, settings: LLMSettings, needed: set[str], *, check: bool = True
    ) -> Iterator[LLMRuntime]:
        """Endpoints ``needed`` (by name) ready to use; embedded ones started and stopped here.

        ``check`` sends each endpoint one uncached one-token request first, so that a wrong
        URL, model name or key is one clear error before any episode is played.
        """
        for name in needed:
            settings.entry(name)  # unknown names fail before anything starts
        with serve_embedded(settings, needed) as live:
            endpoints = {n: e for n, e in live.endpoints.items() if isinstance(e, EndpointConfig)}
            runtime = cls({n: endpoints[n] for n in sorted(needed)}, live)
            try:
                if check:
                    runtime.run(runtime.check())
                yield runtime
            finally:
                runtime.close()

    async def check(self) -> None:
        """Raise ``EndpointUnusableError`` naming the endpoint if any cannot answer a tiny
        request."""
        for name, client in self.clients.items():
            for url in client.config.servers():  # every server a conversation may be sent to
                probe = ChatClient(client.config.one_server(url))  # no cache: proves nothing
                try:
                    await probe.chat(PROBE, temperature=0.0, max_tokens=1)
                    client.identify(probe.last_reported)  # the model it runs, in the cache key
                except EndpointError as err:
                    raise EndpointUnusableError(f"endpoint {name!r} is not usable: {err}") from None
                finally:
                    await probe.aclose()

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the runtime's loop and wait for it (call from sync code only)."""
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    def stats(self) -> dict[str, ClientStats]:
        return {name: client.stats for name, client in self.clients.items()}

    def close(self) -> None:
        if not self._loop.is_running():
            return

        async def shut() -> None:
            for client in self.clients.values():
                await client.aclose()

        try:
            asyncio.run_coroutine_threadsafe(shut(), self._loop).result(CLOSE_TIMEOUT_S)
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(CLOSE_TIMEOUT_S)
            self._loop.close()
