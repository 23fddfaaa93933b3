"""Wall time of `sim2human demo` (the quick collapse study), as a person runs it, against its
targets: 90 s on 2 cores (issue #10) and 180 s with the real patients held out (issue #13);
`--scenario support` and `--scenario negotiation` time `demo --scenario NAME` against 180 s
(issue #22).

    .venv/bin/python benchmarks/bench_demo.py [--workers N] [--data DIR] [--scenario NAME]
        [--keep DIR]

Runs the command itself in a subprocess (interpreter start-up and imports included) into a
temporary run directory, then splits the wall time into its phases from what the run stored:
start-up (until ``config.yaml``), training and evaluation (the sub-runs and side jobs, until
``study.json``) and the finish (diagnosis and reports). Run it on an otherwise idle machine: the
study uses every core it is given.
"""

from __future__ import annotations

import argparse
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
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    wall = ended - started
    print(f"sim2human demo --scenario {args.scenario}: {wall:.1f} s on {os.cpu_count()} cores")
    for name, seconds in phases.items():
        print(f"  {name:<26}{seconds:6.1f} s")
    for target in SCENARIO_TARGETS_S.get(args.scenario, TARGETS_S):
        verdict = "met" if wall <= target else "not met"
        print(f"target {target:.0f} s: ratio {wall / target:.2f} ({verdict})")


if __name__ == "__main__":
    main()
