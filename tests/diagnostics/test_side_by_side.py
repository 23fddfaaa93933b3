"""Diagnosing conditions side by side (``diagnostics.side_by_side``): the same diagnosis as one
after another, each item in a forked process, in the order asked, errors raised in the parent."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from planted_runs import write_sub_run
from sim2human.diagnostics import side_by_side
from sim2human.diagnostics.analyse import diagnose
from sim2human.diagnostics.rundir import load_run_dir


def pid_and_square(x: int) -> tuple[int, int]:
    return os.getpid(), x * x


def fails_on_three(x: int) -> int:
    if x == 3:
        raise ValueError("three")
    return x


def test_results_come_back_in_order_from_other_processes() -> None:
    waited: list[int] = []
    out = side_by_side.each(
        pid_and_square, [1, 2, 3, 4, 5], 2, cost=lambda x: x, on_wait=waited.append
    )
    assert [sq for _, sq in out] == [1, 4, 9, 16, 25]
    assert os.getpid() not in {pid for pid, _ in out}  # every item in a child
    assert waited == [1, 2, 3, 4, 5]


def test_one_worker_runs_here() -> None:
    out = side_by_side.each(pid_and_square, [1, 2], 1)
    assert out == [(os.getpid(), 1), (os.getpid(), 4)]


def test_an_error_in_a_child_is_raised_here() -> None:
    with pytest.raises(ValueError, match="three"):
        side_by_side.each(fails_on_three, [1, 2, 3, 4], 2)


def test_a_run_diagnosed_side_by_side_is_the_same_as_one_by_one(tmp_path: Path) -> None:
    for name, exploit in (("frozen-trigger", True), ("clean", False), ("frozen-2", True)):
        write_sub_run(tmp_path / "conditions" / name / "seed-0", exploit=exploit)
    run = load_run_dir(tmp_path, None)
    said: list[str] = []
    one = diagnose(run, workers=1)
    two = diagnose(run, workers=2, on_condition=said.append)
    assert json.dumps(one.model_dump(mode="json")) == json.dumps(two.model_dump(mode="json"))
    assert [c.name for c in two.conditions] == list(run.conditions) == said
    assert any(c.exploits for c in two.conditions)  # the planted trigger was replayed and found


CHILD = """
import os, signal, sys, time
from pathlib import Path
from sim2human.diagnostics import side_by_side

def slow(i):
    Path(sys.argv[1], str(os.getpid())).touch()
    time.sleep(60)
    return i

side_by_side.each(slow, [1, 2, 3], 2)
"""


def test_ctrl_c_stops_the_children_at_once_without_their_tracebacks(tmp_path: Path) -> None:
    """Ctrl-C raises in the parent alone (one traceback, the parent's), and no child lives on:
    a child that kept the command's SIGTERM handler, or ignored SIGTERM, hung or printed."""
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(tmp_path)],
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 30
    while len(list(tmp_path.iterdir())) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    children = [int(p.name) for p in tmp_path.iterdir()]
    assert len(children) == 2
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=20)
    assert proc.returncode != 0 and err.count("Traceback") == 1 and "KeyboardInterrupt" in err
    for pid in children:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
