"""Who plays the user next: a study's ensemble and sampler, ready for an external trainer.

Every adapter (Gymnasium, TRL, verl, ART) draws members here, so they all see the same
population a ``sim2human study`` would train on: the training families through the condition's
sampler (``fixed`` for the single frozen simulator, ``uniform``, ``randomized``, the adaptive
``must``/``plr``/``evolve``), and the held-out families, never trained on, for evaluation.
Only ``persona`` members are played here: ``llm`` members need endpoints, which an external
trainer's process does not open, and a study's replayed real callers are left out with a warning
(``Population.left_out``; ``collapse_callback.real_callers`` samples them for a trainer).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from sim2human.errors import UsageError
from sim2human.population.ensemble import Ensemble
from sim2human.rollout.conversation import MAX_TURNS, AnyConversation, Conversation, Job
from sim2human.rollout.solvability import solvability
from sim2human.samplers.build import FixedSampler, Sampler, build_sampler
from sim2human.samplers.feedback import draw_level, spread_by_level
from sim2human.scenarios.catalog import DEFAULT_SCENARIO, get_scenario
from sim2human.scenarios.core import AnyScenario
from sim2human.simulators.base import QuirkPool, SimulatorSpec
from sim2human.simulators.families import get_family
from sim2human.simulators.kinds import is_programmatic
from sim2human.simulators.replay_families import REPLAY_FAMILIES
from sim2human.types import Episode

if TYPE_CHECKING:
    from sim2human.experiments.study.config import Condition, StudyConfig

Split = Literal["train", "heldout"]
SPLITS: tuple[Split, ...] = ("train", "heldout")


@dataclass
class Population:
    """A scenario, its ensemble (train / held-out by family) and the training sampler."""

    scenario: AnyScenario
    pool: QuirkPool
    ensemble: Ensemble
    sampler: Sampler
    condition: str = "external"
    max_turns: int = MAX_TURNS
    trained_on: dict[str, SimulatorSpec] = field(default_factory=dict)
    """Every training member handed out so far (``fixed`` / adaptive samplers may hand out
    members outside ``ensemble.train``), for the run directory's ``members.json``."""
    updates: int = 0
    """Batches fed to ``update`` so far."""
    seen: int = 0
    """Episodes fed to ``update`` so far."""
    left_out: tuple[str, ...] = ()
    """The study's families not played here: replayed real callers, whose corpus a study reads
    (``collapse_callback.real_callers(study, n)`` draws a sample of them for a trainer)."""

    def members(self, split: Split) -> tuple[SimulatorSpec, ...]:
        """The members evaluated as ``split``: for ``train``, what the sampler trains on (the
        frozen simulator of a ``fixed`` condition, else the ensemble's training members)."""
        check_split(split)
        if split == "heldout":
            return self.ensemble.heldout
        return (
            (self.sampler.spec,) if isinstance(self.sampler, FixedSampler) else self.ensemble.train
        )

    def draw(self, rng: np.random.Generator, split: Split = "train") -> tuple[SimulatorSpec, int]:
        """(member, episode seed): training through the sampler, held-out uniformly."""
        check_split(split)
        if split == "heldout":
            held = self.ensemble.heldout
            return held[int(rng.integers(len(held)))], int(rng.integers(2**31))
        spec, seed = draw_level(self.sampler, rng)
        self.trained_on.setdefault(spec.id, spec)
        return spec, seed

    def member(self, member_id: str) -> SimulatorSpec:
        """A member by id: any member handed out or in the ensemble."""
        for spec in (*self.trained_on.values(), *self.ensemble.train, *self.ensemble.heldout):
            if spec.id == member_id:
                return spec
        raise UsageError(f"no member {member_id!r} in this population")

    def resolve(self, member: str | None, spec_json: str | None) -> SimulatorSpec:
        """The member a dataset row names: its stored spec, else its id."""
        if spec_json:
            return SimulatorSpec.model_validate_json(spec_json)
        if member is None:
            raise UsageError("a row needs a 'member' (or a 'spec')")
        return self.member(member)

    def split_of(self, spec: SimulatorSpec) -> Split:
        held = {f.name for f in self.ensemble.heldout_families}
        return "heldout" if spec.family in held else "train"

    def open(
        self, spec: SimulatorSpec, seed: int, *, phase: str = "train", step: int = 0
    ) -> AnyConversation:
        """A new conversation with ``spec`` on the episode seed ``seed`` (its hidden profile)."""
        if not is_programmatic(spec):
            raise UsageError(
                f"member {spec.id!r} is an {spec.kind!r} simulator: the integrations play "
                "persona members only (llm members need endpoints)"
            )
        job = Job(spec, seed, self.split_of(spec), self.condition, phase, step)
        return Conversation.open(job, self.scenario, self.max_turns)

    def update(self, episodes: Sequence[Episode]) -> None:
        """Feed finished training episodes to the sampler (adaptive samplers learn from them).
        The trainer's advantages are not known here: PLR scores each level by its calls' reward
        spread in the batch, as the study's GRPO does (``feedback.spread_by_level``), so feed a
        GRPO trainer's groups whole."""
        if episodes:
            self.updates += 1
            self.seen += len(episodes)
            self.sampler.update(episodes, spread_by_level(episodes, self.updates, self.seen))


def check_split(split: str) -> None:
    if split not in SPLITS:
        raise UsageError(f"split must be 'train' or 'heldout', not {split!r}")


def population(
    source: Ensemble | StudyConfig | str | Path | None = None,
    *,
    condition: str | None = None,
    sampler: str | Sampler | None = None,
    sampler_args: dict[str, Any] | None = None,
    seed: int = 0,
    max_turns: int | None = None,
) -> Population:
    """A population from a study (YAML path or loaded config) or an ``Ensemble``.

    ``condition`` takes a study condition's sampler, fixed simulator and perturbations (e.g.
    ``frozen-small`` or ``ensemble-randomized`` in ``examples/collapse.yaml``); otherwise
    ``sampler`` names one (default ``uniform``) or is a ``Sampler`` object. Without ``source``,
    the default ensemble of ``sim2human.experiments.study.config.EnsembleConfig``.
    """
    cfg = _study(source)
    scenario = get_scenario(cfg.scenario if cfg is not None else DEFAULT_SCENARIO)
    pool, held_pool = QuirkPool.of(scenario).held_apart()
    ensemble = source if isinstance(source, Ensemble) else _ensemble(cfg, pool, held_pool)
    if cfg is not None and not isinstance(source, Ensemble):
        max_turns = max_turns or cfg.train.max_turns
    turns = max_turns or MAX_TURNS
    cond = _condition(cfg, condition) if condition is not None else None
    if cond is not None and sampler is not None:
        raise UsageError("give a condition or a sampler, not both")
    solvable = solvability(scenario, turns)
    if cond is not None:
        name = cond.name
        built = build_sampler(
            cond.sampler,
            ensemble,
            pool,
            _fixed(cond, pool),
            cond.perturb,
            args=cond.sampler_args,
            scenario=scenario,
            oracle_gold=cond.oracle_gold,
            seed=seed,
            solvable=solvable,
        )
    elif sampler is None or isinstance(sampler, str):
        name = sampler or "uniform"
        built = build_sampler(
            name, ensemble, pool, args=sampler_args, scenario=scenario, seed=seed, solvable=solvable
        )
    else:
        built = sampler
        name = getattr(sampler, "name", "external")
    left_out = _replayed(cfg) if not isinstance(source, Ensemble) else ()
    if left_out:
        warnings.warn(
            f"population(): the study's replayed real callers ({', '.join(left_out)}) are left "
            "out: integrations play programmatic users; the CLI plays them, and "
            "sim2human.integrations.collapse_callback.real_callers(study, n) draws a sample",
            stacklevel=2,
        )
    return Population(scenario, pool, ensemble, built, name, turns, left_out=left_out)


def _replayed(cfg: StudyConfig | None) -> tuple[str, ...]:
    """The replay families a study names (train or held out), which integrations leave out."""
    if cfg is None:
        return ()
    named = dict.fromkeys([*cfg.ensemble.train, *cfg.ensemble.heldout])
    return tuple(f for f in named if f in REPLAY_FAMILIES)


def _ensemble(cfg: StudyConfig | None, pool: QuirkPool, held_pool: QuirkPool) -> Ensemble:
    """The study's ensemble of persona members: real patients (replay families) stay in
    studies, since integrations play programmatic users only."""
    assert cfg is not None
    e = cfg.ensemble
    train, held = ([n for n in names if n not in REPLAY_FAMILIES] for names in (e.train, e.heldout))
    return Ensemble.from_families(
        train, held, e.members_per_family, pool, e.seed, e.members, held_pool
    )


def _study(source: object) -> StudyConfig | None:
    from sim2human.experiments.study.config import Condition, StudyConfig, load_study

    if isinstance(source, Ensemble):
        return None
    if source is None:
        uniform = Condition(name="ensemble-uniform", sampler="uniform")
        return StudyConfig(name="default", seeds=(0,), conditions=(uniform,))
    if isinstance(source, str | Path):
        return load_study(Path(source))
    if isinstance(source, StudyConfig):
        return source
    raise UsageError(
        f"a population comes from an Ensemble, a StudyConfig or a study YAML path, "
        f"not {type(source).__name__}"
    )


def _condition(cfg: StudyConfig | None, name: str) -> Condition:
    if cfg is None:
        raise UsageError(f"condition {name!r} needs a study (an Ensemble has no conditions)")
    for c in cfg.conditions:
        if c.name == name:
            return c
    known = ", ".join(c.name for c in cfg.conditions)
    raise UsageError(f"study {cfg.name!r} has no condition {name!r} (known: {known})")


def _fixed(cond: Condition, pool: QuirkPool) -> SimulatorSpec | None:
    ref = cond.simulator
    if ref is None:
        return None
    if ref.llm is not None:
        raise UsageError(
            f"condition {cond.name!r}: its simulator is an llm member (needs an "
            "endpoint); the integrations play persona members only"
        )
    over = {
        k: v
        for k, v in (("capacity", ref.capacity), ("temperature", ref.temperature))
        if v is not None
    }
    return get_family(ref.family).sample(ref.seed, pool, **over)
