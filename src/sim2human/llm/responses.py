"""An endpoint's answer is untrusted: the body is capped while it is read, an error status is
mapped to a retry or one explained error, and every quoted upstream text is redacted first.

``httpx`` has no response-size limit of its own, hence ``byte_cap`` (a response hook that wraps
the body stream); see ``client`` for how the pieces are used.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any, NamedTuple, cast

from sim2human.errors import EndpointError
from sim2human.llm.endpoint import EndpointConfig, FunctionCall
from sim2human.redact import redact
from sim2human.untrusted import bounded_count, valid_text

QUOTE_CHARS = 200
"""How much of an upstream error body an error message quotes (after redaction)."""


class BodyRefused(Exception):
    """Raised by the response hook inside the HTTP client: a body too large, or compressed."""


class Retryable(Exception):
    """An attempt failed in a way that may succeed if tried again."""

    def __init__(self, reason: str, retry_after_s: float | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry_after_s = retry_after_s


def status_error(cfg: EndpointConfig, exc: Any, secrets: Sequence[str]) -> Exception:
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
        return Retryable(f"HTTP {status} ({short_error(exc, secrets)})", retry_after)
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
            f"OpenAI API starts (usually .../v1) ({short_error(exc, secrets)})"
        )
    return EndpointError(
        f"{where} refused the request: HTTP {status} ({short_error(exc, secrets)})"
    )


def short_error(exc: Any, secrets: Sequence[str], limit: int = QUOTE_CHARS) -> str:
    """The start of an upstream error text, redacted first (a cut must not leave half a key),
    made valid (``untrusted``: it is logged and shown)."""
    text = valid_text(redact(str(getattr(exc, "message", "") or exc)[: 50 * limit], secrets))
    return text if len(text) <= limit else text[:limit] + "..."


class Completion(NamedTuple):
    """What one chat completion said: its text (empty when the model only called tools), token
    counts, finish reason and tool calls."""

    text: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str
    tool_calls: tuple[FunctionCall, ...] = ()


def parse_completion(response: object, secrets: Sequence[str]) -> Completion:
    """The ``Completion`` in a ChatCompletion, or a retryable failure if the body was not one
    (HTML error page, truncated JSON, no choices, neither content nor tool calls).

    What it returns is valid (``untrusted``): lone surrogates replaced, token counts in
    ``[0, 2**31)``. This is where every completion enters, so the cache, the episodes, the call
    page and the logs never meet a text that UTF-8 or SQLite refuses."""
    if isinstance(response, str):
        shown = redact(response[:4000], secrets)[:80]
        raise Retryable(f"response is not JSON: {shown!r}")
    try:
        choice = cast(Any, response).choices[0]
        text = choice.message.content
        calls = tool_calls(getattr(choice.message, "tool_calls", None))
        usage = cast(Any, response).usage
        pt = bounded_count(usage.prompt_tokens) if usage is not None else 0
        ct = bounded_count(usage.completion_tokens) if usage is not None else 0
        finish = valid_text(str(choice.finish_reason or ""))
    except (AttributeError, IndexError, KeyError, TypeError, ValueError, OverflowError) as exc:
        raise Retryable(f"response is not a chat completion ({exc!r})") from None
    if text is None and calls:  # a turn of tool calls alone: OpenAI sends content null
        text = ""
    if not isinstance(text, str):
        raise Retryable("response has no message content")
    return Completion(valid_text(text), pt, ct, finish, calls)


def tool_calls(raw: object) -> tuple[FunctionCall, ...]:
    """``message.tool_calls`` as ``FunctionCall``s (entries that are not function calls are
    skipped: a model's malformed call is its own mistake, not a broken response)."""
    out = []
    for call in cast(Any, raw) or ():
        function = getattr(call, "function", None)
        name = getattr(function, "name", None)
        if isinstance(name, str):
            arguments = getattr(function, "arguments", None)
            text = arguments if isinstance(arguments, str) else ""
            out.append(FunctionCall(name=valid_text(name), arguments=valid_text(text)))
    return tuple(out)


MODEL_NAME_CHARS = 200
"""A reported model name longer than this is cut: it is stored in ``config.json`` and keys the
cache, and no real model identifier is near it."""


def reported_model(response: object, secrets: Sequence[str]) -> str | None:
    """The model a completion says it came from (``response.model``), made valid and redacted
    like its text (``untrusted``: it is stored beside a run and shown), or ``None`` when the
    body names none."""
    name = getattr(response, "model", None)
    if not isinstance(name, str) or not name:
        return None
    return valid_text(redact(name[: 50 * MODEL_NAME_CHARS], secrets))[:MODEL_NAME_CHARS]


def byte_cap(limit: int) -> Callable[[Any], Awaitable[None]]:
    """An ``httpx`` response hook: refuses a compressed body or a declared length over ``limit``,
    and wraps the body stream so that reading it stops with ``BodyRefused`` past ``limit``."""

    async def hook(response: Any) -> None:
        encoding = response.headers.get("content-encoding", "").strip().lower()
        if encoding not in ("", "identity"):
            raise BodyRefused(
                f"sent a {encoding!r}-compressed body although an uncompressed one was asked for"
            )
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            raise BodyRefused(too_large(limit, f"declared {int(declared)} bytes"))
        httpx_mod = sys.modules[type(response).__module__.partition(".")[0]]
        try:
            size = len(response.content)  # already in memory (an in-process transport)
        except httpx_mod.ResponseNotRead:
            response.stream = capped_stream_class(httpx_mod)(response.stream, limit)
        else:
            if size > limit:
                raise BodyRefused(too_large(limit, f"{size} bytes"))

    return hook


def too_large(limit: int, what: str) -> str:
    return (
        f"sent a response over max_response_bytes={limit} ({what}); nothing of it is kept "
        "(an endpoint that ignores max_tokens, or not a chat endpoint)"
    )


@functools.cache
def capped_stream_class(httpx_mod: Any) -> type:
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
                    raise BodyRefused(too_large(self._limit, f"over {seen} bytes so far"))
                yield chunk

        async def aclose(self) -> None:
            await self._inner.aclose()

    return Capped
