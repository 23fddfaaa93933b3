"""Does the training reward pay for the task? What separates calls *within* GRPO's groups.

GRPO scores each call of a group (one simulated user, one profile, one step) by its proxy minus
its group's mean, so all it can learn is what separates calls inside a group; a proxy's level
says nothing of it. This measures, over the groups whose calls differ in gold, how much more
proxy the calls that did the task better earned than those that did it worse (better: a gold
score above the group's mean; a slot-filling call's score is its success, a negotiation's its
normalised points; what GRPO logs as ``train_gold``). Near zero, GRPO has no reason to keep
doing the task, however pleased the caller: a frozen caller who is pleased by a greeting pays an
empty call and a complete one alike, and the agent's gold drifts down on that caller itself
(docs/results/lm-agents.md). Large, and the reward carries the task.

Training calls are grouped by (training run, member, profile seed, step): GRPO's groups, read
from the calls a sub-run logged. A PPO run's calls are each their own profile, so it has no
groups and no estimate.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from sim2human.metrics.outcomes import Estimate, cluster_bootstrap
from sim2human.types import Episode, Frozen

TRAINING = "train"
"""The phase of the calls a trainer played (``Episode.phase``); evaluations are ``eval``."""


class TaskPay(Frozen):
    """The proxy a group's better calls earned over its worse ones (mean over groups, in the
    proxy's units, 0-1), with a 95% interval resampling training runs, then groups."""

    lift: Estimate
    groups: int
    """Groups whose calls differ in gold (the ones the lift is read from)."""
    flat: int
    """Groups whose calls all had the same gold (nothing to separate)."""
    calls: int
    """Logged training calls in groups of two or more."""


def task_pay(
    by_run: Mapping[str, Sequence[Episode]], *, n_boot: int = 1000, seed: int = 0
) -> TaskPay | None:
    """``by_run``: each training run's logged calls (any phase; training calls are picked).
    None when no group of two or more calls was logged (a PPO run, or a run that logged no
    training calls)."""
    lifts: list[float] = []
    runs: list[str] = []
    flat = calls = 0
    for run, episodes in by_run.items():
        for group in training_groups(episodes):
            calls += len(group)
            lift = group_lift(group)
            if lift is None:
                flat += 1
                continue
            lifts.append(lift)
            runs.append(run)
    if not calls:
        return None
    est = cluster_bootstrap(lifts, runs, n_boot=n_boot, seed=seed)
    return TaskPay(lift=est, groups=len(lifts), flat=flat, calls=calls)


def training_groups(episodes: Iterable[Episode]) -> list[list[Episode]]:
    """One training run's calls in groups of two or more: one member, profile seed and step."""
    groups: dict[tuple[str, int, int], list[Episode]] = defaultdict(list)
    for e in episodes:
        if e.phase == TRAINING:
            groups[(e.simulator_id, e.seed, e.step)].append(e)
    return [g for g in groups.values() if len(g) >= 2]


def group_lift(group: Sequence[Episode]) -> float | None:
    """Mean proxy of the calls with a gold score above the group's mean minus that of the calls
    below it; None when every call had the same gold."""
    gold = np.asarray([e.gold.score for e in group])
    proxy = np.asarray([e.proxy for e in group])
    middle = gold.mean()
    better, worse = gold > middle + 1e-9, gold < middle - 1e-9
    if not better.any() or not worse.any():
        return None
    return float(proxy[better].mean() - proxy[worse].mean())
