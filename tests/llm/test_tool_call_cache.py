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


def test_a_cache_file_from_before_tool_calls_gets_the_column(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as db:  # the schema before tool calls were cached
        db.execute(
            "CREATE TABLE responses (key TEXT PRIMARY KEY, text TEXT NOT NULL, prompt_tokens "
            "INTEGER NOT NULL, completion_tokens INTEGER NOT NULL, finish_reason TEXT NOT NULL, "
            "created REAL NOT NULL)"
        )
        db.execute("INSERT INTO responses VALUES ('k', 'hi', 1, 2, 'stop', 0)")
    db.close()
    cache = ResponseCache(path)
    assert cache.get("k") == ("hi", 1, 2, "stop", ())
    cache.put("k2", "", 1, 1, "tool_calls", [FunctionCall(name="submit")])
    assert cache.get("k2") == ("", 1, 1, "tool_calls", (FunctionCall(name="submit"),))
    cache.close()
