"""Work in spawned worker processes that die with their parent, and a progress bar they advance
by putting episode counts on a queue.

Workers never outlive the process that started them: on Linux the kernel kills each one when its
parent dies (``PR_SET_PDEATHSIG``, so ``kill -9`` of the main process too), and everywhere a
watchdog thread exits a worker whose parent has gone. Workers ignore Ctrl-C: the parent handles
it, stops them, and reports which calls were cut short (``Interrupted``), so a terminal shows one
line per interrupted sub-run instead of a traceback per worker. There is no manager process to
orphan: the progress queue reaches workers through the pool's initializer.
"""

from __future__ import annotations

import ctypes
import multiprocessing as mp
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from contextlib import contextmanager
from queue import Empty
from typing import Any, TypeVar

from rich.progress import Progress, TaskID

from sim2human import gc_tuning

T = TypeVar("T")
PR_SET_PDEATHSIG = 1
_NOT_STARTED, _STARTED, _DONE = 0, 1, 2
_queue: Any = None
"""In a worker: the progress queue its pool was given (None when there is none)."""
_state: Any = None
"""In a worker: the shared per-call state array (not started / started / done)."""


class Interrupted(KeyboardInterrupt):
    """Ctrl-C during ``in_processes``: the calls cut short and how many never started."""

    def __init__(self, started: Sequence[str], not_started: int) -> None:
        super().__init__(f"interrupted: {len(started)} running, {not_started} not started")
        self.started = tuple(started)
        self.not_started = not_started


def report_progress(n: int) -> None:
    """Advance the parent's progress bar by ``n`` (in a worker of ``in_processes``)."""
    if _queue is not None:
        _queue.put(n)


def die_with_parent(parent: int) -> None:
    """Make this process exit when ``parent`` does (call it first thing in a child)."""
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):  # no prctl: the watchdog below still works
            pass
    if os.getppid() != parent:  # it died before the line above took effect
        os._exit(1)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="sim2human-parent-watch", daemon=True).start()


def _init_worker(parent: int, queue: Any, state: Any) -> None:
    global _queue, _state
    die_with_parent(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C and stops us
    _queue, _state = queue, state


def _call(index: int, fn: Callable[..., T], args: tuple[Any, ...]) -> T:
    _state[index] = _STARTED
    gc_tuning.for_batch_work()  # the worker is ours: collect rarely while it plays
    try:
        return fn(*args)
    finally:
        _state[index] = _DONE


def in_processes(
    fn: Callable[..., T],
    calls: Sequence[tuple[Any, ...]],
    workers: int,
    *,
    queue: Any = None,
    labels: Sequence[str] | None = None,
) -> list[T]:
    """``fn(*args)`` for each of ``calls`` in up to ``workers`` spawned processes; results in
    the order of ``calls``. ``queue`` (from ``queue_progress``) is what ``report_progress``
    puts on in the workers. The first failure stops calls not yet started and is raised once
    the running ones end; Ctrl-C stops every worker at once and raises ``Interrupted`` naming
    (by ``labels``) the calls that were running."""
    ctx = mp.get_context("spawn")
    state = ctx.Array("b", max(1, len(calls)), lock=False)
    names = list(labels) if labels is not None else [str(i) for i in range(len(calls))]
    pool = ProcessPoolExecutor(
        max_workers=workers,
        mp_context=ctx,
        initializer=_init_worker,
        initargs=(os.getpid(), queue, state),
    )
    futures: list[Future[T]] = []
    done = False
    try:
        futures = [pool.submit(_call, i, fn, args) for i, args in enumerate(calls)]
        for fut in as_completed(futures):
            fut.result()
        done = True
    except KeyboardInterrupt:
        _stop_now(pool)
        started = [names[i] for i in range(len(calls)) if state[i] == _STARTED]
        waiting = sum(state[i] == _NOT_STARTED for i in range(len(calls)))
        raise Interrupted(started, waiting) from None
    finally:
        # Every call done: the caller goes on while the workers exit (a trained sub-run's
        # worker takes about a second to tear down torch); the pool's own thread joins them,
        # at the latest when this process exits. Otherwise wait for the running calls.
        pool.shutdown(wait=not done, cancel_futures=True)
    return [f.result() for f in futures]


def _stop_now(pool: ProcessPoolExecutor) -> None:
    """Cancel what has not started and kill the workers (their sub-runs rerun on --resume)."""
    procs = dict(getattr(pool, "_processes", None) or {})
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in procs.values():
        if proc.is_alive():
            proc.kill()
    for proc in procs.values():
        proc.join(5)


@contextmanager
def queue_progress(bar: Progress, task: TaskID) -> Iterator[Any]:
    """Yield a queue (for ``in_processes(queue=...)``) whose numbers advance ``task``."""
    queue = mp.get_context("spawn").Queue()
    stop = threading.Event()

    def drain() -> None:
        while not stop.is_set():
            try:
                bar.advance(task, queue.get(timeout=0.2))
            except (Empty, EOFError, OSError, ValueError):  # closed, or being closed
                continue

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        yield queue
    finally:
        stop.set()
        reader.join()
        queue.close()
        queue.cancel_join_thread()
