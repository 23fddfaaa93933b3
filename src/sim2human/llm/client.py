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
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import random
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, cast

from pydantic import BaseModel, ConfigDict, Field

from sim2human.errors import EndpointError, ModelUnavailableError, UsageError
from sim2human.llm.cache import MAX_TEXT_CHARS, ResponseCache, cache_key
from sim2human.redact import redact, redact_exact

log = logging.getLogger("sim2human.llm")

Message = Mapping[str, str]

# Sent when an endpoint needs no key (local servers): never fall back to OPENAI_API_KEY, which
# would hand a user's real key to whatever base_url a config names.
_NO_KEY = "sk-no-key-required"

DEFAULT_MAX_RESPONSE_BYTES = 4 * 2**20
"""4 MiB: a chat completion of a few thousand tokens is tens of kilobytes."""

_QUOTE_CHARS = 200
"""How much of an upstream error body an error message quotes (after redaction)."""


MAX_TIMEOUT_S = 3600.0
"""Longest wait for one attempt or one backoff: every wait is bounded, however configured."""


class EndpointConfig(BaseModel):
    """Where and how to reach one chat model. Holds the *name* of the key's env var, never a key."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    base_url: str = Field(description="e.g. http://127.0.0.1:8080/v1")
    model: str
    api_key_env: str | None = Field(
        default=None, description="name of the environment variable that holds the API key"
    )
    timeout_s: float = Field(
        default=60.0, gt=0, le=MAX_TIMEOUT_S, description="hard limit on one attempt (<= 1 h)"
    )
    max_retries: int = Field(default=4, ge=0, le=20)
    max_concurrency: int = Field(default=8, ge=1, le=1024, description="requests in flight")
    backoff_s: float = Field(
        default=0.5, ge=0, le=600, description="first backoff; doubles per retry (<= 10 min)"
    )
    backoff_max_s: float = Field(
        default=8.0, ge=0, le=MAX_TIMEOUT_S, description="longest backoff (<= 1 h)"
    )
    deadline_s: float | None = Field(
        default=None,
        gt=0,
        le=86_400,
        allow_inf_nan=False,
        description="limit on one request over all its attempts and backoffs (none: unbounded "
        "but for timeout_s x attempts)",
    )
    max_response_bytes: int = Field(
        default=DEFAULT_MAX_RESPONSE_BYTES,
        ge=1024,
        le=1024 * 2**20,
        description="largest response body read (error bodies too); a larger one fails",
    )
    max_chars_per_token: int = Field(
        default=32,
        ge=1,
        le=1024,
        description="a completion is cut at max_tokens x this many characters",
    )


class ChatResult(BaseModel):
    """One answer. ``latency_s`` covers all attempts and backoff; 0 for a cache hit."""

    model_config = ConfigDict(frozen=True)

    text: str
    prompt_tokens: int
    completion_tokens: int
    latency_s: float
    cached: bool
    finish_reason: str = ""
    attempts: int = 1


class ClientStats(BaseModel):
    """Accounting for one client. ``requests`` counts ``chat()`` calls, cache hits included;
    tokens and ``latency_s`` sum the requests that reached the endpoint and succeeded."""

    model_config = ConfigDict(frozen=True)

    requests: int = 0
    cache_hits: int = 0
    retries: int = 0
    failures: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0


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


class _BodyRefused(Exception):
    """Raised by the response hook inside the HTTP client: a body too large, or compressed."""


class _Retryable(Exception):
    """An attempt failed in a way that may succeed if tried again."""

    def __init__(self, reason: str, retry_after_s: float | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry_after_s = retry_after_s


@dataclass
class _LoopState:
    """Per-event-loop resources: the HTTP client and semaphore must not cross loops."""

    loop: asyncio.AbstractEventLoop
    openai: Any
    semaphore: asyncio.Semaphore


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
        self._api_key = self._read_key(config)
        self._secrets = (self._api_key,) if config.api_key_env is not None else ()
        self._cache = ResponseCache(cache_path) if cache_path is not None else None
        self._rng = rng or random.Random()
        self._counters = _Counters()
        self._state: _LoopState | None = None
        self._transport = transport
        self._warned_cut = False

    @staticmethod
    def _read_key(config: EndpointConfig) -> str:
        if config.api_key_env is None:
            return _NO_KEY
        key = os.environ.get(config.api_key_env)
        if not key:
            raise UsageError(
                f"endpoint {config.base_url}: environment variable {config.api_key_env} "
                "(named by api_key_env) is not set or empty"
            )
        return key

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
            http = self._openai_mod.DefaultAsyncHttpxClient(
                headers={"Accept-Encoding": "identity"},  # the bytes counted are the bytes kept
                event_hooks={"response": [_byte_cap(self.config.max_response_bytes)]},
                **({} if self._transport is None else {"transport": self._transport}),
            )
            oa = self._openai_mod.AsyncOpenAI(
                base_url=self.config.base_url,
                api_key=self._api_key,
                timeout=self.config.timeout_s,
                max_retries=0,
                http_client=http,
            )
            self._state = _LoopState(loop, oa, asyncio.Semaphore(self.config.max_concurrency))
        return self._state

    async def chat(
        self,
        messages: Sequence[Message],
        *,
        temperature: float,
        top_p: float = 1.0,
        max_tokens: int,
        seed: int | None = None,
    ) -> ChatResult:
        """One chat completion, with bounded retries. Raises ``EndpointError`` when they run out."""
        self._counters.requests += 1
        params: dict[str, object] = {
            "temperature": temperature,
            "top_p": top_p,
            "max_tokens": max_tokens,
            "seed": seed,
        }
        deterministic = temperature == 0 or seed is not None
        key = cache_key(self.config.model, messages, params) if deterministic else None
        limit = max_tokens * self.config.max_chars_per_token
        if self._cache is not None and key is not None:
            hit = self._cache.get(key, max_chars=limit)
            if hit is not None:
                self._counters.cache_hits += 1
                text, pt, ct, finish = hit
                text, finish = self._cut(text, finish, limit)
                return ChatResult(
                    text=text,
                    prompt_tokens=pt,
                    completion_tokens=ct,
                    latency_s=0.0,
                    cached=True,
                    finish_reason=finish,
                    attempts=0,
                )
        result = await self._with_retries(messages, params)
        text, finish = self._cut(result.text, result.finish_reason, limit)
        result = result.model_copy(update={"text": text, "finish_reason": finish})
        c = self._counters
        c.prompt_tokens += result.prompt_tokens
        c.completion_tokens += result.completion_tokens
        c.latency_s += result.latency_s
        if self._cache is not None and key is not None and len(result.text) <= MAX_TEXT_CHARS:
            self._cache.put(
                key,
                result.text,
                result.prompt_tokens,
                result.completion_tokens,
                result.finish_reason,
            )
        return result

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
        for attempt in range(cfg.max_retries + 1):
            try:
                async with state.semaphore:
                    text, pt, ct, finish = await self._attempt(state, messages, params)
            except _Retryable as err:
                reason = redact(err.reason, self._secrets)
                if attempt == cfg.max_retries:
                    self._counters.failures += 1
                    raise EndpointError(
                        f"endpoint {cfg.base_url} (model {cfg.model!r}) failed after "
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
                return ChatResult(
                    text=text,
                    prompt_tokens=pt,
                    completion_tokens=ct,
                    latency_s=time.perf_counter() - start,
                    cached=False,
                    finish_reason=finish,
                    attempts=attempt + 1,
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
        self, state: _LoopState, messages: Sequence[Message], params: Mapping[str, object]
    ) -> tuple[str, int, int, str]:
        oa_mod = self._openai_mod
        cfg = self.config
        kwargs: dict[str, Any] = {k: v for k, v in params.items() if v is not None}
        try:
            async with asyncio.timeout(cfg.timeout_s):
                response = await state.openai.chat.completions.create(
                    model=cfg.model, messages=[dict(m) for m in messages], **kwargs
                )
        except (TimeoutError, oa_mod.APITimeoutError):
            raise _Retryable(f"no answer within {cfg.timeout_s:g}s (timeout_s)") from None
        except oa_mod.APIConnectionError as exc:
            cause = exc.__cause__ or exc
            if isinstance(cause, _BodyRefused):  # openai 1.x wraps what the hook raises
                raise EndpointError(
                    f"endpoint {cfg.base_url} (model {cfg.model!r}) {cause}"
                ) from None
            raise _Retryable(f"cannot connect or connection lost ({cause!r})") from None
        except oa_mod.APIStatusError as exc:
            raise _status_error(cfg, exc, self._secrets) from None
        except _BodyRefused as exc:
            raise EndpointError(f"endpoint {cfg.base_url} (model {cfg.model!r}) {exc}") from None
        except ValueError as exc:  # the body said JSON but did not parse
            raise _Retryable(f"response is not valid JSON ({exc})") from None
        text, pt, ct, finish = _parse_completion(response, self._secrets)
        return redact_exact(text, self._secrets), pt, ct, finish

    def chat_sync(
        self,
        messages: Sequence[Message],
        *,
        temperature: float,
        top_p: float = 1.0,
        max_tokens: int,
        seed: int | None = None,
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
                )
            finally:
                await self._close_http()

        return asyncio.run(once())

    async def _close_http(self) -> None:
        if self._state is not None:
            state, self._state = self._state, None
            await state.openai.close()

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


def _status_error(cfg: EndpointConfig, exc: Any, secrets: Sequence[str]) -> Exception:
    """Map an HTTP error status to a retryable failure or a final, explained ``EndpointError``."""
    status = int(exc.status_code)
    where = f"endpoint {cfg.base_url} (model {cfg.model!r})"
    if status == 429 or status >= 500 or status in (408, 409):
        retry_after: float | None = None
        header = exc.response.headers.get("retry-after")
        if header is not None:
            try:
                retry_after = max(0.0, float(header))
            except ValueError:
                retry_after = None
        return _Retryable(f"HTTP {status} ({_short(exc, secrets)})", retry_after)
    if status in (401, 403):
        hint = (
            f"check the key in ${cfg.api_key_env}"
            if cfg.api_key_env
            else "this endpoint needs a key: set api_key_env to the name of the env var holding it"
        )
        return EndpointError(f"{where} rejected the API key (HTTP {status}): {hint}")
    if status == 404:
        return EndpointError(
            f"{where}: HTTP 404 not found: check the model name and that base_url ends where the "
            f"OpenAI API starts (usually .../v1) ({_short(exc, secrets)})"
        )
    return EndpointError(f"{where} refused the request: HTTP {status} ({_short(exc, secrets)})")


def _short(exc: Any, secrets: Sequence[str], limit: int = _QUOTE_CHARS) -> str:
    """The start of an upstream error text, redacted first (a cut must not leave half a key)."""
    text = redact(str(getattr(exc, "message", "") or exc)[: 50 * limit], secrets)
    return text if len(text) <= limit else text[:limit] + "..."


def _parse_completion(response: object, secrets: Sequence[str]) -> tuple[str, int, int, str]:
    """(text, prompt tokens, completion tokens, finish reason) from a ChatCompletion, or a
    retryable failure if the body was not one (HTML error page, truncated JSON, no choices)."""
    if isinstance(response, str):
        shown = redact(response[:4000], secrets)[:80]
        raise _Retryable(f"response is not JSON: {shown!r}")
    try:
        choice = cast(Any, response).choices[0]
        text = choice.message.content
        usage = cast(Any, response).usage
        pt = int(usage.prompt_tokens) if usage is not None else 0
        ct = int(usage.completion_tokens) if usage is not None else 0
        finish = str(choice.finish_reason or "")
    except (AttributeError, IndexError, KeyError, TypeError, ValueError, OverflowError) as exc:
        raise _Retryable(f"response is not a chat completion ({exc!r})") from None
    if not isinstance(text, str):
        raise _Retryable("response has no message content")
    return text, pt, ct, finish


def _byte_cap(limit: int) -> Callable[[Any], Awaitable[None]]:
    """An ``httpx`` response hook: refuses a compressed body or a declared length over ``limit``,
    and wraps the body stream so that reading it stops with ``_BodyRefused`` past ``limit``."""

    async def hook(response: Any) -> None:
        encoding = response.headers.get("content-encoding", "").strip().lower()
        if encoding not in ("", "identity"):
            raise _BodyRefused(
                f"sent a {encoding!r}-compressed body although an uncompressed one was asked for"
            )
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            raise _BodyRefused(_too_large(limit, f"declared {int(declared)} bytes"))
        httpx_mod = sys.modules[type(response).__module__.partition(".")[0]]
        try:
            size = len(response.content)  # already in memory (an in-process transport)
        except httpx_mod.ResponseNotRead:
            response.stream = _capped_stream_class(httpx_mod)(response.stream, limit)
        else:
            if size > limit:
                raise _BodyRefused(_too_large(limit, f"{size} bytes"))

    return hook


def _too_large(limit: int, what: str) -> str:
    return (
        f"sent a response over max_response_bytes={limit} ({what}); nothing of it is kept "
        "(an endpoint that ignores max_tokens, or not a chat endpoint)"
    )


@functools.cache
def _capped_stream_class(httpx_mod: Any) -> type:
    """A subclass of that ``httpx`` module's ``AsyncByteStream`` (httpx or httpx2, whichever the
    ``openai`` package uses) that stops after ``limit`` bytes."""

    class Capped(httpx_mod.AsyncByteStream):  # type: ignore[misc]
        def __init__(self, inner: Any, limit: int) -> None:
            self._inner = inner
            self._limit = limit

        async def __aiter__(self) -> AsyncIterator[bytes]:
            seen = 0
            async for chunk in self._inner:
                seen += len(chunk)
                if seen > self._limit:
                    raise _BodyRefused(_too_large(self._limit, f"over {seen} bytes so far"))
                yield chunk

        async def aclose(self) -> None:
            await self._inner.aclose()

    return Capped
