"""Persona conversations per hour through the ``ray`` executor, against the number of Ray
workers (1 and 2), side by side in one run on this machine.

    .venv/bin/python benchmarks/bench_ray.py [--units N] [--per-unit K] [--rounds R]

A local Ray cluster (2 CPUs, no dashboard) runs the same work through ``RayExecutor`` with 1
worker and with 2, rounds alternating between them; the best round of each is kept (noise on a
shared machine only ever slows a round down). Each unit plays ``K`` conversations of the
scripted agent against the training families' persona members, the way a sub-run's evaluation
plays them, on actors that built the scenario and the members once. A round's rate counts from
the first unit's start to the last unit's end (the actors' start-up, printed beside it, is paid
once per study); the ratio says how close 2 workers come to twice one.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path
from typing import Any

import ray

from sim2human.experiments.executors.ray_executor import RayExecutor
from sim2human.experiments.executors.units import Ledger, Unit, Work


def _world(seed: int) -> Any:
    """What a worker builds once: the scenario, its agent and the members to play."""
    import torch

    torch.set_num_threads(1)
    from sim2human.agents.scripted import ScriptedAgent
    from sim2human.population.ensemble import Ensemble
    from sim2human.scenarios.intake.scenario import IntakeScenario
    from sim2human.simulators.base import QuirkPool

    scenario = IntakeScenario()
    pool = QuirkPool.from_acts(scenario.acts)
    members = Ensemble.from_families(["cooperative", "chatty", "anxious"], [], 4, pool, seed).train
    return scenario, ScriptedAgent(scenario), members


def _play(world: Any, base: int, n: int) -> tuple[float, float]:
    """Play ``n`` fresh conversations (seeds from ``base``); when it started and ended."""
    from sim2human.rollout.conversation import Job
    from sim2human.rollout.play import play

    started = time.time()
    scenario, agent, members = world
    jobs = [Job(members[k % len(members)], base + k) for k in range(n)]
    assert len(play(agent, jobs, scenario, batch_size=32, max_turns=20)) == n
    return started, time.time()


def measure(workers: int, units: int, per_unit: int, base: int) -> tuple[float, float]:
    """One pass of ``units`` units of ``per_unit`` conversations on ``workers`` actors:
    conversations per hour from the first unit's start to the last one's end (the actors'
    start-up left out: a study pays it once), and the start-up in seconds."""
    todo = [Unit(f"u{k}", f"u{k}", (base + k * per_unit, per_unit)) for k in range(units)]
    ledger = Ledger.of(Path("."), todo)  # units with no ``out``: nothing is written
    begun = time.time()
    RayExecutor(workers, {}).run(
        Work(_play, _world, 0), todo, ledger, advance=_ignore, retries=0, note=print
    )
    spans = list(ledger.values.values())
    assert len(spans) == units
    first, last = min(s for s, _ in spans), max(e for _, e in spans)
    return units * per_unit / (last - first) * 3600, first - begun


def _ignore(_: int) -> None:
    pass


def _start_cluster() -> None:
    """A local cluster of 2 CPUs, patient with a loaded machine (Ray gives its node 30 s)."""
    os.environ.setdefault("RAY_agent_register_timeout_ms", "180000")
    for attempt in (1, 2, 3):
        try:
            ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
            return
        except Exception:
            ray.shutdown()
            if attempt == 3:
                raise


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--units", type=int, default=8, help="units per pass (default 8)")
    parser.add_argument("--per-unit", type=int, default=400, help="conversations per unit")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    _start_cluster()
    best: dict[int, float] = {1: 0.0, 2: 0.0}
    try:
        for r in range(args.rounds):
            for workers in (1, 2):
                base = 1_000_000 * (1 + r) + 100_000 * workers  # fresh conversations each pass
                rate, startup = measure(workers, args.units, args.per_unit, base)
                best[workers] = max(best[workers], rate)
                print(
                    f"round {r + 1}, {workers} worker(s): {rate:,.0f} conversations/hour "
                    f"(actors started in {startup:.1f} s)"
                )
    finally:
        ray.shutdown()
    print(
        f"persona conversations/hour on a local Ray cluster ({os.cpu_count()} cores), best of "
        f"{args.rounds} rounds, {args.units} units x {args.per_unit} conversations"
    )
    print(f"{'workers':<10}{'conv/hour':>14}{'ratio':>8}")
    for workers, rate in best.items():
        print(f"{workers:<10}{rate:>14,.0f}{rate / best[1]:>7.2f}x")


if __name__ == "__main__":
    main()
