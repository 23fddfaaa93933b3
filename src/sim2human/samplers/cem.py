"""The cross-entropy method over the scaled trait box: propose members the agent fails with.

Each ``evolve`` round refits a diagonal Gaussian to the hardest members seen so far (the elite:
highest difficulty for the current agent) and draws new candidates from it. Fitness comes from
the members' own training episodes, so the search costs no extra rollouts. Hand-written: the
method is a dozen lines of numpy, and its fitness arrives one round at a time from training,
which an ask/tell library would add nothing to.
"""

from __future__ import annotations

import numpy as np


class CEM:
    def __init__(
        self,
        init: np.ndarray,
        *,
        elite_frac: float = 0.25,
        smoothing: float = 0.5,
        min_std: float = 0.05,
    ) -> None:
        self.mean = init.mean(axis=0)
        self.std = np.maximum(init.std(axis=0), min_std)
        self.elite_frac = elite_frac
        self.smoothing = smoothing
        self.min_std = min_std

    def propose(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """n candidates in [0, 1]^d."""
        return np.clip(rng.normal(self.mean, self.std, (n, self.mean.size)), 0.0, 1.0)

    def fit(self, points: np.ndarray, fitness: np.ndarray) -> None:
        """Move toward the elite (highest fitness) of ``points``."""
        if len(points) == 0:
            return
        n_elite = max(1, round(self.elite_frac * len(points)))
        elite = points[np.argsort(-fitness, kind="stable")[:n_elite]]
        a = self.smoothing
        self.mean = (1 - a) * self.mean + a * elite.mean(axis=0)
        self.std = np.maximum((1 - a) * self.std + a * elite.std(axis=0), self.min_std)
