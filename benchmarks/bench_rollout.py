"""Persona rollout throughput (turns/s on one core), this checkout against a baseline, side by side.

    .venv/bin/python benchmarks/bench_rollout.py [--baseline REF] [--episodes N] [--rounds K]

The baseline (default: the commit before the rollout speed-ups) is checked out into a temporary
git worktree and measured in a subprocess with the same script, so both sides run the same
workload on the same machine in one run: the training families' members played by the scripted
agent and by an untrained policy agent (the mix a study's training runs), one thread each.
Rounds alternate between the two sides; the best round of each is reported (noise on a shared
machine only ever slows a round down). The current side is measured twice: as a library call
plays (the interpreter's default garbage collector) and as a study's worker process plays, after
``collector.for_batch_work()`` (rows marked "worker gc"); both are set against the baseline's
plain rows, since its workers ran with the default collector. Each measurement plays fresh
episode seeds, so no round replays conversations an earlier one left in the extractor's memo.
"""

from __future__ import annotations

import argparse
import json
import time

from sides import best_of, run_child

BASELINE = "ffd52aa"
"""main before issue #10's rollout work."""


def measure(episodes: int) -> dict[str, float]:
    """Turns per second of this interpreter's ``sim2human`` (whichever checkout is on the path)."""
    import torch

    torch.set_num_threads(1)
    from sim2human.agents.policy import PolicyAgent
    from sim2human.agents.scripted import ScriptedAgent
    from sim2human.population.ensemble import Ensemble
    from sim2human.simulators.base import QuirkPool

    try:  # the layered tree (#11)
        from sim2human.rollout.conversation import Job
        from sim2human.rollout.play import play
        from sim2human.scenarios.intake.scenario import IntakeScenario
    except ImportError:  # the baseline's flat modules
        from sim2human.rollout import Job, play  # type: ignore[attr-defined,no-redef]
        from sim2human.scenarios.intake import IntakeScenario  # type: ignore[attr-defined,no-redef]

    scenario = IntakeScenario()
    pool = QuirkPool.from_acts(scenario.acts)
    ensemble = Ensemble.from_families(["cooperative", "chatty", "anxious"], [], 4, pool, 0)
    members = ensemble.train
    jobs = [Job(members[k % len(members)], 50_000 + k) for k in range(episodes)]
    warm = [Job(j.spec, 10_000 + k) for k, j in enumerate(jobs[:64])]
    play(ScriptedAgent(scenario), warm, scenario, max_turns=20)  # imports, tables, word caches
    out: dict[str, float] = {}

    def rounds(label: str, seed_base: int) -> None:
        fresh = [Job(j.spec, seed_base + k) for k, j in enumerate(jobs)]
        agents = (("scripted", ScriptedAgent(scenario)), ("policy", PolicyAgent(scenario)))
        for name, agent in agents:
            started = time.perf_counter()
            played = play(agent, fresh, scenario, batch_size=32, max_turns=20)
            wall = time.perf_counter() - started
            out[name + label] = sum(len(e.turns) for e in played) / wall

    rounds("", 50_000)
    try:  # a study's worker process tunes the garbage collector before it plays (store.collector)
        from sim2human.store import collector
    except ImportError:  # the baseline has no such step: its workers ran with the defaults
        return out
    collector.for_batch_work()
    rounds(WORKER, 150_000)  # fresh conversations of the same members, as a worker plays them
    return out


WORKER = " (worker gc)"
"""Rows measured after ``collector.for_batch_work()``, as a study's workers play; compared with
the baseline's plain rows, since its workers ran with the default collector."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--baseline", default=BASELINE, help="git ref to compare against")
    parser.add_argument("--episodes", type=int, default=600)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.episodes)))
        return
    best = best_of(
        args.baseline,
        args.rounds,
        lambda src: run_child(__file__, src, ["--episodes", str(args.episodes)], 900),
    )
    print(f"persona turns/s on one core, best of {args.rounds} rounds, {args.episodes} episodes")
    print(f"{'agent':<22}{'baseline ' + args.baseline:>20}{'current':>12}{'ratio':>8}")
    for agent in best["current"]:
        b, c = best["baseline"][agent.removesuffix(WORKER)], best["current"][agent]
        print(f"{agent:<22}{b:>20,.0f}{c:>12,.0f}{c / b:>7.2f}x")


if __name__ == "__main__":
    main()
