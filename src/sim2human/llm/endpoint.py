"""What an endpoint is (``EndpointConfig``: where, how long to wait, how much to read) and what
one answer and one client's accounting look like."""

from __future__ import annotations

import os

from pydantic import BaseModel, ConfigDict, Field

from sim2human.errors import UsageError

DEFAULT_MAX_RESPONSE_BYTES = 4 * 2**20
"""4 MiB: a chat completion of a few thousand tokens is tens of kilobytes."""

MAX_TIMEOUT_S = 3600.0
"""Longest wait for one attempt or one backoff: every wait is bounded, however configured."""


class EndpointConfig(BaseModel):
    """Where and how to reach one chat model. Holds the *name* of the key's env var, never a key."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    base_url: str = Field(description="e.g. http://127.0.0.1:8080/v1")
    base_urls: tuple[str, ...] = Field(
        default=(),
        max_length=256,
        description="more servers of the same model; each conversation stays on one of "
        "base_url and these (sticky routing, for their prefix caches)",
    )
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

    def servers(self) -> tuple[str, ...]:
        """Every server of this endpoint: ``base_url``, then ``base_urls``."""
        return (self.base_url, *(u for u in self.base_urls if u != self.base_url))

    def one_server(self, url: str) -> EndpointConfig:
        """This endpoint reduced to its server ``url`` (to probe each one)."""
        return self.model_copy(update={"base_url": url, "base_urls": ()})


class FunctionCall(BaseModel):
    """One tool call as the endpoint sent it (``message.tool_calls[i].function`` in the OpenAI
    format): the arguments are the model's JSON text, unread, since what they mean is the
    caller's business (``scenarios.tools.to_call`` reads them for an agent)."""

    model_config = ConfigDict(frozen=True)

    name: str
    arguments: str = ""


class ChatResult(BaseModel):
    """One answer. ``latency_s`` covers all attempts and backoff; 0 for a cache hit.
    ``tool_calls``: the tools the model called, when the request offered some (``tools=``)."""

    model_config = ConfigDict(frozen=True)

    text: str
    prompt_tokens: int
    completion_tokens: int
    latency_s: float
    cached: bool
    finish_reason: str = ""
    attempts: int = 1
    tool_calls: tuple[FunctionCall, ...] = ()


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


# Sent when an endpoint needs no key (local servers): never fall back to OPENAI_API_KEY, which
# would hand a user's real key to whatever base_url a config names.
NO_KEY = "sk-no-key-required"


def read_key(config: EndpointConfig) -> str:
    """The endpoint's API key from the variable ``api_key_env`` names (``NO_KEY`` without one)."""
    if config.api_key_env is None:
        return NO_KEY
    key = os.environ.get(config.api_key_env)
    if not key:
        raise UsageError(
            f"endpoint {config.base_url}: environment variable {config.api_key_env} "
            "(named by api_key_env) is not set or empty"
        )
    return key
