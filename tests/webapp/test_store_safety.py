"""The call database: private on disk, the first rating stands across servers, a full disk is
a plain 503 (nothing lost), a garbage database or checkpoint is one line before any work."""

from __future__ import annotations

import asyncio
import logging
import os
import sqlite3
import stat
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from webapp_helpers import ADMIN, FakeClock, answer, opening

from sim2human.store.call_records import Session
from sim2human.store.calls import HumanStore, StaleSession
from sim2human.webapp.agents import AgentPool
from sim2human.webapp.app import create_app
from sim2human.webapp.calls import Calls


@pytest.fixture()
def umask_022() -> Iterator[None]:
    old = os.umask(0o022)  # the usual default, under which the file used to be 0644
    yield
    os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_database_is_created_owner_only(db: Path, umask_022: None) -> None:
    store = HumanStore(db)
    store.create(
        run="r", scenario="s", agent="a", agent_seed=0, mode="card", seed=1, max_turns=4, profile={}
    )
    files = [db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")]
    assert all(f.exists() for f in files)
    assert [mode(f) for f in files] == [0o600] * 3
    store.close()


def rated_call(calls: Calls) -> str:
    """A finished card call waiting for its rating; returns its token."""
    _, token = calls.start("card")
    s = calls.store.by_token(token)
    assert s is not None and s.profile is not None
    calls.begin(s)
    text = opening(s.profile)
    while (s := calls.store.by_token(token)) is not None and s.status == "calling":
        asyncio.run(calls.say(s, len(s.turns), text))
        s = calls.store.by_token(token)
        assert s is not None and s.profile is not None
        text = answer(s.profile, s.turns[-1].field)
    assert s is not None and s.status == "rating"
    return token


def two_servers(run_dir: Path, db: Path) -> tuple[Calls, Calls]:
    pool = AgentPool.from_run(run_dir, ["scripted"])
    return Calls(HumanStore(db), pool), Calls(HumanStore(db), pool)  # two connections, one file


def test_the_first_rating_stands_across_servers(run_dir: Path, db: Path) -> None:
    a, b = two_servers(run_dir, db)
    token = rated_call(a)
    seen_a, seen_b = a.store.by_token(token), b.store.by_token(token)
    assert seen_a is not None and seen_b is not None  # both servers read "rating"
    a.rate(seen_a, 5, "yes", "first")
    with pytest.raises(StaleSession, match="already 'done'"):
        b.rate(seen_b, 1, "no", "second")
    s = b.store.by_token(token)
    assert s is not None and s.rating == 5 and s.comment == "first"
    assert s.episode is not None and s.episode.proxy == 1.0


def test_racing_ratings_through_the_pages(
    run_dir: Path, db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Server B read the session before A's rating landed: its post is told "already rated"
    (sent to the finished call's page), and A's rating is what the file keeps."""
    a, b = two_servers(run_dir, db)
    token = rated_call(a)
    stale = b.store.by_token(token)
    page_a = TestClient(create_app(a, admin_token=ADMIN, clock=FakeClock()))
    page_b = TestClient(create_app(b, admin_token=ADMIN, clock=FakeClock()))
    rating = {"rating": "4", "details": "yes", "comment": "A"}
    assert (
        page_a.post(f"/call/{token}/rate", data=rating, follow_redirects=False).status_code == 303
    )

    def before_a_landed(t: str) -> Session | None:
        return stale if t == token else None

    monkeypatch.setattr(b.store, "by_token", before_a_landed)
    r = page_b.post(
        f"/call/{token}/rate", data={"rating": "1", "details": "no"}, follow_redirects=False
    )
    assert r.status_code == 303 and r.headers["location"] == f"/call/{token}"
    s = a.store.by_token(token)
    assert s is not None and s.rating == 4 and s.comment == "A"


def test_threads_racing_on_two_connections_one_wins(run_dir: Path, db: Path) -> None:
    a, b = two_servers(run_dir, db)

    def rate(
        i: int, calls: Calls, s: Session | None, gate: threading.Barrier, lost: list[int]
    ) -> None:
        assert s is not None
        gate.wait()
        try:
            calls.rate(s, i + 1, "yes", str(i))
        except StaleSession:
            lost.append(i)

    for _ in range(5):
        token = rated_call(a)
        snapshots = [a.store.by_token(token), b.store.by_token(token)]  # both read "rating"
        gate = threading.Barrier(2)
        lost: list[int] = []
        threads = [
            threading.Thread(target=rate, args=(i, c, snapshots[i], gate, lost))
            for i, c in enumerate((a, b))
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(lost) == 1
        s = a.store.by_token(token)
        assert s is not None and s.comment == str(1 - lost[0])  # the winner's, acknowledged


def fill_up(store: HumanStore) -> None:
    """Cap the file at its current size, then fill its last page: the next call cannot be
    saved (SQLite's real SQLITE_FULL, as on a full disk)."""
    con = store._db
    (pages,) = con.execute("PRAGMA page_count").fetchone()
    con.execute(f"PRAGMA max_page_count = {pages}")
    for _ in range(1000):
        try:
            store.create(
                run="x" * 200, scenario="s", agent="a", agent_seed=0, mode="self", seed=0,
                max_turns=1, profile=None,
            )  # fmt: skip
        except sqlite3.OperationalError:
            return
    raise AssertionError("the database never filled up")


def test_a_full_disk_is_a_plain_503(
    run_dir: Path, db: Path, caplog: pytest.LogCaptureFixture
) -> None:
    calls = Calls(HumanStore(db), AgentPool.from_run(run_dir, ["scripted"]))
    c = TestClient(create_app(calls, admin_token=ADMIN, clock=FakeClock()))
    r = c.post("/start", data={"consent": "yes"}, follow_redirects=False)
    token = r.headers["location"].removeprefix("/call/")
    before = len(calls.store.sessions())
    fill_up(calls.store)
    n = len(calls.store.sessions())
    with caplog.at_level(logging.ERROR, logger="sim2human.webapp"):
        r = c.post("/start", data={"consent": "yes"}, follow_redirects=False)
    assert r.status_code == 503 and "cannot save right now" in r.text
    assert r.headers["retry-after"] == "60" and "Traceback" not in r.text
    assert r.headers["content-security-policy"].startswith("default-src 'none'")
    (line,) = [rec.getMessage() for rec in caplog.records if rec.name == "sim2human.webapp"]
    assert line == "cannot save (POST /start): SQLITE_FULL database or disk is full"
    assert token not in line
    assert len(calls.store.sessions()) == n >= before  # nothing acknowledged lost
    calls.store._db.execute("PRAGMA max_page_count = 1000000")  # space again
    assert c.post("/start", data={"consent": "yes"}, follow_redirects=False).status_code == 303


def test_a_read_only_database_is_a_503_on_every_post(run_dir: Path, db: Path) -> None:
    calls = Calls(HumanStore(db), AgentPool.from_run(run_dir, ["scripted"]))
    c = TestClient(create_app(calls, admin_token=ADMIN, clock=FakeClock()))
    page = c.post("/start", data={"consent": "yes"}, follow_redirects=False).headers["location"]
    calls.store._db.execute("PRAGMA query_only = 1")  # every write refused by SQLite
    for path in (f"{page}/begin", "/start", "/admin/login"):
        r = c.post(path, data={"consent": "yes", "token": ADMIN}, follow_redirects=False)
        assert r.status_code == 503 and "Traceback" not in r.text, path
    assert c.get(page).status_code == 200  # reading still works


def test_study_human_refuses_a_garbage_database_before_training(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from sim2human.cli.app import main

    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(os.urandom(4096))
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as con:
        con.execute("CREATE TABLE t (x)")
    config = tmp_path / "s.yaml"
    config.write_text("name: s\nseeds: [0]\nconditions: [{name: u, sampler: uniform}]\n")
    for db, why in ((garbage, "file is not a database"), (other, "no calls table")):
        out = tmp_path / f"out-{db.stem}"
        code = main(["study", str(config), "--out", str(out), "--human", str(db)])
        err = capsys.readouterr().err.strip()
        assert code == 2 and len(err.splitlines()) == 1 and why in err and str(db) in err
        assert not out.exists()  # refused before anything ran
    with sqlite3.connect(other) as con:  # nothing was written into someone else's database
        assert [n for (n,) in con.execute("SELECT name FROM sqlite_master")] == ["t"]


def test_a_database_from_before_tool_calls_opens_and_keeps_its_calls(tmp_path: Path) -> None:
    """A call database made before tool-using agents (no ``turns.tool_calls``) gains the column
    when opened, and its stored turns read as before (no tools: graded on what was heard)."""
    from sim2human.store.call_records import StoredTurn, record_source
    from sim2human.types import ToolCall

    path = tmp_path / "old.sqlite"
    store = HumanStore(path)
    sid, _ = store.create(
        run="r",
        scenario="intake",
        agent="a",
        agent_seed=0,
        mode="self",
        seed=1,
        max_turns=9,
        profile=None,
    )
    assert store.add_turns(sid, 0, [StoredTurn("user", "hi"), StoredTurn("agent", "hello")])
    store.close()
    with sqlite3.connect(path) as con:
        con.execute("ALTER TABLE turns DROP COLUMN tool_calls")  # the old schema
    store = HumanStore(path)
    old = store.by_id(sid)
    assert old is not None and [t.text for t in old.turns] == ["hi", "hello"]
    assert record_source(old.turns) == "heard"
    call = ToolCall(name="record", arguments={"field": "dob", "value": "1980-03-03"})
    assert store.add_turns(
        sid, 2, [StoredTurn("user", "1980"), StoredTurn("agent", "ok", tool_calls=(call,))]
    )
    new = store.by_id(sid)
    assert new is not None and new.turns[3].tool_calls == (call,)
    assert record_source(new.turns) == "submitted"
    HumanStore(path).close()  # a second opening finds the column there
