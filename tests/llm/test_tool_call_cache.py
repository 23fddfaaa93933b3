"""A request that offers tools: its calls come back parsed, are cached with the text, and the
tools are part of the cache key (an answer with tools is not the answer without)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from sim2human.llm.cache import ResponseCache
from sim2human.llm.client import ChatClient, EndpointConfig, FunctionCall
from sim2human.scenarios.catalog import get_scenario
from sim2human.scenarios.tools import tool_specs
from sim2human.testing import FakeOpenAI, Reply, completion
from sim2human.types import ToolCall

MSG = [{"role": "user", "content": "hello"}]
TOOLS = tool_specs(get_scenario("intake"))
CALL = ToolCall(name="record", arguments={"field": "severity", "value": "7"})


def test_tool_calls_are_parsed_cached_and_keyed_on_the_tools(tmp_path: Path) -> None:
    def answer(n: int, body: dict[str, object]) -> Reply:
        return Reply(body=completion(None, tool_calls=[CALL]) if "tools" in body else None)

    with FakeOpenAI(answer) as fake:
        config = EndpointConfig(base_url=fake.base_url, model="fake", max_retries=0)
        client = ChatClient(config, cache_path=tmp_path / "cache.sqlite")
        first = client.chat_sync(MSG, temperature=0, max_tokens=16, tools=TOOLS)
        again = client.chat_sync(MSG, temperature=0, max_tokens=16, tools=TOOLS)
        plain = client.chat_sync(MSG, temperature=0, max_tokens=16)
        sent = [s.body for s in fake.seen]
    expected = (FunctionCall(name="record", arguments='{"field": "severity", "value": "7"}'),)
    assert first.text == "" and first.tool_calls == expected and not first.cached
    assert again.cached and again.tool_calls == expected and again.text == ""
    assert not plain.cached and plain.tool_calls == () and plain.text == "echo: hello"
    assert len(sent) == 2 and sent[0]["tools"] == TOOLS and "tools" not in sent[1]


def test_the_cache_file_keeps_the_row_shape_older_versions_write(tmp_path: Path) -> None:
    """Every version on a machine shares one cache file, and older ones insert six values per
    row: tool calls live in a table of their own, and a plain answer replaces stale calls."""
    path = tmp_path / "shared.sqlite"
    cache = ResponseCache(path)
    cache.put("k", "", 1, 1, "tool_calls", [FunctionCall(name="submit")])
    with sqlite3.connect(path) as db:  # as an older version writes (and rewrites) a row
        db.execute("INSERT OR REPLACE INTO responses VALUES ('old', 'hi', 1, 2, 'stop', 0)")
    db.close()
    assert cache.get("k") == ("", 1, 1, "tool_calls", (FunctionCall(name="submit"),))
    assert cache.get("old") == ("hi", 1, 2, "stop", ())
    cache.put("k", "plain", 1, 1, "stop")
    assert cache.get("k") == ("plain", 1, 1, "stop", ())
    cache.close()
