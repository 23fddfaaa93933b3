"""The run-directory lock: one writer at a time, for the whole life of the writing process.

An OS file lock (``flock``) on ``<run dir>/.sim2human.lock``: the kernel drops it the moment its
holder exits, however it exits (``kill -9`` too), so a lock left by a dead process is never
mistaken for a live one. The file also records the holder (pid, host, command, start time) so
that a refused writer can name it. A clean release empties the file; a non-empty file found
unlocked is therefore a stale lock from a process that died, and is taken over with a note.

Locks are reentrant within a process (the study takes the lock, then writes its report, which
takes it again), and never inherited by worker processes (Python opens descriptors
non-inheritable), whose writes are covered by their parent's lock.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sim2human.errors import UsageError

LOCK_FILE = ".sim2human.lock"
_held: dict[Path, tuple[int, int]] = {}
"""Locks this process holds: resolved run directory -> (descriptor, depth)."""


class LockedError(UsageError):
    """Another live process is writing into the run directory."""


def holder_of(run_dir: Path) -> dict[str, Any] | None:
    """Who the lock file names (None when it names no one or cannot be read)."""
    try:
        data = json.loads((run_dir / LOCK_FILE).read_text(encoding="utf-8") or "null")
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _describe(h: dict[str, Any] | None) -> str:
    if h is None:
        return "another process"
    since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(float(h.get("started", 0))))
    return f"pid {h.get('pid')} on {h.get('host')} ({h.get('command')}, since {since})"


@contextmanager
def run_lock(
    run_dir: Path, command: str, *, note: Callable[[str], None] | None = None
) -> Iterator[Path]:
    """Hold ``run_dir``'s lock (the directory must exist) for the ``with`` block.

    A second writer gets a ``LockedError`` (exit code 2) naming the holder; a stale lock from a
    dead process is taken over and reported through ``note``.
    """
    key = run_dir.resolve()
    if key in _held:
        fd, depth = _held[key]
        _held[key] = (fd, depth + 1)
        try:
            yield run_dir
        finally:
            _held[key] = (fd, _held[key][1] - 1)
        return
    path = run_dir / LOCK_FILE
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644)
    except OSError as err:
        raise UsageError(f"{run_dir}: cannot create its lock file ({err.strerror})") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        raise LockedError(
            f"{run_dir} is in use by {_describe(holder_of(run_dir))}: wait for it to finish, "
            "or choose another directory"
        ) from None
    stale = holder_of(run_dir)
    if stale is not None and note is not None:
        note(f"took over the lock of {_describe(stale)}, which is no longer running")
    me = {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "command": command,
        "started": round(time.time(), 3),
        "argv": sys.argv[1:],
    }
    os.ftruncate(fd, 0)
    os.pwrite(fd, (json.dumps(me) + "\n").encode(), 0)
    _held[key] = (fd, 1)
    try:
        yield run_dir
    finally:
        del _held[key]
        try:
            os.ftruncate(fd, 0)  # released cleanly: nothing stale left behind
        finally:
            os.close(fd)  # drops the flock
