"""What a sampler learns from besides the episodes: per-episode training signals, and levels.

The trainer hands every sampler ``update(episodes, info)``; ``info`` carries what only the
trainer knows (GAE magnitudes, the judged reward; for GRPO, each group's reward spread).
Samplers that choose the profile seed as well as the member (PLR replays levels) implement
``LevelSampler``; ``draw_level`` falls back to a fresh seed for the rest, consuming the generator
exactly as the plain trainer did.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from sim2human.simulators.base import SimulatorSpec
from sim2human.types import Episode


@dataclass(frozen=True)
class BatchInfo:
    """The trainer's side of one update, aligned with the episodes it came with."""

    update: int
    episodes_seen: int
    abs_advantage: tuple[float, ...]
    """Per episode: mean |GAE| over its steps, before any normalisation (PLR's score); for a
    trainer without values, its level's reward spread (``spread_by_level``)."""
    judged: tuple[float, ...] | None = None
    """Per episode: the conservative ensemble-judged score trained on, when judging is on."""


def spread_by_level(episodes: Sequence[Episode], update: int, seen: int) -> BatchInfo:
    """``BatchInfo`` for a trainer without a value function (GRPO; a user's trainer through
    ``integrations.population``): each episode's |advantage| is its level's (member, episode
    seed) mean |proxy - the level's mean proxy| over the batch. That is GRPO's group-relative
    advantage before scaling, averaged over the group (GRPO's groups are levels), so PLR scores
    a level by how much its calls' rewards differ: one whose calls all earn the same gives GRPO
    no gradient and scores 0, as does a level played once."""
    by_level: dict[tuple[str, int], list[float]] = defaultdict(list)
    for e in episodes:
        by_level[(e.simulator_id, e.seed)].append(e.proxy)
    spread = {
        level: float(np.abs(np.asarray(r) - np.mean(r)).mean()) for level, r in by_level.items()
    }
    return BatchInfo(update, seen, tuple(spread[(e.simulator_id, e.seed)] for e in episodes))


class MemberSampler(Protocol):
    name: str

    def next(self, rng: np.random.Generator) -> SimulatorSpec: ...


@runtime_checkable
class LevelSampler(Protocol):
    """A sampler that picks the profile seed too: a level is (member, seed)."""

    def next_level(self, rng: np.random.Generator) -> tuple[SimulatorSpec, int]: ...


def draw_level(sampler: MemberSampler, rng: np.random.Generator) -> tuple[SimulatorSpec, int]:
    """(member, episode seed) for the next training episode."""
    if isinstance(sampler, LevelSampler):
        return sampler.next_level(rng)
    spec = sampler.next(rng)
    return spec, int(rng.integers(2**31))


@runtime_checkable
class Reporting(Protocol):
    """A sampler that can say its current sampling distribution and what it changed, and why."""

    def shares(self) -> dict[str, float]: ...

    def drain_events(self) -> list[dict[str, object]]: ...
