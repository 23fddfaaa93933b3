"""How much the held-out telemetry adds to training wall time (the issue allows 10%).

Trains the same sub-runs (the demo's frozen-small and ensemble-uniform conditions, on a reduced
budget) with telemetry off (``train.eval_every: 0``) and on (the demo's setting), alternating
off/on so both see the same machine load, and prints the ratio of total wall times. On a shared
machine that ratio is noisy, so it also times the probe itself inside the 'on' runs and prints
telemetry time / the rest of the run's time.

    PYTHONPATH=src python benchmarks/bench_telemetry.py [--episodes 1500] [--repeats 2]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from importlib import resources
from pathlib import Path
from typing import Any

from sim2human.experiments.study.condition import run_condition
from sim2human.experiments.study.config import load_study
from sim2human.train.telemetry import HeldoutProbe

_probe_seconds = [0.0]
_evaluate = HeldoutProbe.evaluate


def _timed_evaluate(self: HeldoutProbe, update: int, kl_init: float) -> dict[str, Any]:
    """The probe's own time, to split the 'on' runs' wall time into training and telemetry."""
    started = time.perf_counter()
    try:
        return _evaluate(self, update, kl_init)
    finally:
        _probe_seconds[0] += time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=1500)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    path = resources.files("sim2human").joinpath("examples", "collapse.yaml")
    with resources.as_file(path) as config:
        demo = load_study(config, quick=True)
    every = demo.train.eval_every
    # One final evaluation episode per member, so that a run's wall time is its training time.
    final = {"episodes_per_member": 1}
    configs = {
        name: demo.model_copy(
            update={
                "train": demo.train.model_copy(update={"episodes": args.episodes, "eval_every": e}),
                "eval": demo.eval.model_copy(update=final),
            }
        )
        for name, e in (("off", 0), ("on", every))
    }
    HeldoutProbe.evaluate = _timed_evaluate  # type: ignore[method-assign]
    totals = {"off": 0.0, "on": 0.0}
    with tempfile.TemporaryDirectory() as tmp:
        for rep in range(args.repeats):
            for name in ("off", "on") if rep % 2 == 0 else ("on", "off"):
                cfg = configs[name]
                for cond in cfg.conditions[::2]:  # frozen-small and ensemble-uniform
                    out = Path(tmp) / f"{name}-{rep}-{cond.name}"
                    started = time.perf_counter()
                    run_condition(cfg, cond, 0, out)
                    totals[name] += time.perf_counter() - started
    print(
        f"training episodes per run: {args.episodes}; held-out eval every {every} updates, "
        f"{demo.eval.curve_episodes_per_member} per member; repeats: {args.repeats}"
    )
    print(
        f"wall time off: {totals['off']:.1f} s  on: {totals['on']:.1f} s  "
        f"ratio on/off: {totals['on'] / totals['off']:.3f}"
    )
    probe = _probe_seconds[0]
    print(
        f"within the 'on' runs: telemetry {probe:.1f} s of {totals['on']:.1f} s: "
        f"overhead {probe / (totals['on'] - probe):.3f} of training time"
    )


if __name__ == "__main__":
    main()
