"""Samplers pick the simulator for the next training episode and may learn from finished ones.

Looked up by name in ``SAMPLERS``; each is built from the condition's ensemble (or its single
fixed spec) and keeps its own state, so no global registry needs resetting. The adaptive ones
(``must``, ``plr``, ``evolve``) live beside it in ``samplers/``; their settings come from the
condition's ``sampler_args``, validated by the model named in ``SAMPLER_ARGS``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
from pydantic import ValidationError

from sim2human.errors import ConfigError, UsageError, first_problem
from sim2human.population.ensemble import Ensemble
from sim2human.samplers.evolve import EvolveArgs, EvolveSampler
from sim2human.samplers.feedback import BatchInfo
from sim2human.samplers.must import MustArgs, MustSampler
from sim2human.samplers.plr import PLRArgs, PLRSampler
from sim2human.samplers.trait_box import Solvability
from sim2human.scenarios.core import AnyScenario
from sim2human.simulators.base import QuirkPool, SimulatorSpec
from sim2human.simulators.noise import Ranges, draw_mix, with_noise
from sim2human.types import Episode, FrozenConfig


class Sampler(Protocol):
    """Who plays next during training: a training member per episode, learning from the
    finished ones."""

    name: str

    def next(self, rng: np.random.Generator) -> SimulatorSpec:
        """The member the next training episode plays, drawn from ``rng``."""

    def update(self, episodes: Sequence[Episode], info: BatchInfo | None = None) -> None:
        """Learn from an update's finished episodes; ``info`` is the trainer's side of it."""
        ...


class FixedSampler:
    """Always the same simulator: the single frozen simulator of common practice."""

    name = "fixed"

    def __init__(self, spec: SimulatorSpec) -> None:
        self.spec = spec

    def next(self, rng: np.random.Generator) -> SimulatorSpec:
        """The one simulator, every time."""
        return self.spec

    def update(self, episodes: Sequence[Episode], info: BatchInfo | None = None) -> None:
        """Nothing to learn: the simulator never changes."""
        pass


class UniformSampler:
    """Each episode plays a training member chosen uniformly (or by weight)."""

    name = "uniform"

    def __init__(self, members: Sequence[SimulatorSpec], weights: Sequence[float] | None = None):
        if not members:
            raise UsageError("sampler 'uniform' needs at least one training member")
        self.members = tuple(members)
        w = np.ones(len(members)) if weights is None else np.asarray(weights, dtype=float)
        self.p = w / w.sum()

    def next(self, rng: np.random.Generator) -> SimulatorSpec:
        """A training member, uniformly or by weight."""
        return self.members[int(rng.choice(len(self.members), p=self.p))]

    def update(self, episodes: Sequence[Episode], info: BatchInfo | None = None) -> None:
        """Nothing to learn: the weights are fixed."""
        pass


class RandomizedSampler:
    """Domain randomisation: a fresh trait (and quirk) draw from a training family each episode."""

    name = "randomized"

    def __init__(self, ensemble: Ensemble, pool: QuirkPool) -> None:
        self.families = ensemble.train_families
        self.pool = pool

    def next(self, rng: np.random.Generator) -> SimulatorSpec:
        """A fresh member of a random training family, its traits and quirks drawn anew."""
        family = self.families[int(rng.integers(len(self.families)))]
        return family.sample(int(rng.integers(2**31)), self.pool)

    def update(self, episodes: Sequence[Episode], info: BatchInfo | None = None) -> None:
        """Nothing to learn: every draw is fresh."""
        pass


class PerturbingSampler:
    """Domain randomisation of noise: wraps any sampler and layers a fresh perturbation mix
    (one severity per name, uniform in its range) onto every member it hands out.

    With ``ramp_episodes`` the ranges open as training runs (a curriculum): after ``seen``
    training episodes each range is ``[low, low + level * (high - low)]``, ``level`` growing
    linearly from 0 to 1 over the first ``ramp_episodes``. Measured on fresh draws of the
    training families (never held-out ones), the full ranges from the first episode left the
    agent below the unperturbed ensemble even on perturbed calls; the ramp did not.
    """

    def __init__(self, inner: Sampler, ranges: Ranges, ramp_episodes: int = 0) -> None:
        self.inner = inner
        self.name = inner.name
        self.ranges = dict(ranges)
        self.ramp_episodes = ramp_episodes
        self.seen = 0
        """Training episodes finished, as the trainer reports them (``BatchInfo``)."""

    @property
    def level(self) -> float:
        """How far the ranges are open: 0 at their low ends, 1 at full width."""
        return 1.0 if self.ramp_episodes <= 0 else min(1.0, self.seen / self.ramp_episodes)

    def next(self, rng: np.random.Generator) -> SimulatorSpec:
        """The inner sampler's member with perturbations at the current level."""
        level, ranges = self.level, self.ranges
        if level < 1.0:  # open ranges stay exactly as configured (lo + (hi - lo) may not be hi)
            ranges = {n: (lo, lo + level * (hi - lo)) for n, (lo, hi) in ranges.items()}
        return with_noise(self.inner.next(rng), draw_mix(ranges, rng))

    def update(self, episodes: Sequence[Episode], info: BatchInfo | None = None) -> None:
        """Count the episodes seen (the ramp's level) and pass them on to the inner sampler."""
        self.seen = info.episodes_seen if info is not None else self.seen + len(episodes)
        self.inner.update(episodes, info)


class MixedSampler:
    """Mixes extra members (``llm`` ones) into another sampler's draws: a share ``share`` of
    episodes play one of them, in runs of ``block`` consecutive episodes, the rest whatever
    ``inner`` picks.

    Runs matter for wall time: episodes of one training batch are played together, and an LLM
    conversation alone in its batch leaves the endpoint's other slots idle while the batch waits
    for it; ``block`` of them in the same batch cost about as long as one.
    """

    def __init__(
        self, inner: Sampler, members: Sequence[SimulatorSpec], share: float, block: int = 1
    ) -> None:
        if not members:
            raise UsageError("a mixed ensemble needs at least one extra member")
        self.inner = inner
        self.members = tuple(members)
        self.share = share
        self.block = max(1, block)
        # A run starts with probability p per non-run episode; runs then fill block*p/(1+(block-1)p)
        # of all episodes, which equals ``share`` for this p.
        self._start = share / (self.block - (self.block - 1) * share) if share < 1 else 1.0
        self._left = 0
        self.name = f"{inner.name}+mixed"

    def next(self, rng: np.random.Generator) -> SimulatorSpec:
        """One of the extra members (``share`` of episodes, in runs of ``block``), else the inner
        sampler's."""
        if self._left > 0 or rng.random() < self._start:
            self._left = self._left - 1 if self._left > 0 else self.block - 1
            return self.members[int(rng.integers(len(self.members)))]
        return self.inner.next(rng)

    def update(self, episodes: Sequence[Episode], info: BatchInfo | None = None) -> None:
        """Pass the episodes on to the inner sampler (the extra members learn nothing)."""
        self.inner.update(episodes, info)


class NoArgs(FrozenConfig):
    """Samplers without settings accept an empty ``sampler_args`` only."""


@dataclass(frozen=True)
class _Context:
    """What a sampler may be built from (each takes what it needs)."""

    ensemble: Ensemble
    pool: QuirkPool
    fixed: SimulatorSpec | None
    scenario: AnyScenario | None
    solvable: Solvability | None
    oracle_gold: bool
    seed: int


@dataclass(frozen=True)
class SamplerEntry:
    """One row of ``SAMPLERS``: its settings model and how to build it."""

    args: type[FrozenConfig]
    build: Callable[[_Context, Any], Sampler]


def _fixed(ctx: _Context, _: NoArgs) -> Sampler:
    if ctx.fixed is None:
        raise UsageError("sampler 'fixed' needs a 'simulator' in its condition")
    return FixedSampler(ctx.fixed)


def _evolve(ctx: _Context, settings: EvolveArgs) -> Sampler:
    if ctx.scenario is None or ctx.solvable is None:
        raise UsageError(
            "sampler 'evolve' needs the scenario and a solvability check (to judge and "
            "check members)"
        )
    return EvolveSampler(
        ctx.ensemble.train,
        ctx.scenario,
        ctx.pool,
        settings,
        solvable=ctx.solvable,
        oracle_gold=ctx.oracle_gold,
        seed=ctx.seed,
    )


SAMPLERS: dict[str, SamplerEntry] = {
    "fixed": SamplerEntry(NoArgs, _fixed),
    "uniform": SamplerEntry(NoArgs, lambda ctx, _: UniformSampler(ctx.ensemble.train)),
    "randomized": SamplerEntry(NoArgs, lambda ctx, _: RandomizedSampler(ctx.ensemble, ctx.pool)),
    "must": SamplerEntry(
        MustArgs, lambda ctx, s: MustSampler(ctx.ensemble.train, s, oracle_gold=ctx.oracle_gold)
    ),
    "plr": SamplerEntry(
        PLRArgs, lambda ctx, s: PLRSampler(ctx.ensemble.train, s, oracle_gold=ctx.oracle_gold)
    ),
    "evolve": SamplerEntry(EvolveArgs, _evolve),
}
"""Every sampler by name: adding one is its module plus a row here."""


def known_sampler(name: str) -> str:
    """``name`` if it is a registered sampler; else a UsageError naming the known ones."""
    if name not in SAMPLERS:
        raise UsageError(f"unknown sampler {name!r} (known: {', '.join(SAMPLERS)})")
    return name


def sampler_args(
    name: str, raw: Mapping[str, Any] | None, where: str = "sampler_args"
) -> FrozenConfig:
    """Validate a sampler's settings against its model; unknown keys are errors."""
    model = SAMPLERS[known_sampler(name)].args
    try:
        return model.model_validate(dict(raw or {}))
    except ValidationError as err:
        loc, msg = first_problem(err)
        raise ConfigError(f"{where}{'.' * bool(loc)}{loc}: {msg} (sampler {name!r})") from None


def build_sampler(
    name: str,
    ensemble: Ensemble,
    pool: QuirkPool,
    fixed: SimulatorSpec | None = None,
    perturb: Ranges | None = None,
    *,
    perturb_ramp_episodes: int = 0,
    args: Mapping[str, Any] | None = None,
    scenario: AnyScenario | None = None,
    solvable: Solvability | None = None,
    oracle_gold: bool = False,
    seed: int = 0,
) -> Sampler:
    """The named sampler over the ensemble's training members; ``seed`` seeds its own choices.
    With ``perturb`` ranges its members also get per-episode noise, opening over the first
    ``perturb_ramp_episodes`` training episodes (``PerturbingSampler``).

    Samplers see gold outcomes only when ``oracle_gold`` is set (the default works without it).
    ``evolve`` also needs the scenario and ``solvable`` (``rollout.solvability.solvability``).
    """
    settings = sampler_args(name, args)
    ctx = _Context(ensemble, pool, fixed, scenario, solvable, oracle_gold, seed)
    inner = SAMPLERS[name].build(ctx, settings)
    return PerturbingSampler(inner, perturb, perturb_ramp_episodes) if perturb else inner
