"""What an endpoint sends back is bounded before anything keeps it: the body's bytes (declared,
chunked, error bodies too), the completion's characters (fresh and from the cache), the time of
one request over all its attempts; and whatever the body holds, only ``EndpointError`` comes out
and the key is never in it."""

from __future__ import annotations

import gzip
import json
import os
import socket
import sqlite3
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any
from unittest import mock

import openai
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from sim2human.errors import EndpointError
from sim2human.llm.cache import MAX_TEXT_CHARS, ResponseCache
from sim2human.llm.client import ChatClient, EndpointConfig
from sim2human.testing import FakeOpenAI, Reply, completion

MSG = [{"role": "user", "content": "hello"}]
KEY = "sk-test-BOUNDS-0123456789abcdef"
PLAIN_KEY = "plainKEYvalue42xyz"  # a key of no known shape: only its exact value gives it away


def config(base_url: str, **kw: Any) -> EndpointConfig:
    base: dict[str, Any] = {"model": "m", "timeout_s": 5.0, "max_retries": 2, "backoff_s": 0.01}
    return EndpointConfig(base_url=base_url, **{**base, **kw})


def test_a_declared_oversized_body_fails_at_once_and_is_not_retried() -> None:
    with FakeOpenAI(lambda n, b: Reply(body=completion("A" * 10_000_000))) as fake:
        client = ChatClient(config(fake.base_url))
        start = time.perf_counter()
        with pytest.raises(EndpointError, match=r"over max_response_bytes=4194304"):
            client.chat_sync(MSG, temperature=0, max_tokens=64)
        assert time.perf_counter() - start < 5 and len(fake.seen) == 1
        assert client.stats.failures == 1
        assert fake.seen[0].headers["accept-encoding"] == "identity"


def test_an_oversized_error_body_is_cut_too() -> None:
    big = {"error": {"message": "x" * 2_000_000}}
    with FakeOpenAI(lambda n, b: Reply(status=500, body=big)) as fake:
        client = ChatClient(config(fake.base_url, max_response_bytes=100_000))
        with pytest.raises(EndpointError, match="max_response_bytes=100000"):
            client.chat_sync(MSG, temperature=0, max_tokens=8)
        assert len(fake.seen) == 1


@pytest.fixture()
def chunked_server() -> Iterator[str]:
    """A raw HTTP/1.1 server answering one chunked body of 64 KiB chunks without end."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = sock.accept()
            except OSError:
                return
            with conn:
                conn.recv(65536)
                head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                conn.sendall(head + b"Transfer-Encoding: chunked\r\n\r\n")
                chunk = b"A" * 65536
                try:
                    for _ in range(2000):  # 128 MiB if nobody stops reading
                        conn.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                except OSError:
                    pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    stop.set()
    sock.close()


def test_a_chunked_body_is_cut_while_it_is_read(chunked_server: str) -> None:
    client = ChatClient(config(chunked_server, max_response_bytes=1_000_000))
    start = time.perf_counter()
    with pytest.raises(EndpointError, match="over max_response_bytes=1000000"):
        client.chat_sync(MSG, temperature=0, max_tokens=8)
    assert time.perf_counter() - start < 5


def test_a_compressed_body_is_refused() -> None:
    body = gzip.compress(json.dumps(completion("hi")).encode())
    reply = Reply(body=body, headers={"Content-Encoding": "gzip"})
    with (
        FakeOpenAI(lambda n, b: reply) as fake,
        pytest.raises(EndpointError, match="'gzip'-compressed body"),
    ):
        ChatClient(config(fake.base_url)).chat_sync(MSG, temperature=0, max_tokens=8)


def test_an_over_long_completion_is_cut_marked_and_cached_cut(tmp_path: Path) -> None:
    cache = tmp_path / "cache.sqlite"
    with FakeOpenAI(lambda n, b: Reply(body=completion("B" * 5000))) as fake:
        client = ChatClient(config(fake.base_url), cache_path=cache)
        first = client.chat_sync(MSG, temperature=0, max_tokens=8)
        again = client.chat_sync(MSG, temperature=0, max_tokens=8)
    assert len(first.text) == 8 * 32 and first.finish_reason == "length"
    assert again.cached and again.text == first.text and again.finish_reason == "length"
    with sqlite3.connect(cache) as db:
        assert db.execute("SELECT max(length(text)) FROM responses").fetchone() == (256,)


def test_a_normal_completion_is_untouched(tmp_path: Path) -> None:
    with FakeOpenAI() as fake:
        result = ChatClient(config(fake.base_url)).chat_sync(MSG, temperature=0, max_tokens=8)
    assert result.text == "echo: hello" and result.finish_reason == "stop"


def test_an_oversized_row_of_an_old_cache_is_cut_by_sqlite(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    cache = ResponseCache(path)
    with sqlite3.connect(path) as db:  # as an older version, with no cap, left it
        db.execute("INSERT INTO responses VALUES ('k', ?, 1, 2, 'stop', 0)", ("C" * 3_000_000,))
    assert cache.get("k", max_chars=100) == ("C" * 100, 1, 2, "length", ())
    assert cache.get("k", max_chars=5_000_000) == ("C" * 3_000_000, 1, 2, "stop", ())
    with pytest.raises(ValueError, match="refusing to cache"):
        cache.put("k2", "D" * (MAX_TEXT_CHARS + 1), 0, 0, "stop")
    assert cache.get("k2") is None
    cache.close()


def test_a_deadline_bounds_all_attempts() -> None:
    with FakeOpenAI(lambda n, b: Reply(delay_s=3.0)) as fake:
        client = ChatClient(config(fake.base_url, timeout_s=2.0, max_retries=4, deadline_s=0.5))
        start = time.perf_counter()
        with pytest.raises(EndpointError, match=r"no answer within 0.5s over all attempts"):
            client.chat_sync(MSG, temperature=0, max_tokens=8)
        assert time.perf_counter() - start < 1.5
        assert client.stats.failures == 1 and len(fake.seen) == 1


def test_a_deadline_lets_quick_retries_through() -> None:
    script = {0: Reply(status=503, body={}), 1: Reply(status=503, body={})}
    with FakeOpenAI(lambda n, b: script.get(n, Reply())) as fake:
        client = ChatClient(config(fake.base_url, deadline_s=5.0))
        assert client.chat_sync(MSG, temperature=0, max_tokens=8).attempts == 3


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("deadline_s", float("inf")),
        ("deadline_s", float("nan")),
        ("deadline_s", 0),
        ("max_response_bytes", 10),
        ("max_response_bytes", 2**40),
        ("max_chars_per_token", 0),
    ],
)
def test_the_new_bounds_are_validated(field: str, value: float) -> None:
    with pytest.raises(ValidationError, match=field):
        config("http://x/v1", **{field: value})


# ------------------------------------------------------------------ any body, through a fake
# transport: the client's own parsing, caps and redaction, with no network in between.

HTTPX = sys.modules[openai.DefaultAsyncHttpxClient.__mro__[1].__module__.partition(".")[0]]


class Chunks(HTTPX.AsyncByteStream):  # type: ignore[misc, name-defined]
    """A body that arrives in pieces, with no Content-Length (as a network stream would)."""

    def __init__(self, body: bytes, size: int) -> None:
        self.body, self.size = body, max(1, size)

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for i in range(0, len(self.body), self.size):
            yield self.body[i : i + self.size]


def _echoes(auth: str) -> st.SearchStrategy[str]:
    return st.sampled_from(
        [
            f"you sent {auth}",
            f"Authorization: {auth}",
            auth.removeprefix("Bearer "),
            json.dumps({"headers": {"Authorization": auth}}),
            "x" * 300 + auth,  # past where an error message stops quoting
        ]
    )


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=30),
    lambda kids: (
        st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=8), kids, max_size=4)
    ),
    max_leaves=12,
)


@st.composite
def bodies(draw: st.DrawFn, auth: str) -> tuple[int, str, bytes, int]:
    """(status, content type, body, chunk size): completions of any size and shape, error
    bodies that echo the key, junk."""
    status = draw(st.sampled_from([200, 200, 200, 400, 401, 404, 409, 422, 429, 500, 503]))
    kind = draw(st.sampled_from(["completion", "shape", "error", "junk", "huge"]))
    if kind == "completion":
        text = draw(st.text(max_size=50)) + draw(_echoes(auth)) * draw(st.integers(1, 40))
        doc: Any = completion(text)
        doc["usage"] = draw(st.one_of(st.just(doc["usage"]), json_values))
        payload = json.dumps(doc).encode()
    elif kind == "shape":
        payload = json.dumps({"choices": draw(json_values), "usage": draw(json_values)}).encode()
    elif kind == "error":
        payload = json.dumps({"error": {"message": draw(_echoes(auth))}}).encode()
    elif kind == "junk":
        payload = draw(st.binary(max_size=300)) + draw(_echoes(auth)).encode()
    else:
        payload = json.dumps(completion("Z" * draw(st.integers(40_000, 300_000)))).encode()
    ctype = draw(st.sampled_from(["application/json", "text/html", "text/plain"]))
    return status, ctype, payload, draw(st.sampled_from([0, 1, 7, 4096]))


@pytest.mark.parametrize("key", [KEY, PLAIN_KEY])
@settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_any_body_gives_a_bounded_text_or_an_endpoint_error_without_the_key(
    key: str, data: st.DataObject
) -> None:
    status, ctype, payload, chunk = data.draw(bodies(f"Bearer {key}"))

    def handler(request: Any) -> Any:
        assert request.headers["authorization"] == f"Bearer {key}"
        headers = {"content-type": ctype}
        if chunk == 0:
            return HTTPX.Response(status, headers=headers, content=payload)
        return HTTPX.Response(status, headers=headers, stream=Chunks(payload, chunk))

    max_tokens = data.draw(st.integers(1, 64))
    cfg = config("http://fake/v1", api_key_env="S2H_BOUNDS_KEY", max_retries=0)
    cfg = cfg.model_copy(update={"max_response_bytes": 100_000})
    with mock.patch.dict(os.environ, {"S2H_BOUNDS_KEY": key}):
        client = ChatClient(cfg, transport=HTTPX.MockTransport(handler))
        try:
            result = client.chat_sync(MSG, temperature=0.5, max_tokens=max_tokens)
        except EndpointError as err:
            assert key not in str(err), str(err)
            assert len(str(err)) < 1000
        else:
            assert len(result.text) <= max_tokens * cfg.max_chars_per_token
            assert key not in result.text


def test_the_fake_transport_reaches_the_client() -> None:
    """The property test above is only worth something if its bodies are what the client reads."""

    def handler(request: Any) -> Any:
        return HTTPX.Response(200, json=completion("from the fake transport"))

    client = ChatClient(config("http://fake/v1"), transport=HTTPX.MockTransport(handler))
    assert client.chat_sync(MSG, temperature=0, max_tokens=8).text == "from the fake transport"
