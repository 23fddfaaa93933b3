"""Garbage-collector settings for long, CPU-bound conversation work (training sub-runs).

A sub-run allocates millions of short-lived objects (turns, records, regex matches, tensors'
Python wrappers) while it holds a few hundred thousand long-lived ones: the extractor's and the
vocabulary's memo tables, the scenario's tables, the stored episodes. With CPython's default
thresholds (700, 10, 10) the cyclic collector runs every few hundred allocations and walks the
long-lived objects again and again: 8-18% of a training sub-run and of a persona rollout,
measured with the collector on and off (``benchmarks/bench_rollout.py``). Reference counting
frees almost everything these loops allocate, so collecting rarely loses nothing but time.

Behaviour is unchanged: which objects exist and every number a run computes are the same; only
when unreachable cycles are reclaimed moves.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

BATCH_THRESHOLDS = (50_000, 50, 1_000)
"""Collections after 50,000 net allocations (young), then every 50th and 1,000th of those."""


def for_batch_work() -> None:
    """Collect rarely, and never walk what exists now (the imported modules, built tables):
    call once a process has set up and before it plays many conversations. Process-wide: meant
    for worker processes and benchmarks, not for a library call inside someone's program."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*BATCH_THRESHOLDS)


@contextmanager
def paused() -> Iterator[None]:
    """The cyclic collector off for the block (and back on after, if it was on).

    For reading an episode log: its parse builds ~30 small objects per turn, all of them kept,
    and every collection they trigger re-walks what was built before, which made reading a
    demo run's 10,000 episodes 2.4x slower. The records are plain trees (no reference cycles),
    so the collector would find nothing to free in them anyway.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
