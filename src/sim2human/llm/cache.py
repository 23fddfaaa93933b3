"""Persistent response cache for deterministic chat requests, in one SQLite file.

Only requests whose answer is a pure function of the request (temperature 0, or a fixed seed)
are cached; the caller decides that, this module only stores and looks up.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

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


def cache_key(
    model: str, messages: Sequence[Mapping[str, str]], params: Mapping[str, object]
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
    """A key -> (text, prompt tokens, completion tokens, finish reason) table on disk."""

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

    def get(self, key: str) -> tuple[str, int, int, str] | None:
        with self._lock:
            row = self._db.execute(
                "SELECT text, prompt_tokens, completion_tokens, finish_reason "
                "FROM responses WHERE key = ?",
                (key,),
            ).fetchone()
        if row is None:
            return None
        return str(row[0]), int(row[1]), int(row[2]), str(row[3])

    def put(
        self, key: str, text: str, prompt_tokens: int, completion_tokens: int, finish_reason: str
    ) -> None:
        with self._lock, self._db:
            self._db.execute(
                "INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?, ?, ?)",
                (key, text, prompt_tokens, completion_tokens, finish_reason, time.time()),
            )

    def __len__(self) -> int:
        with self._lock:
            (n,) = self._db.execute("SELECT COUNT(*) FROM responses").fetchone()
        return int(n)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __repr__(self) -> str:
        return f"ResponseCache({str(self.path)!r})"
