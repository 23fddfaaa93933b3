"""A worker job for the orphan tests, importing nothing heavy (workers start in a second)."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path


def mark_and_sleep(marker: str, seconds: float) -> None:
    """Say this call started, then wait."""
    Path(marker).write_text(str(os.getpid()))
    time.sleep(seconds)


def report_then_die_once(marker: str, seconds: float) -> int:
    """Report progress as fast as it can for ``seconds``, then, the first time, die as the
    out-of-memory killer kills (mid-report, most likely); the second time, return how many
    it reported."""
    from sim2human.experiments.executors.pool import report_progress

    end = time.monotonic() + seconds
    n = 0
    while time.monotonic() < end:
        report_progress(1)
        n += 1
    if not os.path.exists(marker):
        Path(marker).write_text(str(os.getpid()))
        os.kill(os.getpid(), signal.SIGKILL)
    return n
