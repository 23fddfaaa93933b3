"""One async chat client for every OpenAI-compatible endpoint (vLLM, llama.cpp, Ollama, hosted).

Built on the ``openai`` package with its own retries switched off (``max_retries=0``), so that
every attempt, retry and failure is counted here: bounded concurrency, a hard per-attempt
timeout, exponential backoff with jitter on 429/5xx/timeouts/connection errors and malformed
responses, and a SQLite cache used only for deterministic requests (temperature 0 or a fixed
seed). The API key is read from the environment variable the config names; it never appears in
configs, reprs or logs.
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, cast

from pydantic import BaseModel, ConfigDict, Field

from sim2human.errors import EndpointError, ModelUnavailableError, UsageError
from sim2human.llm.cache import ResponseCache, cache_key

log = logging.getLogger("sim2human.llm")

Message = Mapping[str, str]

# Sent when an endpoint needs no key (local servers): never fall back to OPENAI_API_KEY, which
# would hand a user's real key to whatever base_url a config names.
_NO_KEY = "sk-no-key-required"


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
    ) -> None:
        self.config = config
        self._openai_mod = _import_openai()
        self._api_key = self._read_key(config)
        self._cache = ResponseCache(cache_path) if cache_path is not None else None
        self._rng = rng or random.Random()
        self._counters = _Counters()
        self._state: _LoopState | None = None

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
            oa = self._openai_mod.AsyncOpenAI(
                base_url=self.config.base_url,
                api_key=self._api_key,
                timeout=self.config.timeout_s,
                max_retries=0,
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
        if self._cache is not None and key is not None:
            hit = self._cache.get(key)
            if hit is not None:
                self._counters.cache_hits += 1
                text, pt, ct, finish = hit
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
        c = self._counters
        c.prompt_tokens += result.prompt_tokens
        c.completion_tokens += result.completion_tokens
        c.latency_s += result.latency_s
        if self._cache is not None and key is not None:
            self._cache.put(
                key,
                result.text,
                result.prompt_tokens,
                result.completion_tokens,
                result.finish_reason,
            )
        return result

    async def _with_retries(
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
                if attempt == cfg.max_retries:
                    self._counters.failures += 1
                    raise EndpointError(
                        f"endpoint {cfg.base_url} (model {cfg.model!r}) failed after "
                        f"{attempt + 1} attempt(s): {err.reason}"
                    ) from None
                self._counters.retries += 1
                delay = self._backoff(attempt, err.retry_after_s)
                log.info(
                    "endpoint %s: %s; retry %d/%d in %.2fs",
                    cfg.base_url,
                    err.reason,
                    attempt + 1,
                    cfg.max_retries,
                    delay,
                )
                await asyncio.sleep(delay)
            except EndpointError:
                self._counters.failures += 1
                raise
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
            raise _Retryable(f"cannot connect or connection lost ({cause!r})") from None
        except oa_mod.APIStatusError as exc:
            raise _status_error(cfg, exc) from None
        except ValueError as exc:  # the body said JSON but did not parse
            raise _Retryable(f"response is not valid JSON ({exc})") from None
        return _parse_completion(response)

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


def _status_error(cfg: EndpointConfig, exc: Any) -> Exception:
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
        return _Retryable(f"HTTP {status} ({_short(exc)})", retry_after)
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
            f"OpenAI API starts (usually .../v1) ({_short(exc)})"
        )
    return EndpointError(f"{where} refused the request: HTTP {status} ({_short(exc)})")


def _short(exc: Any, limit: int = 200) -> str:
    text = str(getattr(exc, "message", "") or exc)
    return text if len(text) <= limit else text[:limit] + "..."


def _parse_completion(response: object) -> tuple[str, int, int, str]:
    """(text, prompt tokens, completion tokens, finish reason) from a ChatCompletion, or a
    retryable failure if the body was not one (HTML error page, truncated JSON, no choices)."""
    if isinstance(response, str):
        raise _Retryable(f"response is not JSON: {response[:80]!r}")
    try:
        choice = cast(Any, response).choices[0]
        text = choice.message.content
        usage = cast(Any, response).usage
        pt = int(usage.prompt_tokens) if usage is not None else 0
        ct = int(usage.completion_tokens) if usage is not None else 0
        finish = str(choice.finish_reason or "")
    except (AttributeError, IndexError, TypeError, ValueError) as exc:
        raise _Retryable(f"response is not a chat completion ({exc!r})") from None
    if not isinstance(text, str):
        raise _Retryable("response has no message content")
    return text, pt, ct, finish
