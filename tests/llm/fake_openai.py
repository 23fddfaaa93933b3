"""A tiny scriptable OpenAI-compatible server on 127.0.0.1, run in a background thread."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


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


def completion(text: str, prompt_tokens: int = 7, completion_tokens: int = 3) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": "fake-model",
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": text},
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
                    self._send(reply, body)
                finally:
                    with fake._lock:
                        fake.in_flight -= 1

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
