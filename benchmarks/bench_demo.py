"""Wall time of `sim2human demo` (the quick collapse study) against its 180 s target.

    .venv/bin/python benchmarks/bench_demo.py [--workers 2]

Prints the measured wall time, the ratio to the target and the training throughput. Run it on
an otherwise idle machine: the study uses every core it is given.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from importlib import resources
from pathlib import Path

from sim2human.cli.report import finish_study
from sim2human.experiments.config import load_study
from sim2human.experiments.runner import run_study

TARGET_S = 180.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--workers", type=int, default=None)
    args = parser.parse_args()
    path = resources.files("sim2human").joinpath("examples", "collapse.yaml")
    with resources.as_file(path) as config, tempfile.TemporaryDirectory() as tmp:
        cfg = load_study(Path(config), quick=True)
        started = time.perf_counter()
        run_study(cfg, Path(tmp) / "demo", workers=args.workers, finish=finish_study)
        wall = time.perf_counter() - started
    episodes = len(cfg.conditions) * len(cfg.seeds) * cfg.train.episodes
    print(f"demo wall time: {wall:.1f} s (target {TARGET_S:.0f} s, ratio {wall / TARGET_S:.2f})")
    print(f"training episodes: {episodes} ({episodes / wall:.0f} per second overall)")


if __name__ == "__main__":
    main()
