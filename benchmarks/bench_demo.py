"""Wall time of `sim2human demo` (the quick collapse study), as a person runs it, against its
targets: 90 s on 2 cores (issue #10) and 180 s with the real patients held out (issue #13);
`--scenario support` and `--scenario negotiation` time `demo --scenario NAME` against 180 s
(issue #22).

    .venv/bin/python benchmarks/bench_demo.py [--workers N] [--data DIR] [--scenario NAME]
        [--keep DIR]

Runs the command itself in a subprocess (interpreter start-up and imports included) into a
temporary run directory, then splits the wall time into its phases from what the run stored:
start-up (until ``config.yaml``), training and evaluation (the sub-runs and side jobs, until
``study.json``) and the finish (diagnosis and reports). Then the sub-runs' own time by phase
(``summary.json``'s ``phase_seconds``, ``train.phases``), added up over every sub-run: core-seconds,
since the workers run sub-runs side by side. Run it on an otherwise idle machine: the study uses
every core it is given.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGETS_S = (90.0, 180.0)
SCENARIO_TARGETS_S = {"support": (180.0,), "negotiation": (180.0,)}
"""Another scenario's quick study has its own target (default: ``TARGETS_S``)."""


def command() -> list[str]:
    """The installed ``sim2human`` beside this interpreter."""
    script = Path(sys.executable).parent / "sim2human"
    if not script.exists():
        sys.exit(f"no sim2human next to {sys.executable}: run scripts/setup first")
    return [str(script)]


def sub_run_phases(run: Path) -> dict[str, float]:
    """Every sub-run's seconds by phase, added up, and ``wall`` (their wall times, added up)."""
    total: dict[str, float] = {}
    for path in sorted(run.glob("conditions/*/*/summary.json")):
        summary = json.loads(path.read_text())
        for phase, seconds in summary.get("phase_seconds", {}).items():
            total[phase] = total.get(phase, 0.0) + seconds
        total["wall"] = total.get("wall", 0.0) + summary.get("wall_seconds", 0.0)
    return total


def print_phases(by_phase: dict[str, float]) -> None:
    """The sub-runs' core-seconds by phase, with each phase's share of their wall time."""
    wall = by_phase.pop("wall", 0.0)
    if not wall:
        return
    print(f"sub-runs by phase (core-seconds, {wall:.1f} in all):")
    for phase, seconds in [*by_phase.items(), ("other", wall - sum(by_phase.values()))]:
        print(f"  {phase:<26}{seconds:7.1f} s  {seconds / wall:6.1%}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--data", type=Path, default=None, help="the folder holding aci-bench/")
    parser.add_argument("--scenario", default="intake", help="whose demo (demo --scenario)")
    parser.add_argument(
        "--keep", type=Path, default=None, help="run into this new folder and keep it (tables)"
    )
    args = parser.parse_args()
    if args.keep is not None and args.keep.exists():
        sys.exit(f"{args.keep}: already exists; --keep makes a new run directory")
    tmp = Path(tempfile.mkdtemp())
    out = args.keep if args.keep is not None else tmp / "demo"
    cmd = [*command(), "demo", "--out", str(out)]
    cmd += ["--workers", str(args.workers)] if args.workers else []
    cmd += ["--data", str(args.data)] if args.data else []
    cmd += ["--scenario", args.scenario] if args.scenario != "intake" else []
    try:
        started = time.time()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env=os.environ)
        ended = time.time()
        phases = {
            "start-up": (out / "config.yaml").stat().st_mtime - started,
            "training and evaluation": (out / "study.json").stat().st_mtime
            - (out / "config.yaml").stat().st_mtime,
            "diagnosis and reports": ended - (out / "study.json").stat().st_mtime,
        }
        by_phase = sub_run_phases(out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    wall = ended - started
    print(f"sim2human demo --scenario {args.scenario}: {wall:.1f} s on {os.cpu_count()} cores")
    for name, seconds in phases.items():
        print(f"  {name:<26}{seconds:6.1f} s")
    print_phases(by_phase)
    for target in SCENARIO_TARGETS_S.get(args.scenario, TARGETS_S):
        verdict = "met" if wall <= target else "not met"
        print(f"target {target:.0f} s: ratio {wall / target:.2f} ({verdict})")


if __name__ == "__main__":
    main()
