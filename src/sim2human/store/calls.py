"""Recorded calls between people and agents: one SQLite file (standard library, WAL mode).

The web page (``webapp/``), the terminal call (``sim2human human play``), the ``human-replay``
simulator kind and ``study --human`` all read and write through this one module, so the schema
lives in one place. It sits in the storage wing (layer 0) because the simulators read it too.

Durability: every finished turn pair and every rating is its own transaction, committed before
the page moves on, so killing the server (``kill -9``) mid-call loses nothing that was
acknowledged; the call is rebuilt from its stored turns when the page reloads. WAL with
``synchronous=NORMAL`` is durable against a crashed or killed process (what this guards); only a
power cut could lose the last commits; ``FULL`` costs an fsync a message (7 ms against 0.3 ms).
Texts are made valid first (``untrusted``: an agent's lone surrogate is never a 500).

Participants are known only by an unguessable token; the file stores its SHA-256, never the
token, so a copied database cannot be used to open someone's call page. The file is created
owner-only (0600; SQLite gives its -wal and -shm files the same mode): it holds transcripts and
the details people typed about themselves.

Several servers may share one file (on one host: WAL needs shared memory, so no network
filesystem). A status change is a conditional update (``WHERE status IN`` the states it may
follow), so when two servers race, the first rating stands and the second is told so.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sim2human.errors import Sim2HumanError, UsageError
from sim2human.store.call_records import (
    Mode,
    Session,
    Status,
    StoredTurn,
    calls_json,
    session_of,
)
from sim2human.types import (
    Episode,
    Profile,
)
from sim2human.untrusted import valid_text

HUMAN_FAMILY = "human"
"""The family (and ``simulator_id`` prefix) of every exported human episode."""

SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY,
    token_hash TEXT UNIQUE NOT NULL,
    created REAL NOT NULL,
    run TEXT NOT NULL,
    scenario TEXT NOT NULL,
    agent TEXT NOT NULL,
    agent_seed INTEGER NOT NULL,
    mode TEXT NOT NULL,
    status TEXT NOT NULL,
    seed INTEGER NOT NULL,
    max_turns INTEGER NOT NULL,
    profile TEXT,
    termination TEXT,
    record TEXT,
    rating INTEGER,
    details_right TEXT,
    comment TEXT,
    episode TEXT,
    finished REAL
);
CREATE TABLE IF NOT EXISTS turns (
    session_id TEXT NOT NULL REFERENCES sessions(id),
    idx INTEGER NOT NULL,
    speaker TEXT NOT NULL,
    text TEXT NOT NULL,
    act TEXT,
    field TEXT,
    at REAL NOT NULL,
    tool_calls TEXT,
    PRIMARY KEY (session_id, idx)
);
CREATE TABLE IF NOT EXISTS admin_sessions (key TEXT PRIMARY KEY, expires REAL NOT NULL);
"""
AFTER: dict[Status, tuple[Status, ...]] = {
    "card": (),
    "calling": ("card",),
    "confirm": ("calling",),
    "rating": ("calling", "confirm"),
    "done": ("rating",),
}
"""The states each status may follow; any other change of status is refused."""


class StaleSession(Sim2HumanError):
    """A status change lost a race: another request (or server) moved the session first."""


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


class HumanStore:
    """One SQLite file; safe to share between the server's threads (one lock, short writes)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            _create_private(path)
        except OSError as err:
            raise UsageError(f"{path}: cannot create the call database ({err.strerror})") from None
        try:
            self._db = sqlite3.connect(
                path, check_same_thread=False, isolation_level=None, timeout=10.0
            )
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(SCHEMA)
            _add_tool_calls(self._db)
        except sqlite3.DatabaseError as err:
            raise UsageError(f"{path}: not a sim2human human-call database ({err})") from None
        self._lock = threading.Lock()

    @classmethod
    def open_existing(cls, path: Path) -> HumanStore:
        check_existing(path)
        return cls(path)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
                self._db.execute("COMMIT")
            except BaseException:
                if self._db.in_transaction:  # SQLite rolls back by itself on a full disk
                    self._db.execute("ROLLBACK")
                raise

    # -- writing ------------------------------------------------------------------------------

    def create(
        self,
        *,
        run: str,
        scenario: str,
        agent: str,
        agent_seed: int,
        mode: Mode,
        seed: int,
        max_turns: int,
        profile: Profile | None,
    ) -> tuple[str, str]:
        """A new session; returns (public id, secret token). The token is never stored."""
        token = secrets.token_urlsafe(24)
        sid = secrets.token_hex(6)
        status: Status = "card" if mode == "card" else "calling"
        with self._tx() as db:
            db.execute(
                "INSERT INTO sessions (id, token_hash, created, run, scenario, agent, agent_seed,"
                " mode, status, seed, max_turns, profile) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    sid,
                    hash_token(token),
                    time.time(),
                    run,
                    scenario,
                    agent,
                    agent_seed,
                    mode,
                    status,
                    seed,
                    max_turns,
                    None if profile is None else json.dumps(profile),
                ),
            )
        return sid, token

    def add_turns(self, sid: str, start: int, turns: Sequence[StoredTurn]) -> bool:
        """Append turns at index ``start`` in one transaction; False (nothing written) if the
        session already has a turn there: a repeated or raced submission is not a new turn."""
        with self._tx() as db:
            (n,) = db.execute("SELECT COUNT(*) FROM turns WHERE session_id=?", (sid,)).fetchone()
            if n != start:
                return False
            now = time.time()
            db.executemany(
                "INSERT INTO turns (session_id, idx, speaker, text, act, field, at, tool_calls) "
                "VALUES (?,?,?,?,?,?,?,?)",
                [
                    (
                        sid,
                        start + i,
                        t.speaker,
                        valid_text(t.text),
                        t.act,
                        t.field,
                        now,
                        calls_json(t.tool_calls),
                    )
                    for i, t in enumerate(turns)
                ],
            )
        return True

    def update(self, sid: str, **values: Any) -> None:
        allowed = {
            "status",
            "profile",
            "termination",
            "record",
            "rating",
            "details_right",
            "comment",
            "episode",
            "finished",
        }
        if not values or set(values) - allowed:
            raise ValueError(f"cannot update {sorted(set(values) - allowed)}")
        encoded = {k: _encode(v) for k, v in values.items()}
        cols = ", ".join(f"{k}=?" for k in encoded)
        after: tuple[str, ...] = AFTER[values["status"]] if "status" in values else ()
        where = f" AND status IN ({','.join('?' * len(after))})" if "status" in values else ""
        with self._tx() as db:
            cur = db.execute(
                f"UPDATE sessions SET {cols} WHERE id=?{where}", (*encoded.values(), sid, *after)
            )
            if where and cur.rowcount == 0:
                row = db.execute("SELECT status FROM sessions WHERE id=?", (sid,)).fetchone()
                now = "gone" if row is None else f"already {row[0]!r}"
                raise StaleSession(f"session {sid}: cannot become {values['status']!r}, {now}")

    # -- admin sign-ins -----------------------------------------------------------------------

    def add_admin_session(self, key: str, expires: float) -> None:
        """Remember a signed-in admin by ``key`` (a keyed hash of the cookie, never the
        cookie) until ``expires`` (epoch seconds); expired ones are dropped on the way."""
        with self._tx() as db:
            db.execute("DELETE FROM admin_sessions WHERE expires <= ?", (time.time(),))
            db.execute("INSERT OR REPLACE INTO admin_sessions VALUES (?, ?)", (key, expires))

    def admin_session(self, key: str) -> bool:
        with self._lock:
            row = self._db.execute(
                "SELECT expires FROM admin_sessions WHERE key=?", (key,)
            ).fetchone()
        return row is not None and float(row[0]) > time.time()

    def drop_admin_session(self, key: str) -> None:
        with self._tx() as db:
            db.execute("DELETE FROM admin_sessions WHERE key=?", (key,))

    # -- reading ------------------------------------------------------------------------------

    def by_token(self, token: str) -> Session | None:
        return self._one("token_hash=?", hash_token(token))

    def by_id(self, sid: str) -> Session | None:
        return self._one("id=?", sid)

    def _one(self, where: str, arg: str) -> Session | None:
        with self._lock:
            row = self._db.execute(f"SELECT * FROM sessions WHERE {where}", (arg,)).fetchone()
            if row is None:
                return None
            cols = [d[0] for d in self._db.execute("SELECT * FROM sessions LIMIT 0").description]
            turns = self._db.execute(
                "SELECT speaker, text, act, field, tool_calls FROM turns WHERE session_id=? "
                "ORDER BY idx",
                (row[0],),
            ).fetchall()
        return session_of(dict(zip(cols, row, strict=True)), turns)

    def sessions(self) -> list[Session]:
        """Every session, oldest first (turns not loaded)."""
        with self._lock:
            cur = self._db.execute("SELECT * FROM sessions ORDER BY created, id")
            cols = [d[0] for d in cur.description]
            rows = cur.fetchall()
        return [session_of(dict(zip(cols, r, strict=True)), []) for r in rows]

    def turn_counts(self) -> dict[str, int]:
        with self._lock:
            rows = self._db.execute(
                "SELECT session_id, COUNT(*) FROM turns GROUP BY session_id"
            ).fetchall()
        return {sid: int(n) for sid, n in rows}

    def agent_counts(self) -> dict[str, int]:
        with self._lock:
            rows = self._db.execute("SELECT agent, COUNT(*) FROM sessions GROUP BY agent")
            return {a: int(n) for a, n in rows.fetchall()}

    def episodes(self) -> list[Episode]:
        """Every finished (rated) session as an episode, oldest first."""
        return [s.episode for s in self.sessions() if s.status == "done" and s.episode]


def _create_private(path: Path) -> None:
    """Create ``path`` empty and owner-only unless it exists (then its mode is the owner's)."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return
    os.close(fd)


def check_existing(path: Path) -> None:
    """A UsageError unless ``path`` is a call database; opened read-only, nothing written."""
    if not path.is_file():
        raise UsageError(f"{path}: no such human-call database")
    try:
        con = sqlite3.connect(path.resolve().as_uri() + "?mode=ro", uri=True)
        try:
            cols = {row[1] for row in con.execute("PRAGMA table_info(sessions)")}
        finally:
            con.close()
    except sqlite3.DatabaseError as err:
        raise UsageError(f"{path}: not a sim2human human-call database ({err})") from None
    if not {"id", "token_hash", "status", "episode"} <= cols:
        raise UsageError(f"{path}: not a sim2human human-call database (no calls table)")


def _encode(v: Any) -> Any:
    if isinstance(v, Episode):
        return v.model_dump_json()
    if isinstance(v, dict):
        return json.dumps(v)
    return valid_text(v) if isinstance(v, str) else v


def _add_tool_calls(db: sqlite3.Connection) -> None:
    """Give a database made before tool-using agents its ``turns.tool_calls`` column (a server
    opening it at the same moment may have just added it)."""
    if "tool_calls" in {row[1] for row in db.execute("PRAGMA table_info(turns)")}:
        return
    try:
        db.execute("ALTER TABLE turns ADD COLUMN tool_calls TEXT")
    except sqlite3.OperationalError as err:
        if "duplicate column" not in str(err):
            raise
