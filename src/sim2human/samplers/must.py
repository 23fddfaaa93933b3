"""``must``: adaptive sampling over fixed members, after MUST_adaptive (Liu et al., ACL 2023).

Warm-up with uniform sampling; then every ``every_episodes`` episodes estimate each member's
success x_j over its recent episodes, add the exploration term of the paper,
x_hat_j = x_j + sqrt(2 ln t / T_j) (t: episodes so far, T_j: episodes on member j), and sample
p_j proportional to z_j = 1 / (x_hat_j - tau * min_k x_k): members the agent does worst on get
the most episodes, and every member keeps some (never argmax), which is what keeps the agent from
forgetting the easy ones.

Success is the member's own satisfaction score (the proxy) unless the condition sets
``oracle_gold``, in which case it is the gold success rate on that member.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

import numpy as np
from pydantic import Field

from sim2human.errors import UsageError
from sim2human.samplers.feedback import BatchInfo
from sim2human.simulators.base import SimulatorSpec
from sim2human.types import Episode, FrozenConfig

EPS = 1e-3
"""Keeps z finite when every member's success estimate is the same as tau * min."""


MAX_EPISODES = 10_000_000
"""A study's training budget at most (``train.config.MAX_EPISODES``)."""


class MustArgs(FrozenConfig):
    warmup_episodes: int = Field(
        640, ge=0, le=MAX_EPISODES, description="uniform sampling before adapting (<= 10^7)"
    )
    every_episodes: int = Field(
        256, ge=1, le=MAX_EPISODES, description="e: episodes between re-estimates (<= 10^7)"
    )
    window: int = Field(
        64, ge=1, le=100_000, description="recent episodes per member behind x_j (<= 10^5)"
    )
    tau: float = Field(0.75, ge=0.0, le=1.0, description="weight of min_k x_k in z_j")
    min_share: float = Field(
        0.0, ge=0.0, lt=1.0, description="floor on any member's share (0: none; below 1)"
    )


class MustSampler:
    name = "must"

    def __init__(
        self, members: Sequence[SimulatorSpec], args: MustArgs, *, oracle_gold: bool = False
    ) -> None:
        if not members:
            raise UsageError("sampler 'must' needs at least one training member")
        if args.min_share * len(members) >= 1.0:
            raise UsageError(
                f"sampler 'must': min_share {args.min_share} x {len(members)} members is >= 1"
            )
        self.members = tuple(members)
        self.index = {m.id: i for i, m in enumerate(self.members)}
        self.args = args
        self.oracle_gold = oracle_gold
        self.p = np.full(len(members), 1.0 / len(members))
        self.recent: list[deque[float]] = [deque(maxlen=args.window) for _ in members]
        self.counts = np.zeros(len(members), dtype=np.int64)
        self.seen = 0
        self.last_estimate = 0
        self._events: list[dict[str, object]] = []

    def next(self, rng: np.random.Generator) -> SimulatorSpec:
        return self.members[int(rng.choice(len(self.members), p=self.p))]

    def update(self, episodes: Sequence[Episode], info: BatchInfo | None = None) -> None:
        for e in episodes:
            j = self.index.get(e.simulator_id)
            if j is None:
                continue
            self.recent[j].append(float(e.gold.success) if self.oracle_gold else e.proxy)
            self.counts[j] += 1
        self.seen += len(episodes)
        a = self.args
        if self.seen < a.warmup_episodes or self.seen - self.last_estimate < a.every_episodes:
            return
        if self.last_estimate == 0:
            reason = "warm-up over: sampling by estimated success"
            self._events.append({"kind": "adapt", "episodes_seen": self.seen, "reason": reason})
        self.last_estimate = self.seen
        self.p = self.probabilities()

    def success(self) -> np.ndarray:
        """x_j: mean success over each member's recent episodes (0.5 before it has any)."""
        return np.asarray([np.mean(r) if r else 0.5 for r in self.recent])

    def probabilities(self) -> np.ndarray:
        """p_j from the current estimates (the formula of the module docstring)."""
        x = self.success()
        t = max(2, int(self.counts.sum()))
        bonus = np.sqrt(2 * np.log(t) / np.maximum(self.counts, 1))
        x_hat = x + bonus
        z = 1.0 / np.maximum(x_hat - self.args.tau * x.min(), EPS)
        p = z / z.sum()
        floor = self.args.min_share
        if floor > 0:
            p = floor + (1 - floor * len(p)) * p
        return np.asarray(p / p.sum())

    def shares(self) -> dict[str, float]:
        return {m.id: float(p) for m, p in zip(self.members, self.p, strict=True)}

    def drain_events(self) -> list[dict[str, object]]:
        out, self._events = self._events, []
        return out
