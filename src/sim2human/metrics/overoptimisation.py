"""Overoptimisation: Gao, Schulman & Hilton (2022)'s RL form of the gold reward against the
optimisation distance d = sqrt(KL(pi || pi_init)): R(d) = d (alpha - beta log d), fitted by least
squares to the held-out gold gained since d = 0; it peaks at d* = exp(alpha / beta - 1).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from sim2human.metrics.collapse import N_BOOT
from sim2human.types import Frozen


class EvalPoint(Frozen):
    """Held-out gold of one training run at one evaluation point during training."""

    run: str
    update: int
    d: float
    gold: float
    n: int


class OverFit(Frozen):
    """The fit of R(d) = d (alpha - beta log d) to held-out gold gained since d = 0."""

    alpha: float
    beta: float
    alpha_ci: tuple[float, float]
    beta_ci: tuple[float, float]
    baseline: float
    """Held-out gold at d = 0 (the untrained policy): R(d) is the gain over it."""
    r2: float
    n_points: int
    d_max: float
    d_star: float | None
    """The peak, exp(alpha / beta - 1); None when beta <= 0 (no peak: gold still rising)."""
    gold_at_peak: float | None
    """Fitted held-out gold at d* (baseline + d* beta)."""
    peak_observed: bool
    """d* lies inside the range of d that training reached, so gold rose, peaked and fell."""
    stop: dict[str, int]
    """Training run -> the update of the evaluation point a user should have stopped at."""


def _lstsq(d: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    dlog = np.where(d > 0, d * np.log(np.where(d > 0, d, 1.0)), 0.0)
    x = np.stack([d, -dlog], axis=1)
    (alpha, beta), *_ = np.linalg.lstsq(x, y, rcond=None)
    return float(alpha), float(beta)


def _curve(d: np.ndarray, alpha: float, beta: float) -> np.ndarray:
    safe = np.where(d > 0, d, 1.0)
    return np.where(d > 0, d * (alpha - beta * np.log(safe)), 0.0)


def overopt_curve(fit: OverFit, d: Sequence[float]) -> list[float]:
    """Fitted held-out gold (baseline included) at each ``d``, for plots."""
    return [fit.baseline + float(v) for v in _curve(np.asarray(d, float), fit.alpha, fit.beta)]


def fit_overoptimisation(
    points: Sequence[EvalPoint], *, n_boot: int = N_BOOT, seed: int = 0
) -> OverFit | None:
    """Fit R(d) to the evaluation points of one condition (all its runs pooled).

    Points at d = 0 (the untrained policy) give the baseline; without them the lowest-d point
    does. None when there are fewer than three points or all d are 0. CIs bootstrap the points.
    """
    if len(points) < 3:
        return None
    d = np.asarray([p.d for p in points], float)
    g = np.asarray([p.gold for p in points], float)
    if float(d.max()) <= 0:
        return None
    base_sel = d == 0 if np.any(d == 0) else d == d.min()
    baseline = float(g[base_sel].mean())
    y = g - baseline
    alpha, beta = _lstsq(d, y)
    resid = y - _curve(d, alpha, beta)
    total = float(((y - y.mean()) ** 2).sum())
    r2 = 1 - float((resid**2).sum()) / total if total > 0 else 0.0
    rng = np.random.default_rng(seed)
    boots = np.asarray(
        [
            _lstsq(d[idx], y[idx])
            for idx in (rng.integers(len(d), size=len(d)) for _ in range(n_boot))
        ]
    )
    a_ci = tuple(float(v) for v in np.quantile(boots[:, 0], [0.025, 0.975]))
    b_ci = tuple(float(v) for v in np.quantile(boots[:, 1], [0.025, 0.975]))
    d_star = math.exp(alpha / beta - 1) if beta > 0 and alpha / beta < 50 else None
    stop: dict[str, int] = {}
    for run in sorted({p.run for p in points}):
        mine = [p for p in points if p.run == run and p.d > 0]
        if mine:
            target = d_star if d_star is not None else max(p.d for p in mine)
            stop[run] = min(mine, key=lambda p: (abs(p.d - target), p.update)).update
    return OverFit(
        alpha=alpha,
        beta=beta,
        alpha_ci=(a_ci[0], a_ci[1]),
        beta_ci=(b_ci[0], b_ci[1]),
        baseline=baseline,
        r2=r2,
        n_points=len(points),
        d_max=float(d.max()),
        d_star=d_star,
        gold_at_peak=None if d_star is None else baseline + d_star * beta,
        peak_observed=d_star is not None and float(d[d > 0].min()) < d_star < float(d.max()),
        stop=stop,
    )
