"""Persistent response cache for deterministic chat requests, in one SQLite file.

Only requests whose answer is a pure function of the request (temperature 0, or a fixed seed)
are cached; the caller decides that, this module only stores and looks up.

Texts are bounded both ways: ``put`` refuses a text over ``MAX_TEXT_CHARS`` (the client cuts
completions long before that; this is the last guard for a file every study shares), and
``get(key, max_chars=N)`` lets SQLite cut a stored text (one written by an older version without
a cap) so that a huge row is never loaded whole.

A request that offered tools is answered with tool calls too; they are kept in a table of their
own (key -> a JSON list of ``FunctionCall``s; no row for a plain answer), never as a new column
of ``responses``: the file is shared by every version on a machine, and an older one writes its
rows positionally, six values, so a seventh column would break it.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

from sim2human.llm.endpoint import FunctionCall

MAX_TEXT_CHARS = 1_000_000
"""The longest text stored or returned: far above any capped completion."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    text TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    finish_reason TEXT NOT NULL,
    created REAL NOT NULL
)
"""
_CALLS_SCHEMA = "CREATE TABLE IF NOT EXISTS tool_calls (key TEXT PRIMARY KEY, calls TEXT NOT NULL)"


class Cached(NamedTuple):
    """One stored answer."""

    text: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str
    tool_calls: tuple[FunctionCall, ...] = ()


def cache_key(
    model: str, messages: Sequence[Mapping[str, object]], params: Mapping[str, object]
) -> str:
    """A stable hash of everything that determines a deterministic answer."""
    blob = json.dumps(
        {"model": model, "messages": [dict(m) for m in messages], "params": dict(params)},
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class ResponseCache:
    """A key -> ``Cached`` answer table on disk."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        # One connection, guarded by a lock: calls are short and may come from a sync wrapper's
        # thread as well as the event loop's.
        self._db = sqlite3.connect(self.path, check_same_thread=False, timeout=10.0)
        with self._lock, self._db:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(_SCHEMA)
            self._db.execute(_CALLS_SCHEMA)

    def get(self, key: str, max_chars: int = MAX_TEXT_CHARS) -> Cached | None:
        """The stored answer, its text at most ``max_chars`` long (a longer one is cut and its
        finish reason set to ``length``)."""
        with self._lock:
            row = self._db.execute(
                "SELECT substr(r.text, 1, ?), length(r.text) > ?, r.prompt_tokens, "
                "r.completion_tokens, r.finish_reason, t.calls FROM responses AS r "
                "LEFT JOIN tool_calls AS t ON t.key = r.key WHERE r.key = ?",
                (max_chars, max_chars, key),
            ).fetchone()
        if row is None:
            return None
        finish = "length" if row[1] else str(row[4])
        calls = tuple(FunctionCall.model_validate(c) for c in json.loads(row[5] or "[]"))
        return Cached(str(row[0]), int(row[2]), int(row[3]), finish, calls)

    def put(
        self,
        key: str,
        text: str,
        prompt_tokens: int,
        completion_tokens: int,
        finish_reason: str,
        tool_calls: Sequence[FunctionCall] = (),
    ) -> None:
        if len(text) > MAX_TEXT_CHARS:
            raise ValueError(
                f"{self.path}: refusing to cache a text of {len(text)} characters "
                f"(over {MAX_TEXT_CHARS})"
            )
        calls = json.dumps([c.model_dump() for c in tool_calls], ensure_ascii=False)
        with self._lock, self._db:
            self._db.execute(
                "INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?, ?, ?)",
                (key, text, prompt_tokens, completion_tokens, finish_reason, time.time()),
            )
            self._db.execute("DELETE FROM tool_calls WHERE key = ?", (key,))
            if tool_calls:
                self._db.execute("INSERT INTO tool_calls VALUES (?, ?)", (key, calls))

    def __len__(self) -> int:
        with self._lock:
            (n,) = self._db.execute("SELECT COUNT(*) FROM responses").fetchone()
        return int(n)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __repr__(self) -> str:
        return f"ResponseCache({str(self.path)!r})"
