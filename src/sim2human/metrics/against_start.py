"""What training changed: a trained agent's calls against its starting point's, call for call.

A trained agent's row says where training ended; its gap from training to held out may have
been there before training began. A language-model agent starts from a supervised warm start,
and on intake that warm start already completed 71% of the frozen caller's calls and 41% of the
held-out families' (docs/results/lm-agents.md): a 30-point gap no RL made. Every agent of a
study meets the same members on the same episode seeds (``rollout.evaluate``: the same hidden
profiles), so the warm start's evaluation (``experiments.study.warm_start_reference``) pairs
with each trained agent's call for call; the change is the mean of paired differences, its
interval resampling the (training run, member) clusters then the calls within them, so a member
that is hard for both agents counts once, not as a change.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from sim2human.metrics.collapse import split_difference
from sim2human.metrics.outcomes import Estimate, cluster_bootstrap
from sim2human.types import Episode, Frozen

GROUPS = {"train": "training members", "heldout": "held-out families", "real": "real people"}
"""The groups a study's calls are read in (the tables' columns), in words, in order: what
``diagnose`` passes as ``group``."""
Key = tuple[str, str, int]
"""A call's place in an evaluation: split, member, episode seed."""


class Change(Frozen):
    """One group of paired calls (training members, held-out families or real people)."""

    start: float
    """The starting agent's mean over the paired calls."""
    trained: float
    """The trained agent's mean over the same calls."""
    change: Estimate
    """Trained minus start, per call: mean and 95% interval."""


def against_start(
    trained: Mapping[int, Sequence[Episode]],
    start: Mapping[int, Sequence[Episode]],
    group: Callable[[Episode], str],
    value: Callable[[Episode], float],
    n_boot: int = 1000,
) -> dict[str, Change]:
    """Group -> the change from ``start`` to ``trained``, over calls both played.

    ``trained`` and ``start``: evaluation calls by study seed (seed k's trained agent pairs
    with seed k's start); ``group``: which group a call is read in (``train``, ``heldout``,
    ``real``...); ``value``: what is compared (gold success). A call with no partner is left
    out; a group with none paired is absent."""
    pairs: dict[str, list[tuple[float, float, tuple[int, str]]]] = {}
    for seed, b, e in paired(trained, start):
        pairs.setdefault(group(e), []).append((value(b), value(e), (seed, e.simulator_id)))
    out: dict[str, Change] = {}
    for name, rows in pairs.items():
        diffs = [t - s for s, t, _ in rows]
        out[name] = Change(
            start=sum(s for s, _, _ in rows) / len(rows),
            trained=sum(t for _, t, _ in rows) / len(rows),
            change=cluster_bootstrap(diffs, [c for _, _, c in rows], n_boot=n_boot),
        )
    return out


def widening(
    trained: Mapping[int, Sequence[Episode]],
    start: Mapping[int, Sequence[Episode]],
    value: Callable[[Episode], float],
    n_boot: int = 1000,
) -> Estimate:
    """How much training widened the drop from training members to held out: the trained
    agent's drop minus its start's, over the calls both played. Per call the change (trained
    minus start), then the drop of those changes with the drop's own interval
    (``metrics.collapse.split_difference``: study seeds, then calls per split)."""
    by_seed: dict[int, tuple[list[float], list[float]]] = {}
    for seed, b, e in paired(trained, start):
        train, held = by_seed.setdefault(seed, ([], []))
        if e.split in ("train", "heldout"):
            (train if e.split == "train" else held).append(value(e) - value(b))
    runs = [(np.asarray(t), np.asarray(h)) for t, h in by_seed.values() if t and h]
    return split_difference(runs, n_boot)


def paired(
    trained: Mapping[int, Sequence[Episode]], start: Mapping[int, Sequence[Episode]]
) -> list[tuple[int, Episode, Episode]]:
    """``(study seed, start's call, trained agent's call)`` for every call both played."""
    out = []
    for seed, calls in trained.items():
        before = {_key(e): e for e in start.get(seed, ())}
        out += [(seed, b, e) for e in calls if (b := before.get(_key(e))) is not None]
    return out


def _key(e: Episode) -> Key:
    return (e.split, e.simulator_id, e.seed)
