"""What a sampler learns from besides the episodes: per-episode training signals, and levels.

The trainer hands every sampler ``update(episodes, info)``; ``info`` carries what only the
trainer knows (GAE magnitudes, the judged reward). Samplers that choose the profile seed as well
as the member (PLR replays levels) implement ``LevelSampler``; ``draw_level`` falls back to a
fresh seed for the rest, consuming the generator exactly as the plain trainer did.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from sim2human.simulators.base import SimulatorSpec


@dataclass(frozen=True)
class BatchInfo:
    """The trainer's side of one update, aligned with the episodes it came with."""

    update: int
    episodes_seen: int
    abs_advantage: tuple[float, ...]
    """Per episode: mean |GAE| over its steps, before any normalisation (PLR's score)."""
    judged: tuple[float, ...] | None = None
    """Per episode: the conservative ensemble-judged score trained on, when judging is on."""


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
