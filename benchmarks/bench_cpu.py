"""CPU seconds of one sub-run's training, for any study config: comparable on a loaded machine.

    PYTHONPATH=SRC .venv/bin/python benchmarks/bench_cpu.py CONFIG [--condition NAME] [--episodes N]

Trains ``--episodes`` episodes of one condition of CONFIG (its ``--quick`` settings) in this
process on one thread, as a study's worker does, and prints the CPU time it took
(``time.process_time``: other jobs on the machine barely move it, unlike wall time). Point
PYTHONPATH at another checkout's ``src`` to measure it side by side (issue #22's speed work).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from sides import study_module


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("config", type=Path)
    parser.add_argument("--condition", default="ensemble-randomized")
    parser.add_argument("--episodes", type=int, default=1600)
    args = parser.parse_args()
    import torch

    torch.set_num_threads(1)
    torch.optim.Adam([torch.zeros(1, requires_grad=True)])  # pay torch's lazy imports up front
    from sim2human.agents.policy import PolicyAgent

    train_config = study_module("condition").train_config
    load_study = study_module("config").load_study
    StudyWorld = study_module("world").StudyWorld
    from sim2human.store import collector
    from sim2human.train.ppo import train

    cfg = load_study(args.config, quick=True)
    cond = next(c for c in cfg.conditions if c.name == args.condition)
    world = StudyWorld.build(cfg)
    ppo = train_config(cfg, cond).model_copy(update={"episodes": args.episodes})
    agent = PolicyAgent(world.scenario, seed=0)
    collector.for_batch_work()
    started = time.process_time()
    train(agent, world.sampler(cond, 0), world.scenario, ppo, 0, condition=args.condition)
    cpu = time.process_time() - started
    print(
        json.dumps(
            {
                "config": str(args.config),
                "condition": args.condition,
                "episodes": args.episodes,
                "cpu_s": round(cpu, 2),
            }
        )
    )


if __name__ == "__main__":
    main()
