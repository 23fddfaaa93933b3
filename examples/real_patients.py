"""Every trained agent of a study run on *all* held-out real patients, with CIs over visits.

    .venv/bin/python examples/real_patients.py RUN_DIR [--config YAML [--quick]] [--episodes 2]
        [--family aci-train [--unseen]] [--failures]

(the corpus from ``../shared/data`` or ``$SIM2HUMAN_DATA``, as for ``sim2human study``).

A study evaluates on the ``aci-heldout`` members its config names (the quick demo: 16 visits,
8 episodes each), and its CIs resample seeds, then episodes: they say nothing about which visits
were drawn, which is most of the variance with real patients. This replays every sub-run's
final checkpoint (and the scripted reference) on every visit of the family, ``--episodes``
each, and bootstraps over visits (then episodes within a visit). Nothing in the run is changed.

``--family aci-train``: the train split's visits instead, the ones to design an improvement on
(never on ``aci-heldout``); ``--unseen``: only those of its visits that no condition of the
study mixes into training (a validation part of the train split, for a ``mix`` of that family);
``--failures``: also the "why real people fail" breakdown (``diagnostics.failures``) of those
calls.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import torch

from sim2human.agents.base import Agent
from sim2human.agents.policy import PolicyAgent
from sim2human.agents.scripted import ScriptedAgent
from sim2human.diagnostics.failures import real_failures
from sim2human.experiments.research.predictivity import PEOPLE
from sim2human.experiments.study.config import load_run_config, load_study
from sim2human.experiments.study.world import StudyWorld
from sim2human.metrics.outcomes import cluster_bootstrap, fmt_estimate
from sim2human.population.ensemble import Ensemble
from sim2human.report.failures import failures_section
from sim2human.rollout.evaluate import evaluate
from sim2human.types import Episode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--episodes", type=int, default=2, help="episodes per visit")
    parser.add_argument(
        "--config", type=Path, default=None, help="the study file (default: the run's config.yaml)"
    )
    parser.add_argument("--quick", action="store_true", help="with --config: the run was --quick")
    parser.add_argument("--family", default=PEOPLE, help="a replay family (default aci-heldout)")
    parser.add_argument(
        "--unseen", action="store_true", help="only visits no condition mixes into training"
    )
    parser.add_argument("--failures", action="store_true", help="print why the calls failed")
    args = parser.parse_args()
    torch.set_num_threads(1)
    cfg = (
        load_run_config(args.run_dir)
        if args.config is None
        else load_study(args.config, quick=args.quick)
    )
    world = StudyWorld.build(cfg)
    e = cfg.ensemble
    every = Ensemble.from_families(
        [], [args.family], e.members_per_family, world.pool, e.seed, {args.family: "all"}
    ).heldout
    if args.unseen:
        seen = {s.id for c in cfg.conditions for s in world.mixed(c)}
        every = tuple(s for s in every if s.id not in seen)
    visits = len({s.id for s in every})
    games: dict[str, list[Episode]] = {}
    frozen = {c.name for c in cfg.conditions if c.role == "frozen"}

    def play(agent: Agent, label: str) -> list[tuple[float, str]]:
        played = evaluate(
            agent,
            every,
            world.scenario,
            split="heldout",
            per_member=args.episodes,
            condition=label,
            max_turns=world.max_turns,
        )
        games.setdefault(label, []).extend(played)
        return [(float(ep.gold.success), ep.simulator_id) for ep in played]

    rows: dict[str, list[list[tuple[float, str]]]] = {}
    for sub in sorted(args.run_dir.glob("conditions/*/seed-*")):
        agent = PolicyAgent.load(sub / "checkpoint.pt", world.scenario)
        rows.setdefault(sub.parent.name, []).append(play(agent, sub.parent.name))
    unseen = " (visits no condition trains on)" if args.unseen else ""
    rows["scripted (reference)"] = [play(ScriptedAgent(world.scenario), "scripted (reference)")]
    print(
        f"{args.family}{unseen}: {visits} visits x {args.episodes} episodes per agent; gold %, "
        "95% CI resampling visits (seeds pooled), then each seed's agent alone"
    )
    print("| condition | real patients: gold | n episodes | per seed |")
    print("|---|---:|---:|---|")
    for name, seeds in rows.items():
        pooled = [pair for played in seeds for pair in played]
        per_seed = ", ".join(_pct(played) for played in seeds)
        print(f"| {name} | {_pct(pooled)} | {len(pooled)} | {per_seed} |")
    if args.failures:
        print("\n".join(["", *failures_section(real_failures(games, frozen))]))


def _pct(pairs: list[tuple[float, str]]) -> str:
    return fmt_estimate(cluster_bootstrap([g for g, _ in pairs], [v for _, v in pairs]))


if __name__ == "__main__":
    main()
