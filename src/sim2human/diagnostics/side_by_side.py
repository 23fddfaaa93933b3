"""Diagnosing a run's conditions (and drawing its report's figures) side by side, one forked
process per core.

A study's finish diagnoses every condition one after another: most of it is the exploit finder
replaying calls, about 2 s for each ensemble of the quick demo, then about 3.5 s of figures, on
one core while the others idle. The conditions are independent (each one's diagnosis reads only
its own sub-runs and the scenario), and so are the figures.

Why forked processes, not the study's own worker pool (``executors.pool.in_processes``, which
spawns): the run is already read in this process, and a spawned worker would import the package
and read its condition's episodes again (about 1 s for each ensemble condition, half of what it
saves). A forked child inherits the read run as it is. It runs only the replays, the statistics
and matplotlib's Agg canvas (no torch, no console), leaves Ctrl-C to its parent (which ends it)
and dies with its parent (``die_with_parent``), as the study's workers do. Callers that may run
in a threaded server (the web app) keep the default of one process: forking a process whose
other threads hold locks is not safe.

Results are the same as one after another: each item's result is a pure function of it (a
condition's bootstrap is seeded), and they come back in the order they were asked for.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import sys
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from sim2human.experiments.executors.pool import die_with_parent

T = TypeVar("T")
R = TypeVar("R")

_work: tuple[Callable[[Any], Any], Sequence[Any]] | None = None
"""In a forked child: the function and items its parent set before forking (``_nth``)."""


def _start(parent: int) -> None:
    die_with_parent(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C and stops us with
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # SIGTERM (``Pool.terminate``): no handler of
    # the parent's (the command's raises KeyboardInterrupt) may print a traceback here


def _nth(i: int) -> Any:
    assert _work is not None  # set by the parent before it forked this process
    fn, items = _work
    return fn(items[i])


def each(
    fn: Callable[[T], R],
    items: Sequence[T],
    workers: int,
    *,
    cost: Callable[[T], float] | None = None,
    on_wait: Callable[[T], None] | None = None,
) -> list[R]:
    """``fn`` of every item, in ``items``' order, in up to ``workers`` forked processes (in
    this one for a single worker or item, or off Linux: macOS's system libraries are not safe to
    fork, which is why Python stopped forking there by default). ``cost``: a rank
    of each item's work, started largest first so the processes run out of work together.
    ``on_wait``: called with each item, in order, before its result is waited for (a status)."""
    wait = on_wait or (lambda _: None)
    n = min(workers, len(items))
    if n <= 1 or not sys.platform.startswith("linux"):
        out = []
        for item in items:
            wait(item)
            out.append(fn(item))
        return out
    rank = cost or (lambda _: 0.0)
    return _forked(fn, items, n, sorted(range(len(items)), key=lambda i: -rank(items[i])), wait)


def _forked(
    fn: Callable[[T], R],
    items: Sequence[T],
    n: int,
    order: Sequence[int],
    wait: Callable[[T], None],
) -> list[R]:
    global _work
    _work = (fn, items)  # what the children see: the pool forks them on the next line
    pool = mp.get_context("fork").Pool(n, initializer=_start, initargs=(os.getpid(),))
    try:
        pending = {i: pool.apply_async(_nth, (i,)) for i in order}
        out: list[R] = []
        for i, item in enumerate(items):
            wait(item)
            out.append(pending[i].get())
        pool.close()
        return out
    finally:
        pool.terminate()  # on Ctrl-C or an error, the children stop at once
        pool.join()
        _work = None
