"""Wall time of `sim2human demo` (the quick studies a newcomer runs first), by phase, against a
baseline commit side by side, and against the targets: every demo within 120 s on 2 cores, the
intake demo within 90 s as a stretch (issue #39).

    .venv/bin/python benchmarks/bench_demo.py [--scenarios intake support negotiation]
        [--baseline REF] [--workers N] [--data DIR] [--keep DIR]

Each demo runs as a person runs it, in a subprocess (interpreter start-up and imports included),
``python -m sim2human demo --scenario NAME --out DIR`` with one side's ``src`` on the path: the
baseline's checked out into a temporary git worktree, then this checkout's, one scenario after
the other (so both sides of a row meet the same machine within minutes). The wall time is split
into phases from what the run stored: start-up (until ``config.yaml``), training and evaluation
(the sub-runs and side jobs, until ``study.json``) and the finish (diagnosis and reports). Then
the sub-runs' own time by phase (``summary.json``'s ``phase_seconds``), added up over every
sub-run: core-seconds, since the workers run sub-runs side by side. With ``--keep DIR`` the runs
stay in ``DIR/<side>-<scenario>`` (``scripts/same_episodes.py`` compares two). Run it on an
otherwise idle machine: each study uses every core it is given.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET_S = 120.0
STRETCH_S = {"intake": 90.0}
"""A scenario's stretch target, where the issue names one."""


def run_demo(src: Path, scenario: str, out: Path, args: argparse.Namespace) -> dict[str, float]:
    """One ``demo`` with ``src``'s code into ``out``: its wall seconds, the command's phases
    (from the times its files were written) and the sub-runs' phases."""
    cmd = [sys.executable, "-m", "sim2human", "demo", "--out", str(out)]
    cmd += ["--workers", str(args.workers)] if args.workers else []
    cmd += ["--data", str(args.data)] if args.data else []
    cmd += ["--scenario", scenario] if scenario != "intake" else []
    env = {**os.environ, "PYTHONPATH": str(src)}
    started = time.time()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env=env, timeout=3600)
    ended = time.time()
    configured, studied = ((out / name).stat().st_mtime for name in ("config.yaml", "study.json"))
    print(f"  {out.name}: {ended - started:.1f} s", file=sys.stderr, flush=True)
    return {
        "wall": ended - started,
        "start-up": configured - started,
        "training and evaluation": studied - configured,
        "diagnosis and reports": ended - studied,
        **sub_run_phases(out),
    }


def sub_run_phases(run: Path) -> dict[str, float]:
    """Every sub-run's seconds by phase, added up (``sub-runs: PHASE``), ``other`` (their wall
    times less their phases) and ``all sub-runs``."""
    total: dict[str, float] = {}
    wall = 0.0
    for path in sorted(run.glob("conditions/*/*/summary.json")):
        summary = json.loads(path.read_text())
        for phase, seconds in summary.get("phase_seconds", {}).items():
            total[phase] = total.get(phase, 0.0) + seconds
        wall += summary.get("wall_seconds", 0.0)
    if not wall:
        return {}
    total["other"] = wall - sum(total.values())
    total["all sub-runs"] = wall
    return {f"sub-runs: {phase}": seconds for phase, seconds in total.items()}


def worktree(ref: str, where: Path) -> Path:
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(where), ref])
    return where


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--scenarios", nargs="+", default=["intake"])
    parser.add_argument("--baseline", default=None, help="git ref to run side by side")
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--data", type=Path, default=None, help="the folder holding aci-bench/")
    parser.add_argument("--keep", type=Path, default=None, help="keep the runs in this new folder")
    args = parser.parse_args()
    if args.keep is not None and args.keep.exists():
        sys.exit(f"{args.keep}: already exists; --keep makes a new folder of runs")
    with tempfile.TemporaryDirectory(prefix="bench-demo-") as tmp:
        runs = args.keep or Path(tmp) / "runs"
        runs.mkdir(parents=True)
        sides = {"current": ROOT / "src"}
        if args.baseline:
            sides = {"baseline": worktree(args.baseline, Path(tmp) / "baseline") / "src", **sides}
        try:
            rows = {
                (side, s): run_demo(src, s, runs / f"{side}-{s}", args)
                for s in args.scenarios
                for side, src in sides.items()
            }
        finally:
            if args.baseline:
                subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force",
                                str(Path(tmp) / "baseline")], check=False)  # fmt: skip
    report(rows, args)


def report(rows: dict[tuple[str, str], dict[str, float]], args: argparse.Namespace) -> None:
    scenarios = list(dict.fromkeys(s for _, s in rows))
    base = f"baseline {args.baseline}"
    print(f"sim2human demo on {os.cpu_count()} cores, wall seconds")
    head = f"{'demo':<13}" + (f"{base:>20}" if args.baseline else "")
    print(head + f"{'current':>10}" + (f"{'ratio':>8}" if args.baseline else "") + "  target")
    for s in scenarios:
        cur = rows[("current", s)]["wall"]
        line = f"{s:<13}"
        if args.baseline:
            b = rows[("baseline", s)]["wall"]
            line += f"{b:>20.1f}{cur:>10.1f}{b / cur:>7.2f}x"
        else:
            line += f"{cur:>10.1f}"
        targets = [TARGET_S, *([STRETCH_S[s]] if s in STRETCH_S else [])]
        verdicts = [
            f"{t:.0f} s {'met' if cur <= t else 'not met'} ({cur / t:.2f}x)" for t in targets
        ]
        print(line + "  " + "; ".join(verdicts))
    keys = [k for k in rows[("current", scenarios[0])] if k != "wall"]
    print("\nthis checkout by phase (seconds; the sub-runs' are core-seconds, summed)")
    print(f"{'phase':<44}" + "".join(f"{s:>14}" for s in scenarios))
    for k in keys:
        print(f"{k:<44}" + "".join(f"{rows[('current', s)].get(k, 0.0):>14.1f}" for s in scenarios))


if __name__ == "__main__":
    main()
