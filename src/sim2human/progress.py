"""A progress bar that worker processes can advance: they put episode counts on a queue."""

from __future__ import annotations

import multiprocessing as mp
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from queue import Empty
from typing import Any

from rich.progress import Progress, TaskID


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
