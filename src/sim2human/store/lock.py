"""The run-directory lock: one writer at a time, for the whole life of the writing process;
readers beside it.

An OS file lock (``flock``) on ``<run dir>/.sim2human.lock``: the kernel drops it the moment its
holder exits, however it exits (``kill -9`` too), so a lock left by a dead process is never
mistaken for a live one. The file also records the holder (pid, host, command, start time) so
that a refused writer can name it. A clean release empties the file; a non-empty file found
unlocked is therefore a stale lock from a process that died, and is taken over with a note.

Locks are reentrant within a process (the study takes the lock, then writes its report, which
takes it again), and never inherited by worker processes (Python opens descriptors
non-inheritable), whose writes are covered by their parent's lock.

**Readers** (``diagnose``, ``fidelity``, ``report --out``, ``export``) need no write access:
``read_lock`` takes a shared ``flock`` on the lock file when it exists and can be written by
this user (so no writer starts while they read, and readers never exclude each other), and no
lock at all when the run directory is read-only to this user: nobody here can write an
archived run, and a reader must not keep its owner from resuming it. A reader of a running
study reads what has finished (episodes are append-only and a torn last line is skipped) and
says so in one note. ``write_or_read_lock`` is for a reader that stores its result in the run
(``diagnosis.json``): the writer's lock when it can have it, else reading only, and it says why.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import socket
import stat
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sim2human.errors import UsageError
from sim2human.store.layout import LOCK_FILE

_held: dict[Path, tuple[int, int]] = {}
"""Locks this process holds: resolved run directory -> (descriptor, depth)."""
_READ_ONLY = (errno.EACCES, errno.EPERM, errno.EROFS)


class LockedError(UsageError):
    """Another live process is writing into (or reading) the run directory."""


class ReadOnlyRunError(UsageError):
    """The run directory cannot be written by this user, so its lock file cannot be made."""


@dataclass(frozen=True)
class Access:
    """What a reader may do with a run directory (``read_lock``, ``write_or_read_lock``)."""

    run_dir: Path
    writable: bool
    """This process holds the writer's lock: it may write into the run directory."""
    why_not: str = ""
    """Why it may not ("is read-only", "is in use by pid ..."); empty when it may."""
    writer: str | None = None
    """``the study is still running (pid … on …, since …)``: the live writer of the run being
    read, if any."""


def holder_of(run_dir: Path) -> dict[str, Any] | None:
    """Who the lock file names (None when it names no one or cannot be read)."""
    try:
        data = json.loads((run_dir / LOCK_FILE).read_text(encoding="utf-8") or "null")
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _alive(h: dict[str, Any]) -> bool:
    """Whether the process the lock file names still runs (True when that cannot be told: it
    ran on another host, or the file names no pid)."""
    pid = h.get("pid")
    if h.get("host") != socket.gethostname() or not isinstance(pid, int) or pid <= 0:
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


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
        kind = ReadOnlyRunError if err.errno in _READ_ONLY else UsageError
        raise kind(f"{run_dir}: cannot create its lock file ({err.strerror})") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        raise LockedError(f"{run_dir} is in use by {_user(run_dir)}") from None
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


def _user(run_dir: Path) -> str:
    """Who holds ``run_dir``'s lock, and what to do about it, for a refused writer."""
    h = holder_of(run_dir)
    if h is None or not _alive(h):  # an empty or stale file under a live lock: readers hold it
        return (
            "another process reading it (diagnose, report, fidelity or export): "
            "try again when it finishes"
        )
    return f"{_describe(h)}: wait for it to finish, or choose another directory"


def live_writer(run_dir: Path) -> str | None:
    """``the study is still running (pid … on …, since …)`` when a live process writes
    ``run_dir``, else None (nobody does, or its lock file cannot be read). Takes no lock."""
    with _shared(run_dir) as (_, writer):
        return writer


def _running(h: dict[str, Any] | None) -> str:
    if h is None:
        return "another process is still writing it"
    command = str(h.get("command") or "a writer")
    what = "the study" if command.startswith("study") else f"`{command}`"
    since = time.strftime("%H:%M:%S", time.localtime(float(h.get("started", 0))))
    return f"{what} is still running (pid {h.get('pid')} on {h.get('host')}, since {since})"


@contextmanager
def _shared(run_dir: Path) -> Iterator[tuple[bool, str | None]]:
    """A shared flock on ``run_dir``'s lock file for the block, when the file exists and this
    user could write it; yields (held, ``_running`` of a live writer or None)."""
    if run_dir.resolve() in _held:  # this process is the writer
        yield False, None
        return
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(run_dir / LOCK_FILE, flags)
    except OSError:  # no lock file (never written with a lock) or unreadable: nothing to probe
        yield False, None
        return
    try:
        held, writer = _try_shared(fd, run_dir)
        yield held, writer
    finally:
        os.close(fd)  # drops the shared flock


def _try_shared(fd: int, run_dir: Path) -> tuple[bool, str | None]:
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        return False, None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:  # a writer holds it
        return False, _running(holder_of(run_dir))
    if not _could_write(run_dir / LOCK_FILE):  # read-only to this user: hold nothing over it
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False, None
    return True, None


def _could_write(path: Path) -> bool:
    """Whether this process can open ``path`` for writing: the kernel's own answer (a mount
    read-only, capabilities and ACLs included), without writing anything."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return False
    os.close(fd)
    return True


@contextmanager
def read_lock(run_dir: Path, *, note: Callable[[str], None] | None = None) -> Iterator[Access]:
    """Read ``run_dir`` for the ``with`` block without writing to it (see the module docstring).

    A live writer's run is read as it stands; ``note`` gets one line saying so."""
    with _shared(run_dir) as (_, writer):
        if writer is not None and note is not None:
            note(f"{writer}: reading what has finished")
        why = "is still being written" if writer is not None else "is only read"
        yield Access(run_dir, writable=False, why_not=why, writer=writer)


@contextmanager
def write_or_read_lock(
    run_dir: Path, command: str, *, note: Callable[[str], None] | None = None
) -> Iterator[Access]:
    """The writer's lock on ``run_dir`` when this process can have it (``Access.writable``);
    otherwise (the directory is read-only to this user, or another process holds the lock)
    ``read_lock``, with ``why_not`` and ``writer`` saying which; ``note`` then gets nothing:
    the caller says what it does instead (prints without storing, or refuses)."""
    with ExitStack() as stack:
        why = ""
        try:
            stack.enter_context(run_lock(run_dir, command, note=note))
        except ReadOnlyRunError:
            why = "is read-only"
        except LockedError as err:
            why = str(err).removeprefix(str(run_dir)).strip().split(": ", 1)[0]
        if not why:
            yield Access(run_dir, writable=True)
            return
        access = stack.enter_context(read_lock(run_dir))  # the caller says what it does
        yield Access(run_dir, writable=False, why_not=why, writer=access.writer)
