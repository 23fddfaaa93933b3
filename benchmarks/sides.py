"""Side-by-side measurement against a baseline commit, shared by the throughput benchmarks.

The baseline is checked out into a temporary git worktree; each side runs the calling script's
``--child`` mode in a subprocess with that side's ``src`` on the path, one thread, rounds
alternating between the sides, and the best round of each kept (noise on a shared machine only
ever slows a round down).
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
SINGLE_THREAD = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def study_module(name: str) -> ModuleType:
    """``sim2human.experiments.study.NAME`` of whichever side this child runs: a baseline from
    before the experiments wings (``9b984b7``, say ``bac9383``) has it as
    ``sim2human.experiments.NAME``."""
    try:
        return importlib.import_module(f"sim2human.experiments.study.{name}")
    except ModuleNotFoundError:
        return importlib.import_module(f"sim2human.experiments.{name}")


def run_child(script: str, src: Path, args: list[str], timeout: float) -> dict[str, float]:
    """``script --child ARGS`` with ``src`` on the path; its last stdout line as JSON."""
    env = {**os.environ, "PYTHONPATH": str(src), **SINGLE_THREAD}
    cmd = [sys.executable, script, "--child", *args]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True, timeout=timeout)
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def best_of(
    baseline: str, rounds: int, measure: Callable[[Path], dict[str, float]]
) -> dict[str, dict[str, float]]:
    """``measure(src)`` for the baseline and this checkout, alternating for ``rounds`` rounds;
    the largest value of each key per side (a time is measured as its negative)."""
    best: dict[str, dict[str, float]] = {"baseline": {}, "current": {}}
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "baseline"
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(base), baseline],
            check=True,
        )
        try:
            for _ in range(rounds):
                for side, src in (("baseline", base / "src"), ("current", ROOT / "src")):
                    for key, value in measure(src).items():
                        best[side][key] = max(best[side].get(key, value), value)
        finally:
            subprocess.run(
                ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base)], check=False
            )
    return best
