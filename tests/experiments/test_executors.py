"""Work in spawned processes: results in call order, a failing call is raised, and a call whose
worker dies runs again in a new one, then fails alone while the others finish."""

from __future__ import annotations

import gc
import multiprocessing as mp
import os
import signal
import time
from pathlib import Path

import pytest

from sim2human.experiments.executors.pool import WorkersDied, in_processes
from sim2human.store import collector


def test_results_come_back_in_call_order() -> None:
    assert in_processes(pow, [(2, 10), (3, 2), (5, 1)], workers=2) == [1024, 9, 5]


def test_a_failing_call_is_raised() -> None:
    with pytest.raises(ZeroDivisionError):
        in_processes(divmod, [(1, 1), (1, 0)], workers=2)


def _collector_settings() -> tuple[tuple[int, int, int], int]:
    return gc.get_threshold(), gc.get_freeze_count()


def test_workers_collect_garbage_rarely() -> None:
    """A study's jobs run with the batch collector settings (store.collector), the caller's are left
    alone: the default collector walked the extractor's memo tables every few hundred
    allocations, a tenth of a sub-run."""
    before = gc.get_threshold()
    [(threshold, frozen)] = in_processes(_collector_settings, [()], workers=1)
    assert threshold == collector.BATCH_THRESHOLDS
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


def _die_once(marker: str) -> str:
    """Kill this worker (as the out-of-memory killer would) the first time, then succeed."""
    if not os.path.exists(marker):
        Path(marker).write_text("died")
        os.kill(os.getpid(), signal.SIGKILL)
    return "ok"


def _die(always: bool, log: str) -> int:
    """Kill this worker when ``always``; else note this start in ``log`` and take a moment."""
    if always:
        os.kill(os.getpid(), signal.SIGKILL)
    with open(log, "a") as f:
        f.write(f"{os.getpid()}\n")
    time.sleep(1.0)
    return os.getpid()


def test_a_call_whose_worker_died_runs_again_in_a_new_one(tmp_path: Path) -> None:
    notes: list[str] = []
    calls = [(str(tmp_path / "a"),), (str(tmp_path / "b"),)]
    got = in_processes(_die_once, calls, workers=2, labels=["a", "b"], retries=1, note=notes.append)
    assert got == ["ok", "ok"]
    assert sorted(n.split(":")[0] for n in notes) == ["a", "b"]
    assert all("worker died (signal 9" in n and "attempt 2 of 2" in n for n in notes), notes


def test_a_call_that_kills_its_worker_each_time_fails_and_the_others_finish(
    tmp_path: Path,
) -> None:
    log = str(tmp_path / "starts")
    calls = [(False, log), (True, log), (False, log), (False, log)]
    with pytest.raises(WorkersDied) as died:
        in_processes(_die, calls, workers=2, labels=["w", "x", "y", "z"], retries=2)
    [failure] = died.value.failures
    assert (failure.label, failure.index, failure.attempts) == ("x", 1, 3)
    assert failure.reason == "worker died (signal 9 SIGKILL, perhaps out of memory)"
    assert "x: worker died" in str(died.value)
    results = died.value.results
    assert results[1] is None and all(isinstance(results[i], int) for i in (0, 2, 3))
    # the calls beside it were never cut short: each started exactly once
    assert len(Path(log).read_text().split()) == 3


def test_without_retries_a_dead_worker_fails_its_call_at_once(tmp_path: Path) -> None:
    with pytest.raises(WorkersDied) as died:
        in_processes(_die_once, [(str(tmp_path / "a"),)], workers=1, retries=0)
    assert [f.attempts for f in died.value.failures] == [1]
