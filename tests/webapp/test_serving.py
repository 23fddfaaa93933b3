"""The real server (uvicorn with ``serving.config``): slow and oversized clients are cut off,
and a client cannot pick its own address with ``X-Forwarded-For``."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
import uvicorn
from webapp_helpers import ADMIN

from sim2human.store.calls import HumanStore
from sim2human.webapp import serving
from sim2human.webapp.agents import AgentPool
from sim2human.webapp.app import Limits, create_app
from sim2human.webapp.calls import Calls


@contextmanager
def live(
    run_dir: Path, db: Path, trusted: Sequence[str] = (), deadline_s: float | None = 0.5
) -> Iterator[tuple[str, int]]:
    """A real server on a free port; ``deadline_s`` None serves with ``human serve``'s own."""
    calls = Calls(HumanStore(db), AgentPool.from_run(run_dir, ["scripted"]))
    app = create_app(calls, Limits(starts_per_client=2), admin_token=ADMIN)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    settings = serving.config(app, "127.0.0.1", port, trusted)
    if deadline_s is not None:
        settings = serving.config(app, "127.0.0.1", port, trusted, deadline_s)
    server = uvicorn.Server(settings)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        assert time.monotonic() < deadline, "server did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}", port
    finally:
        server.should_exit = True
        thread.join(timeout=30)


def closed_by_server(sock: socket.socket, within: float) -> bool:
    sock.settimeout(within)
    try:
        while sock.recv(4096):
            pass
    except TimeoutError:
        return False
    except ConnectionResetError:
        return True
    return True


def test_half_open_connections_are_closed(run_dir: Path, db: Path) -> None:
    with live(run_dir, db) as (url, port):
        slow = []
        for _ in range(50):  # a slowloris: headers that never end
            s = socket.create_connection(("127.0.0.1", port))
            s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nX-a: ")
            slow.append(s)
        assert httpx.get(url + "/healthz", timeout=10).text == "ok"  # others still served
        kept = socket.create_connection(("127.0.0.1", port))  # a kept-alive connection...
        kept.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        assert b"200 OK" in kept.recv(4096)
        kept.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")  # ...then a request never ending
        try:
            # the deadline is 0.5 s; 20 s is only a bound for a loaded machine
            assert all(closed_by_server(s, 20.0) for s in [*slow, kept])
        finally:
            for s in [*slow, kept]:
                s.close()


@pytest.mark.slow
def test_half_open_connections_are_closed_with_the_served_settings(run_dir: Path, db: Path) -> None:
    """The audit's check with ``human serve``'s own deadline: connections holding half a request
    head, half a body, or nothing at all were all still open after 12 s (the deadline was 15 s);
    now each is closed by the server within ``REQUEST_DEADLINE_S`` (10 s)."""
    assert serving.KEEP_ALIVE_S <= 5  # a finished request's connection: closed after 5 s idle
    with live(run_dir, db, deadline_s=None) as (url, port):
        opened = time.monotonic()
        held = []
        for first in (
            b"GET / HTTP/1.1\r\nHost: x\r\nX-a: ",  # half a head
            # half a body
            b"POST /start HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nconsent=",
            b"",  # connected, never a byte
        ):
            for _ in range(10):
                s = socket.create_connection(("127.0.0.1", port))
                if first:
                    s.sendall(first)
                held.append(s)
        try:
            assert all(closed_by_server(s, 12.5 - (time.monotonic() - opened)) for s in held)
            assert httpx.get(url + "/healthz", timeout=10).text == "ok"
        finally:
            for s in held:
                s.close()


def test_huge_headers_are_refused(run_dir: Path, db: Path) -> None:
    with live(run_dir, db) as (url, _):
        try:
            r = httpx.get(url + "/", headers={"X-Pad": "a" * 100_000}, timeout=10)
        except (httpx.ReadError, httpx.WriteError, httpx.RemoteProtocolError):
            pass  # the server closed the connection mid-head (seen under load): refused too
        else:
            assert r.status_code in (400, 431)  # 400: h11 refused the head before it was whole
        assert httpx.get(url + "/", timeout=10).status_code == 200  # and it still serves


def starts(url: str, forwarded: Sequence[str]) -> list[int]:
    with httpx.Client(base_url=url, timeout=10) as c:
        return [
            c.post("/start", data={"consent": "yes"}, headers={"X-Forwarded-For": f}).status_code
            for f in forwarded
        ]


def test_forwarded_for_is_trusted_only_from_a_named_proxy(run_dir: Path, db: Path) -> None:
    spoofed = [f"203.0.113.{i}" for i in range(5)]
    with live(run_dir, db) as (url, _):
        assert starts(url, spoofed) == [303, 303, 429, 429, 429]  # one client, whatever it says
    assert not serving.config(object(), "127.0.0.1", 1).proxy_headers
    with live(run_dir, db.with_name("other.sqlite"), trusted=["127.0.0.1"]) as (url, _):
        assert starts(url, spoofed) == [303] * 5  # behind a proxy: the client it names
        assert starts(url, ["203.0.113.1"] * 2) == [303, 429]
