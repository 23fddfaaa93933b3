"""An endpoint's text and counts are made valid once, where a completion is parsed
(``llm.responses.parse_completion`` through ``sim2human.untrusted``), so everything that keeps
them takes them: the LLM cache (written, then read back), an episode line, the call page's
database. Before: a lone surrogate (the JSON escape ``"\\ud800"``) raised ``UnicodeEncodeError``
in the cache's write, a ``usage`` of 10**30 ``OverflowError``, a negative one was summed, and a
NUL came back from the cache as the end of the text.

The strategy draws what ``st.text()`` never does: surrogates (paired and lone) among any other
characters, and token counts far outside any machine integer, on a deterministic request
(temperature 0), so the cache write is reached.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import openai
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from sim2human.llm.client import ChatClient, EndpointConfig
from sim2human.llm.responses import parse_completion
from sim2human.store.call_records import StoredTurn
from sim2human.store.calls import HumanStore
from sim2human.testing import completion
from sim2human.types import Turn
from sim2human.untrusted import MAX_COUNT, bounded_count, valid_text

HTTPX = sys.modules[openai.DefaultAsyncHttpxClient.__mro__[1].__module__.partition(".")[0]]
MSG = [{"role": "user", "content": "hello"}]

surrogates = st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF, exclude_categories=())
texts = st.text(st.one_of(st.characters(), surrogates), max_size=40)
counts = st.one_of(st.integers(-(2**70), 2**70), st.sampled_from([10**30, -190, 2**31, 2**31 - 1]))


def _body(text: str, prompt: int, completion_tokens: int) -> bytes:
    """The JSON an endpoint sends: ``json.dumps`` escapes a lone surrogate as ``\\udXXX``."""
    return json.dumps(completion(text, prompt, completion_tokens)).encode()


def _client(body: bytes, cache: Path) -> ChatClient:
    def handler(request: Any) -> Any:
        return HTTPX.Response(200, headers={"content-type": "application/json"}, content=body)

    cfg = EndpointConfig(base_url="http://fake/v1", model="m", max_retries=0)
    return ChatClient(cfg, cache_path=cache, transport=HTTPX.MockTransport(handler))


def _encodes(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(text=texts, prompt=counts, done=counts)
@example(text="a\x00b", prompt=1, done=1)  # SQLite's substr ended the cached text at the NUL
def test_any_completion_is_cached_stored_and_read_back_valid(
    tmp_path_factory: pytest.TempPathFactory, text: str, prompt: int, done: int
) -> None:
    folder = tmp_path_factory.mktemp("endpoint")
    client = _client(_body(text, prompt, done), folder / "cache.sqlite")
    first = client.chat_sync(MSG, temperature=0, max_tokens=64)
    again = client.chat_sync(MSG, temperature=0, max_tokens=64)
    assert again.cached and again.text == first.text
    assert (again.prompt_tokens, again.completion_tokens) == (
        first.prompt_tokens,
        first.completion_tokens,
    )
    assert _encodes(first.text)
    assert 0 <= first.prompt_tokens < MAX_COUNT and 0 <= first.completion_tokens < MAX_COUNT
    assert client.stats.prompt_tokens >= 0
    kept = _encodes(text) and "\x00" not in text
    if kept and len(text) <= 64 * client.config.max_chars_per_token:
        assert first.text == text  # a valid text is kept as it came
    # an episode line and the call page's database take it as it is
    line = Turn(speaker="agent", text=first.text).model_dump_json()
    assert Turn.model_validate_json(line).text == first.text
    store = HumanStore(folder / "calls.sqlite")
    sid, _ = store.create(
        run="r", scenario="intake", agent="llm", agent_seed=0, mode="self", seed=0,
        max_turns=8, profile=None,
    )  # fmt: skip
    assert store.add_turns(sid, 0, [StoredTurn("agent", first.text)])
    session = store.by_id(sid)
    assert session is not None and session.turns[0].text == first.text
    store.close()


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("fine \U0001f600", "fine \U0001f600"),
        ("cut \ud83d", "cut \ufffd"),
        ("\udfff and \ud800\ud800", "\ufffd and \ufffd\ufffd"),
        ("\ud83d\ude00", "\U0001f600"),  # a pair built without JSON's joining becomes one
        ("a\x00b", "a\ufffdb"),
    ],
)
def test_valid_text_replaces_only_what_utf8_cannot_hold(text: str, shown: str) -> None:
    assert valid_text(text) == shown


def test_counts_are_clamped_to_a_signed_32_bit_range() -> None:
    assert [bounded_count(n) for n in (-190, 0, 7, 10**30)] == [0, 0, 7, MAX_COUNT - 1]


def test_the_parse_of_a_completion_is_where_the_policy_applies() -> None:
    """One place: the parse itself (cache, episodes, call page and logs all come after it)."""
    response = openai.types.chat.ChatCompletion.model_validate(completion("a\ud800", -5, 10**30))
    assert parse_completion(response, [])[:4] == ("a\ufffd", 0, MAX_COUNT - 1, "stop")
