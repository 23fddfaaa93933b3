"""Work in spawned worker processes, and a progress bar they advance by putting episode counts
on a queue."""

from __future__ import annotations

import multiprocessing as mp
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from contextlib import contextmanager
from queue import Empty
from typing import Any, TypeVar

from rich.progress import Progress, TaskID

T = TypeVar("T")


def in_processes(fn: Callable[..., T], calls: Sequence[tuple[Any, ...]], workers: int) -> list[T]:
    """``fn(*args)`` for each of ``calls`` in up to ``workers`` spawned processes; results in
    the order of ``calls``. The first failure is raised as soon as it happens; Ctrl-C cancels
    the calls not yet started."""
    with ProcessPoolExecutor(max_workers=workers, mp_context=mp.get_context("spawn")) as pool:
        futures = [pool.submit(fn, *args) for args in calls]
        try:
            for fut in as_completed(futures):
                fut.result()
        except KeyboardInterrupt:
            pool.shutdown(wait=False, cancel_futures=True)
            raise
    return [f.result() for f in futures]


@contextmanager
def queue_progress(bar: Progress, task: TaskID) -> Iterator[Any]:
    """Yield a queue (picklable, for spawned workers) whose numbers advance ``task``."""
    with mp.Manager() as manager:
        queue = manager.Queue()
        stop = threading.Event()

        def drain() -> None:
            while not stop.is_set():
                try:
                    bar.advance(task, queue.get(timeout=0.2))
                except (Empty, EOFError, OSError):  # the manager may already be going away
                    continue

        reader = threading.Thread(target=drain, daemon=True)
        reader.start()
        try:
            yield queue
        finally:
            stop.set()
            reader.join()
