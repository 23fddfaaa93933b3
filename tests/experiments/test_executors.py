"""Work in spawned processes: results in call order, and a failing call is raised."""

from __future__ import annotations

import gc
import multiprocessing as mp
import time

import pytest

from sim2human import gc_tuning
from sim2human.experiments.executors import in_processes


def test_results_come_back_in_call_order() -> None:
    assert in_processes(pow, [(2, 10), (3, 2), (5, 1)], workers=2) == [1024, 9, 5]


def test_a_failing_call_is_raised() -> None:
    with pytest.raises(ZeroDivisionError):
        in_processes(divmod, [(1, 1), (1, 0)], workers=2)


def _collector_settings() -> tuple[tuple[int, int, int], int]:
    return gc.get_threshold(), gc.get_freeze_count()


def test_workers_collect_garbage_rarely() -> None:
    """A study's jobs run with the batch collector settings (gc_tuning), the caller's are left
    alone: the default collector walked the extractor's memo tables every few hundred
    allocations, a tenth of a sub-run."""
    before = gc.get_threshold()
    [(threshold, frozen)] = in_processes(_collector_settings, [()], workers=1)
    assert threshold == gc_tuning.BATCH_THRESHOLDS
    assert frozen > 0  # what the worker had built (its imports) is never walked again
    assert gc.get_threshold() == before


def test_the_workers_exit_once_every_call_is_done() -> None:
    """``in_processes`` returns without waiting for them to exit, but none is left behind."""
    before = set(mp.active_children())
    assert in_processes(pow, [(2, 3), (3, 3)], workers=2) == [8, 27]
    deadline = time.monotonic() + 60
    while set(mp.active_children()) - before:
        assert time.monotonic() < deadline, "a worker did not exit"
        time.sleep(0.05)
