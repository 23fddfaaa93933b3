"""Ensemble judging: every training episode is scored by k other members too, not only its own.

Each member's ``judge`` re-reads the finished transcript as that member would have scored it. The
trainer then trains on a conservative aggregate of the k + 1 scores (its own simulator's and the
panel's): the mean, the worst case, or mean - lambda * std, as reward-model ensembles do against
overoptimisation (Coste et al. 2023). A member whose score sits far above the panel's for the
same transcript is being exploited; ``evolve`` reads that disagreement when no gold is available.

How the aggregate enters the per-turn reward: the trainer rewards the change in the playing
member's satisfaction at each turn (potential-based shaping). With judging on, the *final*
potential is replaced by the aggregate, so the return of every episode equals the judged score
exactly (the intermediate potentials telescope away) while credit inside the call still follows
the playing member's turn-by-turn reactions. Judging every prefix would cost k judgements per
turn and the k judges' intermediate opinions add nothing to the return.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
from pydantic import Field

from sim2human import seeding
from sim2human.errors import UsageError
from sim2human.scenarios.core import AnyScenario
from sim2human.simulators.base import Simulator, SimulatorSpec
from sim2human.simulators.kinds import build_simulator
from sim2human.types import Episode, FrozenConfig

Aggregate = Literal["mean", "min", "mean-std"]


class JudgingConfig(FrozenConfig):
    """How a condition judges its training episodes (absent: its own simulator alone)."""

    k: int = Field(4, ge=1, le=1_000, description="other members judging each episode (<= 1000)")
    aggregate: Aggregate = "mean-std"
    lam: float = Field(1.0, ge=0.0, le=100.0, description="lambda of mean - lambda * std (<= 100)")


def combine(scores: Sequence[float], how: Aggregate, lam: float = 1.0) -> float:
    """The conservative aggregate of one episode's scores."""
    s = np.asarray(scores, dtype=float)
    if s.size == 0:
        raise ValueError("no scores to combine")
    if how == "mean":
        return float(s.mean())
    if how == "min":
        return float(s.min())
    return float(np.clip(s.mean() - lam * s.std(), 0.0, 1.0))


class JudgePanel:
    """k members (other than the one that played) re-score a transcript; draws are seeded."""

    def __init__(
        self, members: Sequence[SimulatorSpec], scenario: AnyScenario, k: int, seed: int = 0
    ) -> None:
        self.scenario = scenario
        self.k = k
        self.seed = seed
        self._judges: dict[str, Simulator] = {}
        self.members: tuple[SimulatorSpec, ...] = ()
        self.set_members(members)

    def set_members(self, members: Sequence[SimulatorSpec]) -> None:
        """Replace who sits on the panel (``evolve`` changes its population)."""
        self.members = tuple(members)
        for m in self.members:
            if m.id not in self._judges:
                self._judges[m.id] = build_simulator(m, self.scenario)

    def others(self, episode: Episode) -> list[float]:
        """Scores from up to k panel members other than the episode's own simulator."""
        pool = [m.id for m in self.members if m.id != episode.simulator_id]
        if not pool:
            raise UsageError("ensemble judging needs at least two members")
        rng = seeding.stream(self.seed, "judges", episode.seed, episode.simulator_id)
        picked = rng.choice(len(pool), size=min(self.k, len(pool)), replace=False)
        return [self._judges[pool[int(i)]].judge(episode) for i in sorted(picked)]


class EnsembleJudge:
    """The trainer's hook: (episode, own final satisfaction) -> the score to train on."""

    def __init__(self, panel: JudgePanel, cfg: JudgingConfig) -> None:
        self.panel = panel
        self.cfg = cfg

    def __call__(self, episode: Episode, own: float) -> float:
        return combine([own, *self.panel.others(episode)], self.cfg.aggregate, self.cfg.lam)
