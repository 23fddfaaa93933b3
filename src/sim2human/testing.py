"""Test doubles for testing your own pieces the way sim2human tests its own.

- ``FakeOpenAI``: a tiny scriptable OpenAI-compatible server on 127.0.0.1, in a background
  thread (``script(n, body)`` picks the reply to the n-th request: errors, delays, bad JSON,
  tool calls: ``completion(text, tool_calls=[...])``).
- ``TinyScenario``: the catalog's three-field pizza order (``scenarios.pizza.scenario``), for
  tests that need a scenario but not intake's vocabulary.
- ``ScriptedUser``: a ``Simulator`` that answers exactly what it is asked, plainly, and is
  satisfied by what got across: an agent that fails against it fails the task, not a user.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np

from sim2human.scenarios.pizza.scenario import PIZZA, PIZZA_VOICE
from sim2human.scenarios.pizza.scenario import PizzaScenario as TinyScenario
from sim2human.simulators.base import SimulatorSpec, Traits, UserTurn
from sim2human.types import Episode, Profile, Record, ToolCall

__all__ = [
    "PIZZA",
    "PIZZA_VOICE",
    "FakeOpenAI",
    "Reply",
    "ScriptedUser",
    "Seen",
    "TinyScenario",
    "completion",
    "echo_text",
    "scripted_spec",
]


@dataclass
class Reply:
    status: int = 200
    body: bytes | dict[str, Any] | None = None  # None: a normal completion echoing the prompt
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    content_type: str = "application/json"


@dataclass
class Seen:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


Script = Callable[[int, dict[str, Any]], Reply]


def completion(
    text: str | None,
    prompt_tokens: int = 7,
    completion_tokens: int = 3,
    tool_calls: Sequence[ToolCall] = (),
) -> dict[str, Any]:
    """A chat completion saying ``text`` (None: no content, as OpenAI sends a turn of tool calls
    alone) and calling ``tool_calls`` in the OpenAI format (``message.tool_calls``)."""
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if tool_calls:
        message["tool_calls"] = [
            {
                "id": f"call_fake_{i}",
                "type": "function",
                "function": {"name": c.name, "arguments": json.dumps(c.arguments)},
            }
            for i, c in enumerate(tool_calls)
        ]
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": "fake-model",
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls" if tool_calls else "stop",
                "message": message,
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def echo_text(body: dict[str, Any]) -> str:
    return "echo: " + str(body["messages"][-1]["content"])


class FakeOpenAI:
    """``with FakeOpenAI(script) as fake: fake.base_url``; ``script(n, body)`` picks the reply
    to the n-th request (0-based); ``fake.seen`` records every request."""

    def __init__(self, script: Script | None = None) -> None:
        self.script: Script = script or (lambda n, body: Reply())
        self.seen: list[Seen] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def __enter__(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                with fake._lock:
                    n = len(fake.seen)
                    fake.seen.append(
                        Seen(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                    )
                    fake.in_flight += 1
                    fake.max_in_flight = max(fake.max_in_flight, fake.in_flight)
                try:
                    reply = fake.script(n, body)
                    if reply.delay_s:
                        time.sleep(reply.delay_s)
                finally:
                    # before the reply leaves: a client holding it may send its next request
                    # before this thread runs again (a loaded machine counted one too many)
                    with fake._lock:
                        fake.in_flight -= 1
                self._send(reply, body)

            def _send(self, reply: Reply, body: dict[str, Any]) -> None:
                if reply.body is None:
                    payload = json.dumps(completion(echo_text(body))).encode()
                elif isinstance(reply.body, dict):
                    payload = json.dumps(reply.body).encode()
                else:
                    payload = reply.body
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", reply.content_type)
                    self.send_header("Content-Length", str(len(payload)))
                    for k, v in reply.headers.items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout tests)

        return Handler


# ---------------------------------------------------------------------------- scripted user


def scripted_spec(seed: int = 0, family: str = "scripted") -> SimulatorSpec:
    """A spec for ``ScriptedUser`` (its traits are the defaults: it has no quirks)."""
    return SimulatorSpec(id=f"{family}-{seed}", family=family, traits=Traits(), seed=seed)


class ScriptedUser:
    """Answers each field it is asked with its true value, plainly; hangs up on a close.
    Satisfaction: the share of fields the scenario reads right from its own answers."""

    def __init__(self, scenario: Any, spec: SimulatorSpec | None = None) -> None:
        self.scenario = scenario
        self.spec = spec or scripted_spec()
        self.profile: Profile = {}
        self.heard: Record = {}

    def start(self, profile: Profile, rng: np.random.Generator) -> UserTurn:
        self.profile, self.heard = profile, self.scenario.empty_record()
        return UserTurn(text="Hi.")

    def reply(self, agent_text: str) -> UserTurn:
        intent = self.scenario.interpret(agent_text)
        if intent.close:
            return UserTurn(text="Bye.", done=True)
        if intent.confirm:
            return UserTurn(text="Yes.")
        rng = np.random.default_rng(0)
        parts = [self.scenario.say(f, self.profile[f], 0.0, rng) for f in intent.asks]
        text = " ".join(parts) or "Okay."
        for f in intent.asks:
            self.heard = self.scenario.extract(text, self.heard, f)
        return UserTurn(text=text)

    def satisfaction(self) -> float:
        fields = self.scenario.fields
        return sum(self.heard[f] == self.profile[f] for f in fields) / len(fields)

    def judge(self, episode: Episode) -> float:
        fields = self.scenario.fields
        return sum(episode.record[f] == episode.profile[f] for f in fields) / len(fields)
