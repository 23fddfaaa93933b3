"""Training throughput (episodes/s on one core), this checkout against a baseline, side by side.

    .venv/bin/python benchmarks/bench_training.py [--baseline REF] [--episodes N] [--rounds K]
        [--condition NAME]

One sub-run of the quick demo (``examples/collapse.yaml``: by default the perturbation-trained
ensemble, with its full ranges from the first episode on both sides, the baseline having no
``perturb_ramp``) trains for ``--episodes`` episodes: rollouts, PPO updates and
the held-out curve, as ``sim2human study`` runs them, minus the final evaluation. The baseline is
checked out into a temporary git worktree and run in a subprocess with the same script; rounds
alternate between the sides and the best round of each is reported (noise on a shared machine
only ever slows a round down). Each side trains as its own study workers did: the current one
after ``collector.for_batch_work()``. Wall time per sub-run is what the demo's 90 s target is
made of: the demo runs 10 sub-runs on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from sides import best_of, run_child, study_module

if TYPE_CHECKING:
    from sim2human.types import Episode

BASELINE = "4eafc12"
"""main before the numpy policy mirror and the one-draw-per-turn perturbations."""


def measure(config: Path, condition: str, episodes: int) -> dict[str, float]:
    """Episodes per second of this interpreter's ``sim2human`` (whichever checkout is on the
    path), after imports and worker start-up."""
    import torch

    torch.set_num_threads(1)
    torch.optim.Adam([torch.zeros(1, requires_grad=True)])  # pay torch's lazy imports up front
    from sim2human.agents.policy import PolicyAgent

    train_config = study_module("condition").train_config
    load_study = study_module("config").load_study
    StudyWorld = study_module("world").StudyWorld
    from sim2human.train.ppo import train

    cfg = load_study(config, quick=True)
    cond = next(c for c in cfg.conditions if c.name == condition)
    if getattr(cond, "perturb_ramp", 0.0):  # the same work on both sides: full ranges throughout
        cond = cond.model_copy(update={"perturb_ramp": 0.0})
    world = StudyWorld.build(cfg)
    ppo = train_config(cfg, cond).model_copy(update={"episodes": episodes})
    agent = PolicyAgent(world.scenario, seed=0)
    turns = 0

    def count(_: object, played: Sequence[Episode]) -> None:
        nonlocal turns
        turns += sum(len(e.turns) for e in played)

    try:  # as a study's worker process runs it (the baseline's workers had no such step)
        from sim2human.store import collector

        collector.for_batch_work()
    except ImportError:
        pass
    started = time.perf_counter()
    train(
        agent, world.sampler(cond, 0), world.scenario, ppo, 0, condition=condition, on_update=count
    )
    wall = time.perf_counter() - started
    return {"episodes_per_s": episodes / wall, "turns_per_s": turns / wall}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--baseline", default=BASELINE, help="git ref to compare against")
    parser.add_argument("--condition", default="ensemble-randomized+perturb")
    parser.add_argument("--episodes", type=int, default=1600)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--config", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.config, args.condition, args.episodes)))
        return

    def side(src: Path) -> dict[str, float]:
        config = src.parent / "examples" / "collapse.yaml"  # each side reads its own
        args_ = [
            "--config",
            str(config),
            "--condition",
            args.condition,
            "--episodes",
            str(args.episodes),
        ]
        return run_child(__file__, src, args_, 1800)

    sides = best_of(args.baseline, args.rounds, side)
    best = {f"{side} {k}": v for side, row in sides.items() for k, v in row.items()}
    print(
        f"{args.condition}: {args.episodes} training episodes on one core, best of "
        f"{args.rounds} rounds"
    )
    print(f"{'':<14}{'baseline ' + args.baseline:>20}{'current':>12}{'ratio':>8}")
    for key in ("episodes_per_s", "turns_per_s"):
        b, c = best[f"baseline {key}"], best[f"current {key}"]
        print(f"{key:<14}{b:>20,.1f}{c:>12,.1f}{c / b:>7.2f}x")
    b, c = best["baseline episodes_per_s"], best["current episodes_per_s"]
    print(f"6,400 episodes: {6400 / b:.0f} s -> {6400 / c:.0f} s per sub-run")


if __name__ == "__main__":
    main()
