"""Workers die with their parent, and Ctrl-C names the calls it cut short without tracebacks."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from reliability_helpers import descendants, wait_gone

HERE = Path(__file__).parent
PARENT = """
import sys, time
sys.path.insert(0, {here!r})
from sleeper import mark_and_sleep
from sim2human.experiments.executors.pool import Interrupted, in_processes
try:
    in_processes(mark_and_sleep, [({a!r}, 120), ({b!r}, 120), ({c!r}, 120)], 2,
                 labels=["first", "second", "third"])
except Interrupted as stop:
    print("STARTED", sorted(stop.started), "NOT_STARTED", stop.not_started, flush=True)
    sys.exit(130)
"""

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def _start(tmp_path: Path) -> tuple[subprocess.Popen[str], list[Path]]:
    marks = [tmp_path / n for n in ("a", "b", "c")]
    script = PARENT.format(here=str(HERE), a=str(marks[0]), b=str(marks[1]), c=str(marks[2]))
    proc = subprocess.Popen(
        [sys.executable, "-c", script],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    deadline = time.monotonic() + 120
    while sum(m.exists() for m in marks) < 2:  # both workers are running a call
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "workers never started"
        time.sleep(0.1)
    return proc, marks


def test_kill_9_of_the_parent_leaves_no_worker_alive(tmp_path: Path) -> None:
    proc, _ = _start(tmp_path)
    family = descendants(proc.pid)
    assert len(family) >= 2  # the two workers (and multiprocessing's resource tracker)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(30)
    assert wait_gone(family, 10) == [], "orphaned workers survived their parent"


def test_ctrl_c_stops_workers_and_names_the_running_calls(tmp_path: Path) -> None:
    proc, marks = _start(tmp_path)
    family = descendants(proc.pid)
    os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does: the whole group
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, (out, err)
    running = sorted(
        n for n, m in zip(("first", "second", "third"), marks, strict=True) if m.exists()
    )
    assert f"STARTED {running} NOT_STARTED {3 - len(running)}" in out
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert wait_gone(family, 10) == []


KILLED_WHILE_REPORTING = """
import sys
sys.path.insert(0, {here!r})
from sleeper import report_then_die_once
from sim2human.experiments.executors.pool import in_processes
seen = []
done = in_processes(report_then_die_once, [({a!r}, 0.5), ({b!r}, 0.5)], 2, retries=1,
                    advance=seen.append)
print(len(done), sum(seen) == sum(done) > 0, flush=True)
"""


def test_a_worker_killed_while_reporting_progress_stops_neither_the_others_nor_the_exit(
    tmp_path: Path,
) -> None:
    """The CI hang of stop 52: progress went through one ``multiprocessing.Queue`` whose
    writers share a lock; a worker killed while its feeder thread held it blocked every other
    worker's progress and then their exit, and the parent waited on them for ever. The progress
    adds up to what the finished calls reported: a dead attempt's is taken back."""
    script = KILLED_WHILE_REPORTING.format(
        here=str(HERE), a=str(tmp_path / "a"), b=str(tmp_path / "b")
    )
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["2", "True"], proc.stdout
