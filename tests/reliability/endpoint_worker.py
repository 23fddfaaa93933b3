"""A worker job for the spawned-worker property (``test_spawned_property``): one endpoint body
through the client, its cache and an episode line, in the process it runs in."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import openai

from sim2human.llm.client import ChatClient, EndpointConfig
from sim2human.types import Turn

MSG = [{"role": "user", "content": "hello"}]


def complete(body: bytes, cache: str) -> tuple[str, int, int, str, bool]:
    """(text, prompt tokens, completion tokens, the agent turn's episode JSON, whether the
    cached answer equals the fresh one) for an endpoint that answers ``body``."""
    httpx = sys.modules[openai.DefaultAsyncHttpxClient.__mro__[1].__module__.partition(".")[0]]

    def handler(request: Any) -> Any:
        return httpx.Response(200, headers={"content-type": "application/json"}, content=body)

    cfg = EndpointConfig(base_url="http://fake/v1", model="m", max_retries=0)
    client = ChatClient(cfg, cache_path=Path(cache), transport=httpx.MockTransport(handler))
    first = client.chat_sync(MSG, temperature=0, max_tokens=64)
    again = client.chat_sync(MSG, temperature=0, max_tokens=64)
    line = Turn(speaker="agent", text=first.text).model_dump_json()
    same = again.cached and again.text == first.text
    return first.text, first.prompt_tokens, first.completion_tokens, line, same
