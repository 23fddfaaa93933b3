"""Tails and learning speed: worst-decile held-out gold, and episodes to reach a target.

Worst decile: per held-out member, the gold success rate; then the mean over the worst 10% of
members (at least one). Its CI resamples seeds, then episodes within each member of each seed,
the same two levels as ``cluster_bootstrap``.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from sim2human.metrics.outcomes import Estimate
from sim2human.types import Episode

DECILE = 0.1


def worst_decile(rates: Sequence[float], share: float = DECILE) -> float:
    """Mean of the lowest ``ceil(share * n)`` values (at least one)."""
    if not rates:
        return float("nan")
    k = max(1, math.ceil(share * len(rates)))
    return float(np.mean(sorted(rates)[:k]))


def _by_member(episodes: Sequence[Episode]) -> list[np.ndarray]:
    groups: dict[str, list[float]] = defaultdict(list)
    for e in episodes:
        groups[e.simulator_id].append(float(e.gold.success))
    return [np.asarray(v) for _, v in sorted(groups.items())]


def _resampled_worst(
    members: Sequence[np.ndarray], shape: tuple[int, int], rng: np.random.Generator
) -> np.ndarray:
    sizes = np.asarray([m.size for m in members])
    rates = np.asarray([float(m.mean()) for m in members])
    resampled = rng.binomial(sizes, rates, size=(*shape, len(members))) / sizes
    k = max(1, math.ceil(DECILE * len(members)))
    out: np.ndarray = np.sort(resampled, axis=-1)[..., :k].mean(axis=-1)
    return out


def worst_decile_estimate(
    by_seed: Mapping[int, Sequence[Episode]], *, n_boot: int = 1000, seed: int = 0
) -> Estimate:
    """Mean over seeds of each seed's worst-decile held-out gold, with a two-level bootstrap CI."""
    seeds = [_by_member([e for e in eps if e.split == "heldout"]) for eps in by_seed.values()]
    seeds = [s for s in seeds if s]
    if not seeds:
        return Estimate(mean=float("nan"), ci=(float("nan"), float("nan")), n=0)
    point = float(np.mean([worst_decile([float(m.mean()) for m in s]) for s in seeds]))
    rng = np.random.default_rng(seed)
    # Resampling a member's episodes with replacement is a binomial draw of its successes, so
    # every replicate is drawn at once: draws[s][b, j] is seed s's resampled worst decile for
    # replicate b, position j (each pick of a seed gets a fresh resample, as in a loop).
    width = len(seeds)
    draws = np.stack([_resampled_worst(s, (n_boot, width), rng) for s in seeds])
    picked = rng.integers(width, size=(n_boot, width))
    boots = draws[picked, np.arange(n_boot)[:, None], np.arange(width)].mean(axis=1)
    lo, hi = np.quantile(boots, [0.025, 0.975])
    n = sum(int(m.size) for s in seeds for m in s)
    return Estimate(mean=point, ci=(float(lo), float(hi)), n=n)


def curve_mean(curves: Sequence[Sequence[Mapping[str, Any]]]) -> list[tuple[int, float]]:
    """Mean held-out gold over seeds at each checkpoint every seed reached: (episodes, gold)."""
    at: dict[int, list[float]] = defaultdict(list)
    for rows in curves:
        for r in rows:
            at[int(r["episodes_seen"])].append(float(r["heldout_gold"]))
    return [(k, float(np.mean(v))) for k, v in sorted(at.items()) if len(v) == len(curves)]


def episodes_to_reach(curve: Sequence[tuple[int, float]], target: float) -> int | None:
    """Episodes at the first checkpoint whose gold is at least ``target`` (None: never)."""
    return next((n for n, g in curve if g >= target - 1e-12), None)
