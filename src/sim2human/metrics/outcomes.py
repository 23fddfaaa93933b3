"""Outcome summaries of stored episodes, with cluster-bootstrap confidence intervals.

The bootstrap resamples training seeds first and episodes within each seed second, so the
interval reflects seed-to-seed variation of training as well as evaluation noise. That two-level
scheme is not in scipy.stats.bootstrap, and it is a dozen lines of numpy.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypedDict

import numpy as np
from pydantic import BaseModel

from sim2human.types import Episode


class StoredEstimate(TypedDict):
    """An ``Estimate`` as the result files keep it (``Estimate.stored``)."""

    mean: float
    ci: list[float]
    n: int


class Estimate(BaseModel):
    """A mean with its bootstrap confidence interval and the number of values behind it."""

    mean: float
    ci: tuple[float, float]
    n: int

    def stored(self) -> StoredEstimate:
        """The form ``study.json`` and the other result files keep (``mean``, ``ci``, ``n``)."""
        return {"mean": self.mean, "ci": list(self.ci), "n": self.n}


def fmt_pct(x: float | None, missing: str = "") -> str:
    """Percentage points, no decimals; ``missing`` for a missing (None or NaN) value."""
    return missing if x is None or math.isnan(x) else f"{100 * x:.0f}"


def fmt_change(e: Estimate) -> str:
    """A signed change in percentage points with its interval: ``-8 [-23, +4]``."""
    lo, hi = e.ci
    return f"{100 * e.mean:+.0f} [{100 * lo:+.0f}, {100 * hi:+.0f}]"


def fmt_estimate(
    e: Estimate | Mapping[str, Any] | None,
    *,
    n: bool = False,
    missing: str = "",
    sep: str = ", ",
) -> str:
    """THE estimate formatter (``report.format.est``): ``mean [lo, hi]`` in percentage points,
    ``(n=...)`` after it with ``n``; ``missing`` without an estimate or a mean; the mean alone
    without an interval. Takes an ``Estimate`` or its stored form (``mean``, ``ci``, ``n``; a
    JSON file may hold null or NaN where there was nothing to estimate)."""
    if e is None:
        return missing
    mean: float | None
    lo: float | None
    hi: float | None
    count: int | None
    if isinstance(e, Estimate):
        mean, (lo, hi), count = e.mean, e.ci, e.n
    else:
        mean, (lo, hi), count = e.get("mean"), e.get("ci") or (None, None), e.get("n")
    if mean is None or math.isnan(mean) or count == 0:
        return missing
    text = fmt_pct(mean)
    if lo is not None and hi is not None:
        text += f" [{fmt_pct(lo)}{sep}{fmt_pct(hi)}]"
    return f"{text} (n={count})" if n else text


def cluster_bootstrap(
    values: Sequence[float],
    clusters: Sequence[object],
    *,
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> Estimate:
    """Mean and percentile CI of ``values``, resampling clusters then members within clusters."""
    v = np.asarray(values, dtype=float)
    if v.size == 0:
        return Estimate(mean=float("nan"), ci=(float("nan"), float("nan")), n=0)
    groups = defaultdict(list)
    for x, c in zip(v, clusters, strict=True):
        groups[c].append(x)
    arrays = [np.asarray(g) for g in groups.values()]
    rng = np.random.default_rng(seed)
    # Every replicate at once: picked[b, j] is the cluster at position j of replicate b; each
    # cluster's resamples for all the places it was picked are drawn in one call.
    sizes = np.asarray([a.size for a in arrays])
    picked = rng.integers(len(arrays), size=(n_boot, len(arrays)))
    sums = np.empty(picked.shape)
    for i, a in enumerate(arrays):
        where = picked == i
        draws = rng.integers(a.size, size=(int(where.sum()), a.size))
        sums[where] = a[draws].sum(axis=1)
    means = sums.sum(axis=1) / sizes[picked].sum(axis=1)
    lo, hi = np.quantile(means, [(1 - level) / 2, 1 - (1 - level) / 2])
    return Estimate(mean=float(v.mean()), ci=(float(lo), float(hi)), n=int(v.size))


def gold(e: Episode) -> float:
    """An episode's gold success as 0 or 1 (what the study reports)."""
    return float(e.gold.success)


def score(e: Episode) -> float:
    """An episode's gold score in [0, 1] (``Outcome.score``: negotiation's normalised points)."""
    return e.gold.score


GOLDS: dict[str, Callable[[Episode], float]] = {"success": gold, "score": score}
"""A scenario's headline gold (``scenarios.core.GoldMetric``) -> its value of one episode."""


def proxy(e: Episode) -> float:
    """An episode's proxy: the simulated user's satisfaction (what training sees)."""
    return e.proxy


def estimate(
    episodes: Sequence[Episode],
    metric: Callable[[Episode], float],
    cluster: Callable[[Episode], object] = lambda e: e.condition,
    n_boot: int = 1000,
) -> Estimate:
    """The cluster-bootstrap estimate of ``metric`` over ``episodes``, clustered by ``cluster``
    (default: the condition)."""
    return cluster_bootstrap(
        [metric(e) for e in episodes], [cluster(e) for e in episodes], n_boot=n_boot
    )


class GroupSummary(BaseModel):
    """Outcomes of one member, family or split."""

    n: int
    gold_success: float
    field_accuracy: dict[str, float]
    dropped_rate: float
    proxy: float
    turns: float


def summarise(episodes: Sequence[Episode]) -> GroupSummary:
    """The outcomes of a group of episodes (one member, family or split); an empty group is a
    ValueError."""
    if not episodes:
        raise ValueError("no episodes to summarise")
    # a field graded in only some calls (one that applies to some callers) is averaged over those
    fields = dict.fromkeys(f for e in episodes for f in e.gold.fields)
    return GroupSummary(
        n=len(episodes),
        gold_success=float(np.mean([e.gold.success for e in episodes])),
        field_accuracy={
            f: float(np.mean([e.gold.fields[f] for e in episodes if f in e.gold.fields]))
            for f in fields
        },
        dropped_rate=float(np.mean([e.gold.dropped for e in episodes])),
        proxy=float(np.mean([e.proxy for e in episodes])),
        turns=float(np.mean([e.n_turns for e in episodes])),
    )


def by(episodes: Sequence[Episode], key: Callable[[Episode], str]) -> dict[str, GroupSummary]:
    """``summarise`` of each group of ``episodes`` by ``key``, in key order."""
    groups: dict[str, list[Episode]] = defaultdict(list)
    for e in episodes:
        groups[key(e)].append(e)
    return {k: summarise(v) for k, v in sorted(groups.items())}


def member_std(episodes: Sequence[Episode]) -> float:
    """Spread of gold success across simulator members (MUST reports it; so do we)."""
    per_member = by(episodes, lambda e: e.simulator_id)
    return float(np.std([s.gold_success for s in per_member.values()])) if per_member else 0.0
