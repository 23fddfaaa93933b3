"""``plr``: Prioritized Level Replay (Jiang et al. 2021) over (member, profile seed) levels.

With probability ``replay_prob`` (once ``min_levels`` levels are scored) the next episode replays
a stored level drawn from P = (1 - rho) P_S + rho P_C, else it plays a new level (a uniform
member and a fresh seed). P_S is rank prioritisation with temperature beta,
P_S(i) = h_i^(1/beta) / sum_j h_j^(1/beta), h_i = 1 / rank(S_i) (rank 1 = highest score);
P_C is staleness, P_C(i) = (c - C_i) / sum_j (c - C_j), c the episodes drawn so far and C_i the
draw at which level i was last played. A level's score S is, by ``score``:
- ``gae`` (default): mean |GAE| over its latest episode's steps (needs no gold);
- ``gap``: proxy minus gold success of its latest episode (only with ``oracle_gold``).
When the buffer is full a new level replaces the lowest-scored one if it scores higher.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
from pydantic import Field

from sim2human.errors import UsageError
from sim2human.samplers.feedback import BatchInfo
from sim2human.simulators.base import SimulatorSpec
from sim2human.types import Episode, FrozenConfig

Level = tuple[str, int]
"""(member id, profile seed)."""


class PLRArgs(FrozenConfig):
    score: Literal["gae", "gap"] = "gae"
    beta: float = Field(
        0.1, gt=0.0, le=100.0, description="temperature of rank prioritisation (<= 100)"
    )
    rho: float = Field(0.1, ge=0.0, le=1.0, description="weight of the staleness term")
    replay_prob: float = Field(0.5, ge=0.0, le=1.0)
    buffer: int = Field(256, ge=1, le=100_000, description="levels kept (<= 10^5)")
    min_levels: int = Field(
        32, ge=1, le=100_000, description="scored levels before replay starts (<= 10^5)"
    )


def plr_distribution(
    scores: np.ndarray, last_played: np.ndarray, now: int, beta: float, rho: float
) -> np.ndarray:
    """P = (1 - rho) P_S + rho P_C for the stored levels (the formula of the module docstring)."""
    order = np.argsort(-scores, kind="stable")
    ranks = np.empty(len(scores))
    ranks[order] = np.arange(1, len(scores) + 1)
    h = (1.0 / ranks) ** (1.0 / beta)
    p_s = h / h.sum()
    stale = np.maximum(now - last_played, 0).astype(float)
    p_c = stale / stale.sum() if stale.sum() > 0 else np.full(len(scores), 1.0 / len(scores))
    return np.asarray((1 - rho) * p_s + rho * p_c)


class PLRSampler:
    name = "plr"

    def __init__(
        self, members: Sequence[SimulatorSpec], args: PLRArgs, *, oracle_gold: bool = False
    ) -> None:
        if not members:
            raise UsageError("sampler 'plr' needs at least one training member")
        if args.score == "gap" and not oracle_gold:
            raise UsageError(
                "sampler 'plr': score 'gap' reads gold outcomes; set 'oracle_gold: true' on the "
                "condition to allow that, or use score 'gae'"
            )
        self.members = {m.id: m for m in members}
        self.order = tuple(self.members)
        self.args = args
        self.levels: list[Level] = []
        self.scores: list[float] = []
        self.last_played: list[int] = []
        self.drawn = 0
        self._played: dict[Level, int] = {}
        self._events: list[dict[str, object]] = []

    def next(self, rng: np.random.Generator) -> SimulatorSpec:
        return self.next_level(rng)[0]

    def next_level(self, rng: np.random.Generator) -> tuple[SimulatorSpec, int]:
        self.drawn += 1
        a = self.args
        if len(self.levels) >= a.min_levels and rng.random() < a.replay_prob:
            p = self.distribution()
            i = int(rng.choice(len(self.levels), p=p))
            self.last_played[i] = self.drawn
            member, seed = self.levels[i]
        else:
            member = self.order[int(rng.integers(len(self.order)))]
            seed = int(rng.integers(2**31))
        self._played[(member, seed)] = self.drawn
        return self.members[member], seed

    def distribution(self) -> np.ndarray:
        """The replay distribution over the stored levels, in ``self.levels`` order."""
        return plr_distribution(
            np.asarray(self.scores),
            np.asarray(self.last_played),
            self.drawn,
            self.args.beta,
            self.args.rho,
        )

    def update(self, episodes: Sequence[Episode], info: BatchInfo | None = None) -> None:
        if self.args.score == "gae":
            if info is None or len(info.abs_advantage) != len(episodes):
                raise UsageError("sampler 'plr' (score 'gae') needs the trainer's advantages")
            scores = list(info.abs_advantage)
        else:
            scores = [e.proxy - float(e.gold.success) for e in episodes]
        for e, s in zip(episodes, scores, strict=True):
            if e.simulator_id in self.members:
                self._score((e.simulator_id, e.seed), s)

    def _score(self, level: Level, score: float) -> None:
        played = self._played.pop(level, self.drawn)
        if level in self.levels:
            i = self.levels.index(level)
            self.scores[i] = score
            return
        if len(self.levels) < self.args.buffer:
            self.levels.append(level)
            self.scores.append(score)
            self.last_played.append(played)
            return
        worst = int(np.argmin(self.scores))
        if score > self.scores[worst]:
            self.levels[worst], self.scores[worst], self.last_played[worst] = level, score, played

    def shares(self) -> dict[str, float]:
        """Each member's chance of playing the next episode (replay and new levels together)."""
        n = len(self.order)
        replay = self.args.replay_prob if len(self.levels) >= self.args.min_levels else 0.0
        out = dict.fromkeys(self.order, (1 - replay) / n)
        if replay:
            for (member, _), p in zip(self.levels, self.distribution(), strict=True):
                out[member] += replay * float(p)
        return out

    def drain_events(self) -> list[dict[str, object]]:
        out, self._events = self._events, []
        return out
