"""Work in spawned processes: results in call order, and a failing call is raised."""

from __future__ import annotations

import multiprocessing as mp
import time

import pytest

from sim2human.experiments.executors import in_processes


def test_results_come_back_in_call_order() -> None:
    assert in_processes(pow, [(2, 10), (3, 2), (5, 1)], workers=2) == [1024, 9, 5]


def test_a_failing_call_is_raised() -> None:
    with pytest.raises(ZeroDivisionError):
        in_processes(divmod, [(1, 1), (1, 0)], workers=2)


def test_the_workers_exit_once_every_call_is_done() -> None:
    """``in_processes`` returns without waiting for them to exit, but none is left behind."""
    before = set(mp.active_children())
    assert in_processes(pow, [(2, 3), (3, 3)], workers=2) == [8, 27]
    deadline = time.monotonic() + 60
    while set(mp.active_children()) - before:
        assert time.monotonic() < deadline, "a worker did not exit"
        time.sleep(0.05)
