"""ChatClient against a scripted fake endpoint: retries, timeouts, errors, cache, secrecy."""

from __future__ import annotations

import asyncio
import logging
import random
import socket
import time
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from sim2human.errors import EndpointError, UsageError
from sim2human.llm.client import ChatClient, ChatResult, EndpointConfig
from sim2human.testing import FakeOpenAI, Reply

MSG = [{"role": "user", "content": "hello"}]


def config(base_url: str, **kw: Any) -> EndpointConfig:
    defaults: dict[str, Any] = {
        "model": "fake-model",
        "timeout_s": 2.0,
        "max_retries": 2,
        "backoff_s": 0.01,
        "backoff_max_s": 0.05,
    }
    return EndpointConfig(base_url=base_url, **{**defaults, **kw})


def chat(client: ChatClient, **kw: Any) -> ChatResult:
    params: dict[str, Any] = {"temperature": 0.7, "max_tokens": 8}
    return client.chat_sync(MSG, **{**params, **kw})


def test_round_trip_and_accounting() -> None:
    with FakeOpenAI() as fake:
        client = ChatClient(config(fake.base_url))
        result = chat(client)
        assert result.text == "echo: hello"
        assert (result.prompt_tokens, result.completion_tokens) == (7, 3)
        assert result.attempts == 1 and not result.cached and result.latency_s > 0
        assert fake.seen[0].path == "/v1/chat/completions"
        assert fake.seen[0].body["model"] == "fake-model"
        assert fake.seen[0].body["max_tokens"] == 8
        stats = client.stats
        assert (stats.requests, stats.retries, stats.failures, stats.cache_hits) == (1, 0, 0, 0)
        assert (stats.prompt_tokens, stats.completion_tokens) == (7, 3)


def test_config_forbids_unknown_keys_and_holds_no_key() -> None:
    with pytest.raises(ValidationError):
        EndpointConfig(base_url="http://x/v1", model="m", api_key="sk-oops")  # type: ignore[call-arg]


@pytest.mark.parametrize("status", [500, 502, 503, 429])
def test_transient_errors_are_retried(status: int) -> None:
    with FakeOpenAI(lambda n, b: Reply(status=status, body={}) if n < 2 else Reply()) as fake:
        client = ChatClient(config(fake.base_url, max_retries=3))
        result = chat(client)
        assert result.text == "echo: hello" and result.attempts == 3
        assert client.stats.retries == 2 and len(fake.seen) == 3


def test_retries_are_bounded_then_endpoint_error() -> None:
    with FakeOpenAI(lambda n, b: Reply(status=503, body={"error": {"message": "busy"}})) as fake:
        client = ChatClient(config(fake.base_url, max_retries=2))
        with pytest.raises(EndpointError, match=r"after 3 attempt\(s\).*HTTP 503"):
            chat(client)
        assert len(fake.seen) == 3
        assert (client.stats.retries, client.stats.failures) == (2, 1)


def test_backoff_is_exponential_jittered_and_capped() -> None:
    client = ChatClient(
        config("http://127.0.0.1:9/v1", backoff_s=0.1, backoff_max_s=1.0), rng=random.Random(0)
    )
    for attempt in range(8):
        full = min(1.0, 0.1 * 2**attempt)
        for _ in range(20):
            assert 0.5 * full <= client._backoff(attempt, None) <= full
    assert client._backoff(0, 0.7) == pytest.approx(0.7)  # Retry-After beats a shorter backoff
    assert client._backoff(0, 60.0) == 1.0  # ... but never beyond the cap


def test_retry_after_header_is_honoured() -> None:
    def script(n: int, body: dict[str, Any]) -> Reply:
        return Reply(status=429, body={}, headers={"Retry-After": "0.3"}) if n == 0 else Reply()

    with FakeOpenAI(script) as fake:
        client = ChatClient(config(fake.base_url, backoff_max_s=5.0))
        start = time.perf_counter()
        chat(client)
        assert time.perf_counter() - start >= 0.3


def test_timeout_is_bounded_and_retried() -> None:
    with FakeOpenAI(lambda n, b: Reply(delay_s=3.0)) as fake:
        client = ChatClient(config(fake.base_url, timeout_s=0.3, max_retries=1))
        start = time.perf_counter()
        with pytest.raises(EndpointError, match=r"after 2 attempt\(s\): no answer within 0.3s"):
            chat(client)
        assert time.perf_counter() - start < 1.5
        assert len(fake.seen) == 2


def test_unreachable_endpoint_fails_fast() -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    client = ChatClient(config(f"http://127.0.0.1:{port}/v1", max_retries=1))
    start = time.perf_counter()
    with pytest.raises(EndpointError, match="cannot connect"):
        chat(client)
    assert time.perf_counter() - start < 2.0


def test_bad_key_is_final_and_explained(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_KEY", "sk-wrong")
    with FakeOpenAI(lambda n, b: Reply(status=401, body={"error": {"message": "bad key"}})) as fake:
        client = ChatClient(config(fake.base_url, api_key_env="FAKE_KEY"))
        with pytest.raises(EndpointError, match=r"rejected the API key \(HTTP 401\).*\$FAKE_KEY"):
            chat(client)
        assert len(fake.seen) == 1  # not retried


def test_wrong_model_name_is_final_and_explained() -> None:
    reply = Reply(status=404, body={"error": {"message": "model 'nope' not found"}})
    with FakeOpenAI(lambda n, b: reply) as fake:
        client = ChatClient(config(fake.base_url, model="nope"))
        with pytest.raises(EndpointError, match=r"model 'nope'.*404.*check the model name"):
            chat(client)
        assert len(fake.seen) == 1


@pytest.mark.parametrize(
    ("reply", "why"),
    [
        (Reply(body=b"<html>proxy error</html>", content_type="text/html"), "not JSON"),
        (Reply(body=b'{"choices": [', content_type="application/json"), "not valid JSON"),
        (Reply(body={"choices": []}), "not a chat completion"),
    ],
)
def test_malformed_responses_become_endpoint_errors(reply: Reply, why: str) -> None:
    with FakeOpenAI(lambda n, b: reply) as fake:
        client = ChatClient(config(fake.base_url, max_retries=1))
        with pytest.raises(EndpointError, match=why):
            chat(client)
        assert len(fake.seen) == 2


def test_missing_key_variable_is_a_usage_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_SUCH_KEY_VAR", raising=False)
    with pytest.raises(UsageError, match="NO_SUCH_KEY_VAR"):
        ChatClient(config("http://127.0.0.1:9/v1", api_key_env="NO_SUCH_KEY_VAR"))


def test_key_is_sent_but_never_shown(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    secret = "sk-test-SECRET-4242"
    monkeypatch.setenv("FAKE_KEY", secret)
    monkeypatch.setenv("OPENAI_LOG", "debug")
    caplog.set_level(logging.DEBUG)
    replies = {0: Reply(status=500, body={}), 2: Reply(status=401, body={})}
    with FakeOpenAI(lambda n, b: replies.get(n, Reply())) as fake:
        cfg = config(fake.base_url, api_key_env="FAKE_KEY")
        client = ChatClient(cfg, cache_path=tmp_path / "cache.sqlite")
        chat(client, temperature=0.0)
        with pytest.raises(EndpointError) as err:
            chat(client)
        assert fake.seen[0].headers["authorization"] == f"Bearer {secret}"
    shown = [repr(cfg), cfg.model_dump_json(), repr(client), str(err.value), repr(client.stats)]
    shown += [caplog.text]
    assert caplog.text  # something was logged (the retry), and it is clean
    shown += [f.read_bytes().decode("latin-1") for f in tmp_path.iterdir()]  # the cache files
    for text in shown:
        assert secret not in text


def test_no_key_configured_never_sends_openai_api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-users-real-key")
    with FakeOpenAI() as fake:
        chat(ChatClient(config(fake.base_url)))
        assert "sk-users-real-key" not in fake.seen[0].headers.get("authorization", "")


def test_cache_hit_on_repeated_deterministic_call(tmp_path: Path) -> None:
    with FakeOpenAI() as fake:
        client = ChatClient(config(fake.base_url), cache_path=tmp_path / "cache.sqlite")
        first = chat(client, temperature=0.0)
        second = chat(client, temperature=0.0)
        assert not first.cached and second.cached and second.text == first.text
        assert len(fake.seen) == 1
        seeded = [chat(client, temperature=0.9, seed=7) for _ in range(2)]
        assert [r.cached for r in seeded] == [False, True] and len(fake.seen) == 2
        assert client.stats.cache_hits == 2 and client.stats.requests == 4
        # The cache is persistent: a new client on the same file hits it.
        again = ChatClient(config(fake.base_url), cache_path=tmp_path / "cache.sqlite")
        assert chat(again, temperature=0.0).cached and len(fake.seen) == 2
        # ... and keyed by the sampling parameters.
        assert not chat(again, temperature=0.0, max_tokens=9).cached


def test_no_caching_when_sampling(tmp_path: Path) -> None:
    with FakeOpenAI() as fake:
        client = ChatClient(config(fake.base_url), cache_path=tmp_path / "cache.sqlite")
        results = [chat(client, temperature=0.7) for _ in range(3)]
        assert not any(r.cached for r in results) and len(fake.seen) == 3


def test_concurrency_is_bounded() -> None:
    async def run(client: ChatClient) -> list[ChatResult]:
        async with client:
            return await asyncio.gather(
                *(client.chat(MSG, temperature=0.7, max_tokens=4) for _ in range(10))
            )

    with FakeOpenAI(lambda n, b: Reply(delay_s=0.1)) as fake:
        results = asyncio.run(run(ChatClient(config(fake.base_url, max_concurrency=3))))
        assert len(results) == 10 and fake.max_in_flight == 3


def _burst(clients: list[ChatClient], n: int) -> None:
    """``n`` requests at once, spread over ``clients``, on one event loop."""

    async def all_at_once() -> None:
        params: dict[str, Any] = {"temperature": 0.7, "max_tokens": 8}
        await asyncio.gather(*(clients[i % len(clients)].chat(MSG, **params) for i in range(n)))
        for c in clients:
            await c.aclose()

    asyncio.run(all_at_once())


def test_one_server_s_cap_holds_across_every_client_of_it() -> None:
    """Two endpoints naming one server (an LLM agent and its LLM users, say), capped at 3 and
    5: the server never holds more than 3 requests from this process, and does hold 3."""
    with FakeOpenAI(lambda n, b: Reply(delay_s=0.05)) as fake:
        clients = [
            ChatClient(config(fake.base_url, max_concurrency=5)),
            ChatClient(config(fake.base_url + "/", model="other", max_concurrency=3)),
        ]
        _burst(clients, 24)
        assert len(fake.seen) == 24 and fake.max_in_flight == 3


def test_other_servers_keep_their_own_caps() -> None:
    with (
        FakeOpenAI(lambda n, b: Reply(delay_s=0.05)) as a,
        FakeOpenAI(lambda n, b: Reply(delay_s=0.05)) as b,
    ):
        clients = [
            ChatClient(config(a.base_url, max_concurrency=2)),
            ChatClient(config(b.base_url, max_concurrency=4)),
        ]
        _burst(clients, 16)
        assert (a.max_in_flight, b.max_in_flight) == (2, 4)
