"""One async chat client for every OpenAI-compatible endpoint (vLLM, llama.cpp, Ollama, hosted).

Built on the ``openai`` package with its own retries switched off (``max_retries=0``), so that
every attempt, retry and failure is counted here: bounded concurrency, a hard per-attempt
timeout, exponential backoff with jitter on 429/5xx/timeouts/connection errors and malformed
responses, and a SQLite cache used only for deterministic requests (temperature 0 or a fixed
seed). The API key is read from the environment variable the config names; it never appears in
configs, reprs or logs.

What an endpoint sends back is untrusted and bounded here, before anything is stored:
- every error text that quotes the upstream body goes through ``redact`` (the configured key's
  own value, ``Authorization``/``Bearer`` values, key-shaped strings); a completion has the
  key's exact value removed (patterns would alter a model's legitimate output);
- a response body over ``max_response_bytes`` (error bodies included) is cut off while it is
  read, by an ``httpx`` response hook that wraps the body stream, and the request fails at once
  with an ``EndpointError`` (not retried: the same request gets the same oversized answer).
  Bodies are asked for uncompressed, so that the bytes counted are the bytes kept; a compressed
  body is refused;
- a completion longer than ``max_tokens * max_chars_per_token`` characters (an endpoint that
  ignores ``max_tokens``) is cut to that length and marked ``finish_reason="length"``, as the
  endpoint itself marks a completion cut at ``max_tokens``; the first cut is logged as a warning;
- ``deadline_s``, when set, bounds one ``chat()`` over all its attempts and backoffs (the call
  page sets it so that a participant waits seconds, not minutes).
Tools (``chat(tools=...)``, OpenAI format) are part of the cache key; the model's calls come
back, and are cached, with its text. The key also holds the server (its URL without
credentials) and the model it reports (``identify``): a new checkpoint under an old name misses.

Concurrency is capped per endpoint *server*, not per client: every client of one ``base_url``
on one event loop (an LLM agent and the LLM users it talks to, named twice in a study file,
and the start-up probe) waits on one gate (``gate.server_gate``) whose cap is the smallest
``max_concurrency`` among them, so a server never holds more requests from this process than
the study file allows it (tau2-bench's per-provider caps, per process). An endpoint with
several servers (``base_urls``) has a gate per server, each at ``max_concurrency``, and keeps
each conversation on one server (``routing``).
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from sim2human.errors import EndpointError, ModelUnavailableError
from sim2human.llm import routing
from sim2human.llm.cache import MAX_TEXT_CHARS, ResponseCache, cache_key
from sim2human.llm.endpoint import (
    DEFAULT_MAX_RESPONSE_BYTES,
    MAX_TIMEOUT_S,
    ChatResult,
    ClientStats,
    EndpointConfig,
    FunctionCall,
    read_key,
)
from sim2human.llm.gate import Gate, server_gate
from sim2human.llm.responses import (
    BodyRefused,
    Completion,
    Retryable,
    byte_cap,
    parse_completion,
    reported_model,
    status_error,
)
from sim2human.redact import public_url, redact, redact_exact

__all__ = [
    "DEFAULT_MAX_RESPONSE_BYTES",
    "MAX_TIMEOUT_S",
    "ChatClient",
    "ChatResult",
    "ClientStats",
    "EndpointConfig",
    "FunctionCall",
]

log = logging.getLogger("sim2human.llm")

Message = Mapping[str, Any]  # role, content; tool_calls / tool_call_id for a tool-using agent


@dataclass
class _Counters:
    """The mutable side of ``ClientStats`` (same fields)."""

    requests: int = 0
    cache_hits: int = 0
    retries: int = 0
    failures: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0


@dataclass
class _LoopState:
    """Per-event-loop resources: the HTTP clients and the servers' gates must not cross loops.
    One of each per server of the endpoint (``EndpointConfig.servers``)."""

    loop: asyncio.AbstractEventLoop
    openai: dict[str, Any]
    gates: dict[str, Gate]


def _import_openai() -> Any:
    try:
        import openai
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ModelUnavailableError(
            "the LLM client needs the `openai` package: run `pip install openai` "
            "(or `pip install 'sim2human[llm]'`)"
        ) from exc
    return openai


class ChatClient:
    """Async chat client for one endpoint. Use ``async with`` or call ``aclose()`` when done."""

    def __init__(
        self,
        config: EndpointConfig,
        *,
        cache_path: str | Path | None = None,
        rng: random.Random | None = None,
        transport: Any = None,
    ) -> None:
        """``transport``: an ``httpx`` async transport to use instead of the network (tests)."""
        self.config = config
        self._openai_mod = _import_openai()
        self._api_key = read_key(config)
        self._secrets = (self._api_key,) if config.api_key_env is not None else ()
        self._cache = ResponseCache(cache_path) if cache_path is not None else None
        self._rng = rng or random.Random()
        self._counters = _Counters()
        self._state: _LoopState | None = None
        self._transport = transport
        self._warned_cut = False
        # what the endpoint said it runs (``identify``; in the cache key); the last ``model`` seen
        self.served_model: str | None = None
        self.last_reported: str | None = None

    def __repr__(self) -> str:
        c = self.config
        return f"ChatClient(base_url={c.base_url!r}, model={c.model!r}, key_env={c.api_key_env!r})"

    @property
    def stats(self) -> ClientStats:
        """A snapshot of this client's accounting."""
        return ClientStats(**asdict(self._counters))

    def _loop_state(self) -> _LoopState:
        loop = asyncio.get_running_loop()
        if self._state is None or self._state.loop is not loop:
            servers = self.config.servers()
            clients = {url: self._openai_client(url) for url in servers}
            gates = {url: server_gate(loop, url, self.config.max_concurrency) for url in servers}
            self._state = _LoopState(loop, clients, gates)
        return self._state

    def _openai_client(self, base_url: str) -> Any:
        http = self._openai_mod.DefaultAsyncHttpxClient(
            headers={"Accept-Encoding": "identity"},  # the bytes counted are the bytes kept
            event_hooks={"response": [byte_cap(self.config.max_response_bytes)]},
            **({} if self._transport is None else {"transport": self._transport}),
        )
        return self._openai_mod.AsyncOpenAI(
            base_url=base_url,
            api_key=self._api_key,
            timeout=self.config.timeout_s,
            max_retries=0,
            http_client=http,
        )

    async def chat(
        self,
        messages: Sequence[Message],
        *,
        temperature: float,
        top_p: float = 1.0,
        max_tokens: int,
        seed: int | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
    ) -> ChatResult:
        """One chat completion, with bounded retries. Raises ``EndpointError`` when they run out.
        ``tools``: offered to the model (OpenAI format); its calls come back in the result."""
        self._counters.requests += 1
        params: dict[str, object] = {
            "temperature": temperature,
            "top_p": top_p,
            "max_tokens": max_tokens,
            "seed": seed,
        }
        if tools is not None:  # only then: a request without tools is sent as before
            params["tools"] = [dict(t) for t in tools]
        deterministic = temperature == 0 or seed is not None
        keyed = {**params, **self._identity()}
        key = cache_key(self.config.model, messages, keyed) if deterministic else None
        limit = max_tokens * self.config.max_chars_per_token
        if self._cache is not None and key is not None:
            hit = self._cache.get(key, max_chars=limit)
            if hit is not None:
                self._counters.cache_hits += 1
                text, finish = self._cut(hit.text, hit.finish_reason, limit)
                kept = hit._replace(text=text, finish_reason=finish)._asdict()
                return ChatResult(**kept, latency_s=0.0, cached=True, attempts=0)
        result = await self._with_retries(messages, params)
        text, finish = self._cut(result.text, result.finish_reason, limit)
        result = result.model_copy(update={"text": text, "finish_reason": finish})
        c = self._counters
        c.prompt_tokens += result.prompt_tokens
        c.completion_tokens += result.completion_tokens
        c.latency_s += result.latency_s
        if self._cache is not None and key is not None and len(result.text) <= MAX_TEXT_CHARS:
            r = result
            self._cache.put(
                key, r.text, r.prompt_tokens, r.completion_tokens, r.finish_reason, r.tool_calls
            )
        return result

    def identify(self, served_model: str | None) -> None:
        """Key the cache by ``served_model`` too: a new checkpoint served under an old name
        is then never answered with the old one's replies."""
        self.served_model = served_model

    def _identity(self) -> dict[str, object]:
        return {"base_url": public_url(self.config.base_url), "served_model": self.served_model}

    def _cut(self, text: str, finish: str, limit: int) -> tuple[str, str]:
        """``text`` cut to ``limit`` characters (marked ``length``) if the endpoint sent more."""
        if len(text) <= limit:
            return text, finish
        if not self._warned_cut:
            self._warned_cut = True
            log.warning(
                "endpoint %s: a completion of %d characters was cut to %d (max_tokens x "
                "max_chars_per_token): the endpoint ignores max_tokens",
                self.config.base_url,
                len(text),
                limit,
            )
        return text[:limit], "length"

    async def _with_retries(
        self, messages: Sequence[Message], params: Mapping[str, object]
    ) -> ChatResult:
        """``_retry_loop`` within ``deadline_s``, if one is set."""
        cfg = self.config
        if cfg.deadline_s is None:
            return await self._retry_loop(messages, params)
        try:
            async with asyncio.timeout(cfg.deadline_s):
                return await self._retry_loop(messages, params)
        except TimeoutError:  # attempts' own timeouts are caught inside: this is the deadline
            self._counters.failures += 1
            raise EndpointError(
                f"endpoint {cfg.base_url} (model {cfg.model!r}) gave no answer within "
                f"{cfg.deadline_s:g}s over all attempts (deadline_s)"
            ) from None

    async def _retry_loop(
        self, messages: Sequence[Message], params: Mapping[str, object]
    ) -> ChatResult:
        state = self._loop_state()
        start = time.perf_counter()
        cfg = self.config
        url = routing.pick(cfg.servers(), routing.current())  # one conversation, one server
        for attempt in range(cfg.max_retries + 1):
            try:
                async with state.gates[url]:
                    answer = await self._attempt(state.openai[url], messages, params)
            except Retryable as err:
                reason = redact(err.reason, self._secrets)
                if attempt == cfg.max_retries:
                    self._counters.failures += 1
                    raise EndpointError(
                        f"endpoint {url} (model {cfg.model!r}) failed after "
                        f"{attempt + 1} attempt(s): {reason}"
                    ) from None
                self._counters.retries += 1
                delay = self._backoff(attempt, err.retry_after_s)
                log.info(
                    "endpoint %s: %s; retry %d/%d in %.2fs",
                    cfg.base_url,
                    reason,
                    attempt + 1,
                    cfg.max_retries,
                    delay,
                )
                await asyncio.sleep(delay)
            except EndpointError as err:
                self._counters.failures += 1
                raise EndpointError(redact(str(err), self._secrets)) from None
            else:
                took = time.perf_counter() - start
                return ChatResult(
                    **answer._asdict(), latency_s=took, cached=False, attempts=attempt + 1
                )
        raise AssertionError("unreachable")  # pragma: no cover

    def _backoff(self, attempt: int, retry_after_s: float | None) -> float:
        """Exponential backoff with jitter in [50%, 100%], capped; a server's Retry-After wins
        when it is longer (but never beyond the cap)."""
        cfg = self.config
        delay = min(cfg.backoff_max_s, cfg.backoff_s * 2.0**attempt)
        delay *= 0.5 + 0.5 * self._rng.random()
        if retry_after_s is not None:
            delay = max(delay, min(retry_after_s, cfg.backoff_max_s))
        return delay

    async def _attempt(
        self, openai: Any, messages: Sequence[Message], params: Mapping[str, object]
    ) -> Completion:
        oa_mod = self._openai_mod
        cfg = self.config
        kwargs: dict[str, Any] = {k: v for k, v in params.items() if v is not None}
        try:
            async with asyncio.timeout(cfg.timeout_s):
                response = await openai.chat.completions.create(
                    model=cfg.model, messages=[dict(m) for m in messages], **kwargs
                )
        except (TimeoutError, oa_mod.APITimeoutError):
            raise Retryable(f"no answer within {cfg.timeout_s:g}s (timeout_s)") from None
        except oa_mod.APIConnectionError as exc:
            cause = exc.__cause__ or exc
            if isinstance(cause, BodyRefused):  # openai 1.x wraps what the hook raises
                raise EndpointError(
                    f"endpoint {cfg.base_url} (model {cfg.model!r}) {cause}"
                ) from None
            raise Retryable(f"cannot connect or connection lost ({cause!r})") from None
        except oa_mod.APIStatusError as exc:
            raise status_error(cfg, exc, self._secrets) from None
        except BodyRefused as exc:
            raise EndpointError(f"endpoint {cfg.base_url} (model {cfg.model!r}) {exc}") from None
        except ValueError as exc:  # the body said JSON but did not parse
            raise Retryable(f"response is not valid JSON ({exc})") from None
        answer = parse_completion(response, self._secrets)
        self.last_reported = reported_model(response, self._secrets)
        calls = tuple(
            c.model_copy(update={"arguments": redact_exact(c.arguments, self._secrets)})
            for c in answer.tool_calls
        )
        return answer._replace(text=redact_exact(answer.text, self._secrets), tool_calls=calls)

    def chat_sync(
        self,
        messages: Sequence[Message],
        *,
        temperature: float,
        top_p: float = 1.0,
        max_tokens: int,
        seed: int | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
    ) -> ChatResult:
        """Blocking ``chat()`` for scripts and the CLI; not for use inside a running event loop."""

        async def once() -> ChatResult:
            try:
                return await self.chat(
                    messages,
                    temperature=temperature,
                    top_p=top_p,
                    max_tokens=max_tokens,
                    seed=seed,
                    tools=tools,
                )
            finally:
                await self._close_http()

        return asyncio.run(once())

    async def _close_http(self) -> None:
        if self._state is not None:
            state, self._state = self._state, None
            for openai in state.openai.values():
                await openai.close()

    async def aclose(self) -> None:
        await self._close_http()
        if self._cache is not None:
            self._cache.close()

    async def __aenter__(self) -> ChatClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()
