"""Which simulators predict people? A pool of a study's agents, played on every simulator family
and on every replayed real patient, and per family how well its gold predicts theirs.

The pool: each sub-run's final checkpoint and ``probes`` of the probe checkpoints it saved during
training (``train.eval_every``; ``store.layout.probe_updates``), picked by their place in
training alone (evenly spaced, the untrained one and the last, a copy of the final, left out),
never by a result. Every agent plays the same episodes (``rollout.evaluate``'s paired seeds) of
each training and programmatic held-out family's members, and of every visit of the ``aci-heldout``
family ("people": the 137 ACI-Bench valid and test patients replayed in their own words).

Per family, and per mixture of families (each family weighted equally), the Spearman rank
correlation between the family's gold and the real patients' gold across agents, and the mean
absolute gap, with the ``--human`` comparison's code (``human_eval.agreement``); the 95% CIs are
percentile bootstraps that resample agents, visits and each family's members together. The best
family is the one with the highest Spearman (``best``: it ranks agents as people do), the
closest the one with the smallest gap (``closest``: its score is people's); either is
*supported* when the CI of its paired margin over every other row lies above 0. The same table
is also computed over the agents of the conditions that are not ``frozen`` (by role, fixed
before any result), since frozen agents that fail everywhere make a rank correlation easy.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from sim2human.errors import RunDirError, UsageError
from sim2human.experiments.research.human_eval import agreement, agreement_draws, percentile_ci
from sim2human.experiments.study.config import StudyConfig
from sim2human.experiments.study.trained_agents import check_saved, load_saved, saved_agent
from sim2human.experiments.study.world import StudyWorld
from sim2human.population.ensemble import Ensemble
from sim2human.rollout.evaluate import evaluate
from sim2human.scenarios.intake.replay import encounter_ids
from sim2human.simulators.base import SimulatorSpec
from sim2human.simulators.kinds import is_programmatic
from sim2human.simulators.replay_families import corpus_missing, corpus_of
from sim2human.store.layout import RunLayout, probe_updates

PEOPLE = "aci-heldout"
"""The replayed real patients every agent is compared with (all valid and test visits)."""
FROZEN = "frozen"
N_BOOT = 1000
HELDOUT_MIX = "mix: held-out families"
TRAIN_MIX = "mix: training families"
ALL_MIX = "mix: all families"


@dataclass(frozen=True)
class PoolAgent:
    """One agent of the pool: a sub-run's final policy, or one saved at a probe."""

    condition: str
    role: str | None
    seed: int
    update: int | None
    """The PPO update after which it was saved; None for the final checkpoint."""
    checkpoint: Path

    @property
    def label(self) -> str:
        at = "final" if self.update is None else f"update-{self.update}"
        return f"{self.condition}/seed-{self.seed}/{at}"


@dataclass(frozen=True)
class Budget:
    """Episodes per simulator member and per real-patient visit."""

    per_member: int
    per_visit: int


def spaced(items: Sequence[Any], k: int) -> list[Any]:
    """``k`` items evenly spaced through ``items`` (by position only), without its ends."""
    n = len(items)
    return [items[(i + 1) * n // (k + 1)] for i in range(min(k, n))]


def build_pool(run_dir: Path, cfg: StudyConfig, probes: int) -> list[PoolAgent]:
    """Every sub-run's final agent and ``probes`` of its probe checkpoints (``spaced``; a
    language model's sub-run saves its final policy alone)."""
    pool = []
    for condition in cfg.conditions:
        for seed in cfg.seeds:
            sub = RunLayout(run_dir).sub_run(condition.name, seed)
            final = saved_agent(sub, cfg)
            saved = probe_updates(sub)
            inner = [(u, p) for u, p in saved if 0 <= u < saved[-1][0]] if saved else []
            chosen = [(None, final), *spaced(inner, probes)]
            for update, path in chosen:
                check_saved(path, cfg)  # every agent readable before any work starts
                pool.append(PoolAgent(condition.name, condition.role, seed, update, path))
    return pool


def people(world: StudyWorld, cfg: StudyConfig) -> tuple[SimulatorSpec, ...]:
    """Every visit of ``aci-heldout`` once, as the study's ensemble draws its members."""
    if why := corpus_of(PEOPLE).wrong_task(world.scenario):
        raise UsageError(
            f"predictivity compares agents with {PEOPLE}'s replayed patients, and {why}; "
            f"this run's scenario is {world.scenario.name!r}"
        )
    if why := corpus_missing([PEOPLE]):
        raise RunDirError(f"real patients ({PEOPLE}) not found: {why}")
    visits = len(encounter_ids(("valid", "test")))
    e = cfg.ensemble
    every = Ensemble.from_families(
        [],
        [PEOPLE],
        e.members_per_family,
        world.pool,
        e.seed,
        {PEOPLE: visits},
        world.heldout_pool,
    )
    return every.heldout


def simulator_families(world: StudyWorld) -> dict[str, tuple[str, tuple[SimulatorSpec, ...]]]:
    """family -> (split, its programmatic members): the training families, then the held out."""
    out: dict[str, tuple[str, list[SimulatorSpec]]] = {}
    for split, specs in (("train", world.ensemble.train), ("heldout", world.ensemble.heldout)):
        for s in specs:
            if is_programmatic(s):
                out.setdefault(s.family, (split, []))[1].append(s)
    return {f: (split, tuple(specs)) for f, (split, specs) in out.items()}


Played = dict[str, dict[str, list[float]]]
"""family (or ``PEOPLE``) -> member id -> the gold of each episode."""


def play_agent(
    agent: PoolAgent,
    cfg: StudyConfig,
    world: StudyWorld,
    members: Mapping[str, Sequence[SimulatorSpec]],
    budget: Budget,
    on_episode: Callable[[object], None] | None = None,
) -> Played:
    """One agent's gold on every member of every family (``members``; ``PEOPLE`` per visit)."""
    torch.set_num_threads(1)
    policy = load_saved(agent.checkpoint, cfg, world.scenario, agent.seed)
    played: Played = {}
    for family, specs in members.items():
        episodes = evaluate(
            policy,
            specs,
            world.scenario,
            split="heldout",
            per_member=budget.per_visit if family == PEOPLE else budget.per_member,
            condition=agent.label,
            on_episode=on_episode,
            max_turns=world.max_turns,
        )
        golds: dict[str, list[float]] = defaultdict(list)
        for e in episodes:
            golds[e.simulator_id].append(float(e.gold.success))
        played[family] = dict(golds)
    return played


def _matrix(played: Sequence[Played], family: str) -> np.ndarray:
    """agents x members: each member's mean gold (members in the first agent's order)."""
    ids = list(played[0][family])
    return np.array([[np.mean(p[family][m]) for m in ids] for p in played])


def _mixtures(splits: Mapping[str, str]) -> dict[str, list[str]]:
    held = [f for f, s in splits.items() if s == "heldout"]
    train = [f for f, s in splits.items() if s == "train"]
    mixes = {HELDOUT_MIX: held, TRAIN_MIX: train, ALL_MIX: [*train, *held]}
    return {k: v for k, v in mixes.items() if len(v) > 1}


def _draws(
    gold: Mapping[str, np.ndarray], rows: Mapping[str, list[str]], n_agents: int, seed: int
) -> Iterator[tuple[np.ndarray, dict[str, np.ndarray]]]:
    """Bootstrap draws: (people's gold, each row's gold) over one resample of the agents, the
    visits and every family's members, shared by all rows (so their differences pair)."""
    rng = np.random.default_rng(seed)
    for _ in range(N_BOOT):
        a = rng.integers(n_agents, size=n_agents)
        means = {
            f: m[a][:, rng.integers(m.shape[1], size=m.shape[1])].mean(axis=1)
            for f, m in gold.items()
        }
        yield means[PEOPLE], {r: np.mean([means[f] for f in fs], axis=0) for r, fs in rows.items()}


def predictivity(
    played: Sequence[Played], splits: Mapping[str, str], seed: int = 0
) -> dict[str, Any]:
    """Per family and mixture: Spearman and mean |gap| against ``PEOPLE`` across agents."""
    gold = {f: _matrix(played, f) for f in [*splits, PEOPLE]}
    rows = {**{f: [f] for f in splits}, **_mixtures(splits)}
    human = gold[PEOPLE].mean(axis=1)
    sims = {r: np.mean([gold[f].mean(axis=1) for f in fs], axis=0) for r, fs in rows.items()}
    rhos: dict[str, list[float | None]] = {r: [] for r in rows}
    gaps: dict[str, list[float]] = {r: [] for r in rows}
    for h, by_row in _draws(gold, rows, len(played), seed):
        for r, s in by_row.items():
            (rho,), (gap,) = agreement_draws([(s, h)])
            rhos[r].append(rho)
            gaps[r].append(gap)
    table = [
        {
            "family": r,
            "split": splits.get(r, "mixture"),
            "members": int(sum(gold[f].shape[1] for f in rows[r])),
            "sim_gold": float(sims[r].mean()),
            **agreement(sims[r], human, rhos[r], gaps[r]),
        }
        for r in rows
    ]
    return {
        "agents": len(played),
        "people_gold": float(human.mean()),
        "families": table,
        "best": _best(table, rhos, "spearman", 1.0),
        "closest": _best(table, gaps, "mean_abs_gap", -1.0),
    }


def _best(
    table: Sequence[dict[str, Any]],
    draws: Mapping[str, Sequence[float | None]],
    key: str,
    sign: float,
) -> Any:
    """The row best on ``key`` (highest for ``sign`` 1, lowest for -1) and its paired margin
    over each other row (positive: better), with the 95% CI of that margin over the draws."""
    ranked = [r for r in table if r[key] is not None]
    if not ranked:
        return None
    top = max(ranked, key=lambda r: sign * r[key])
    margins = {}
    for r in ranked:
        if r is top:
            continue
        pairs = zip(draws[top["family"]], draws[r["family"]], strict=True)
        diff = [sign * (a - b) for a, b in pairs if a is not None and b is not None]
        margins[r["family"]] = {
            "difference": sign * (top[key] - r[key]),
            "ci": percentile_ci(diff) if len(diff) > 10 else None,
        }
    above = [m["ci"] is not None and m["ci"][0] > 0 for m in margins.values()]
    return {"family": top["family"], "supported": bool(above) and all(above), "over": margins}


def agent_rows(pool: Sequence[PoolAgent], played: Sequence[Played]) -> list[dict[str, Any]]:
    """Each agent's mean gold per family and on the real patients (the table's raw data)."""
    return [
        {
            "agent": a.label,
            "condition": a.condition,
            "role": a.role,
            "seed": a.seed,
            "update": a.update,
            "gold": {f: float(np.mean([np.mean(v) for v in m.values()])) for f, m in p.items()},
        }
        for a, p in zip(pool, played, strict=True)
    ]


def summarise(
    pool: Sequence[PoolAgent],
    played: Sequence[Played],
    splits: Mapping[str, str],
    budget: Budget,
) -> dict[str, Any]:
    """predictivity.json: the pool, each agent's gold, and the tables (all agents; not frozen)."""
    learners = [i for i, a in enumerate(pool) if a.role != FROZEN]
    visits = len(played[0][PEOPLE]) if played else 0
    return {
        "people": PEOPLE,
        "visits": visits,
        "budget": {"per_member": budget.per_member, "per_visit": budget.per_visit},
        "bootstrap": N_BOOT,
        "all_agents": predictivity(played, splits),
        "not_frozen": predictivity([played[i] for i in learners], splits)
        if len(learners) >= 3
        else None,
        "agents": agent_rows(pool, played),
        "note": "Spearman and mean |gap| across agents against the replayed real patients' gold; "
        f"95% CIs: {N_BOOT} bootstrap draws resampling agents, visits and each family's members; "
        "the pool's probe checkpoints are picked by their place in training only",
    }
