"""Wall and CPU time of `sim2human stress` on a study run, this checkout against a baseline,
side by side.

    .venv/bin/python benchmarks/bench_stress.py RUN_DIR [--baseline REF] [--rounds K]
        [-- stress options...]

Each side runs ``sim2human stress RUN_DIR --out TMP --quiet [options]`` in a subprocess with its
own ``src`` on the path (the baseline checked out into a temporary git worktree, ``sides``),
rounds alternating between the sides; the best round of each is kept (noise on a shared machine
only ever slows a round down). Prints each side's wall time, CPU time (the command and its
workers), the number of episodes the sweep played (``n_units`` over the grid, from each side's
``stress.json``), the ratio, and the issue's budget (60 s on 2 cores for the quick demo's run).
The run directory is read, never written: each round writes into its own temporary folder.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from sides import best_of

BASELINE = "c16b739"
"""main before stress played each real patient at the study's own count (three calls a visit
and point before)."""
BUDGET = 60.0
"""Seconds for ``sim2human stress`` on the demo's run on 2 cores (issue #39)."""


def children_cpu() -> float:
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return kids.ru_utime + kids.ru_stime


def one_round(src: Path, run_dir: Path, options: list[str]) -> dict[str, float]:
    """One ``stress`` of ``run_dir`` with ``src``'s code: -wall, -cpu and the sweep's episodes
    (times negated: ``best_of`` keeps the largest value)."""
    with tempfile.TemporaryDirectory(prefix="bench-stress-") as out:
        env = {**os.environ, "PYTHONPATH": str(src)}
        cmd = [sys.executable, "-m", "sim2human.cli.app", "stress", str(run_dir)]
        cmd += ["--out", out, "--quiet", *options]
        cpu0, t0 = children_cpu(), time.perf_counter()
        subprocess.run(cmd, env=env, check=True, timeout=3600)
        wall, cpu = time.perf_counter() - t0, children_cpu() - cpu0
        stress = json.loads((Path(out) / "stress.json").read_text())
    points = 1 + len(stress["perturbations"]) * (len(stress["grid"]) - 1)
    units = sum(a["n_units"] for a in stress["agents"].values())
    return {"wall": -wall, "cpu": -cpu, "episodes": float(points * units)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--baseline", default=BASELINE, help="git ref to compare against")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("options", nargs="*", help="after --: options for `sim2human stress`")
    args = parser.parse_args()
    run_dir = args.run_dir.resolve()
    sides = best_of(args.baseline, args.rounds, lambda src: one_round(src, run_dir, args.options))
    base, cur = sides["baseline"], sides["current"]
    print(f"sim2human stress {run_dir} {' '.join(args.options)}".rstrip())
    print(f"best of {args.rounds} round(s); {os.cpu_count()} cores; budget {BUDGET:.0f} s wall")
    print(f"{'':<22}{'baseline ' + args.baseline:>18}{'current':>12}{'ratio':>8}")
    for key, label in (("wall", "wall (s)"), ("cpu", "CPU, with workers (s)")):
        b, c = -base[key], -cur[key]
        print(f"{label:<22}{b:>18.1f}{c:>12.1f}{b / c:>7.2f}x")
    b, c = base["episodes"], cur["episodes"]
    print(f"{'sweep episodes':<22}{b:>18,.0f}{c:>12,.0f}{b / c:>7.2f}x")
    verdict = "met" if -cur["wall"] <= BUDGET else "not met"
    print(f"budget {BUDGET:.0f} s: {verdict} ({-cur['wall'] / BUDGET:.2f}x of it)")


if __name__ == "__main__":
    main()
