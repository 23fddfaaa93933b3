"""What every sub-run of a study shares: the scenario, the quirk pool, the ensemble, the turn
limit and the endpoints; and evaluation of an agent on a set of its members.

A world is built once per process for the same study (``StudyWorld.build`` keeps the last few):
the driver builds it for its plan (``plan.StudyPlan``: the endpoints it lists), and a worker runs
several jobs of one study, each of which needs it. Building it resolves the scenario (a file is
read and checked, a class imported), decides whether each corpus is present and draws every
member; doing that once is what makes the study *one* study, seen the same way by every part
of a process. What it is built from is the key (``_built_from``): the study's scenario (a file's
size and time too, so an edited file is read again), ensemble, turn limit and mixed families,
and the environment that decides corpus presence and which modules may be imported.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, ClassVar

from sim2human import corpora, seeding
from sim2human.agents.base import Agent
from sim2human.errors import UsageError
from sim2human.experiments.study.agent_record import is_real
from sim2human.experiments.study.config import Condition, StudyConfig
from sim2human.experiments.study.playable import corpus_unfit, without_missing_corpus
from sim2human.llm.runtime import LLMRuntime
from sim2human.population.ensemble import Ensemble
from sim2human.rollout.evaluate import evaluate
from sim2human.rollout.solvability import solvability
from sim2human.samplers.build import MixedSampler, Sampler, build_sampler
from sim2human.scenarios.catalog import get_scenario
from sim2human.scenarios.core import AnyScenario
from sim2human.scenarios.refs import SCENARIO_PATH_ENV, is_path
from sim2human.simulators.base import QuirkPool, SimulatorSpec
from sim2human.simulators.families import get_family
from sim2human.simulators.kinds import needs_endpoint
from sim2human.simulators.llm import llm_spec
from sim2human.train.phases import Phases
from sim2human.types import Episode

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class StudyWorld:
    """What every sub-run of a study shares: the scenario, the quirk pool and the ensemble."""

    scenario: AnyScenario
    pool: QuirkPool
    """The training and frozen members' quirk pool (``QuirkPool.held_apart``'s first half)."""
    ensemble: Ensemble
    """Held-out members include the ``llm`` held-out ones (``ensemble.llm.heldout``)."""
    max_turns: int
    """Agent turns before a conversation is cut off (``train.max_turns``), wherever it is played."""
    llm_train: tuple[SimulatorSpec, ...] = ()
    """``llm`` members that mixed conditions (``llm_share``) train on."""
    member_seed: int = 0
    """``ensemble.seed``: a condition's ``mix`` members are drawn from it as the ensemble's are."""
    heldout_pool: QuirkPool | None = None
    """The held-out members' quirk pool: disjoint from ``pool`` unless the scenario shares its
    quirks on purpose (``QuirkPool.shared``). None: ``pool``."""

    _built: ClassVar[OrderedDict[str, StudyWorld]] = OrderedDict()
    """The worlds this process has built, by what they were built from (``_built_from``). Not
    ``functools.lru_cache``: the key is not the config alone (a scenario file's time, the
    environment) and a config holds dicts, which do not hash."""
    _KEEP: ClassVar[int] = 4
    _building: ClassVar[threading.Lock] = threading.Lock()

    @classmethod
    def build(cls, cfg: StudyConfig) -> StudyWorld:
        """The world of ``cfg``, built the first time this process asks for it (the module's
        docstring says why); ``replay`` families whose corpus is not found are left out, as the
        study command does (it says so; here it is logged), so a run directory made with the
        corpus still opens (reports, the web app, trainer adapters) on a machine without."""
        key = _built_from(cfg)
        with cls._building:  # the web app asks from several threads
            if (world := cls._built.get(key)) is not None:
                cls._built.move_to_end(key)
                return world
            world = cls._assemble(cfg)
            cls._built[key] = world
            while len(cls._built) > cls._KEEP:
                cls._built.popitem(last=False)
            return world

    @classmethod
    def forget(cls) -> None:
        """Build every world afresh from now on (a test that swaps a family registry)."""
        with cls._building:
            cls._built.clear()

    @classmethod
    def _assemble(cls, cfg: StudyConfig) -> StudyWorld:
        cfg, left_out = without_missing_corpus(cfg)
        if left_out:
            log.warning(left_out)
        scenario = get_scenario(cfg.scenario)
        if (unfit := corpus_unfit(cfg, scenario)) is not None:
            raise UsageError(unfit)
        pool, held_pool = QuirkPool.of(scenario).held_apart()
        e = cfg.ensemble
        ensemble = Ensemble.from_families(
            e.train, e.heldout, e.members_per_family, pool, e.seed, e.members, held_pool
        )
        llm_train: tuple[SimulatorSpec, ...] = ()
        if e.llm is not None:
            if e.llm.train is not None:
                llm_train = e.llm.train.draw(e.seed, pool, "train")
            if e.llm.heldout is not None:
                held = e.llm.heldout.draw(e.seed, held_pool, "heldout")
                ensemble = replace(ensemble, heldout=ensemble.heldout + held)
        if (hr := e.human_replay) is not None:
            extra = hr.draw(scenario)
            ensemble = replace(ensemble, **{hr.split: getattr(ensemble, hr.split) + extra})
        return cls(scenario, pool, ensemble, cfg.train.max_turns, llm_train, e.seed, held_pool)

    def fixed_spec(self, condition: Condition) -> SimulatorSpec | None:
        ref = condition.simulator
        if ref is None:
            return None
        override = {
            k: v
            for k, v in (("capacity", ref.capacity), ("temperature", ref.temperature))
            if v is not None
        }
        spec = get_family(ref.family).sample(ref.seed, self.pool, **override)
        return spec if ref.llm is None else llm_spec(spec, **ref.llm.model_dump())

    def train_members(self, condition: Condition) -> tuple[SimulatorSpec, ...]:
        """The members a condition's agent is scored on as 'training' simulators."""
        fixed = self.fixed_spec(condition)
        if fixed is not None:
            return (fixed,)
        llm = self.llm_train if condition.llm_share > 0 else ()
        return self.ensemble.train + llm + self.mixed(condition)

    def mixed(self, condition: Condition) -> tuple[SimulatorSpec, ...]:
        """The members of ``condition.mix`` (none without one), seeded as ``Ensemble`` seeds a
        family's members: the same whichever other families or conditions the study holds."""
        if (mix := condition.mix) is None:
            return ()
        family = get_family(mix.family)
        base = seeding.seed(self.member_seed, "member", family.name)
        return tuple(family.sample(base + k, self.pool) for k in range(mix.members))

    def validation(self, condition: Condition) -> tuple[SimulatorSpec, ...]:
        """The validation members of ``condition.select`` (none without one): drawn as a
        ``mix``'s members are, from the seed stream ``validation`` (other seeds than any
        training member's; a replay family may still draw a visit a ``mix`` also draws)."""
        if (select := condition.select) is None:
            return ()
        family = get_family(select.family)
        base = seeding.seed(self.member_seed, "validation", family.name)
        return tuple(family.sample(base + k, self.pool) for k in range(select.members))

    def sampler(self, condition: Condition, seed: int = 0, *, episodes: int = 0) -> Sampler:
        """``condition``'s training sampler; ``episodes``, its training budget, is needed by a
        ``perturb_ramp`` (the ranges open over that share of it)."""
        if condition.perturb_ramp > 0 and episodes <= 0:
            raise ValueError(f"condition {condition.name!r}: a perturb_ramp needs the budget")
        inner = build_sampler(
            condition.sampler,
            self.ensemble,
            self.pool,
            self.fixed_spec(condition),
            condition.perturb,
            perturb_ramp_episodes=round(condition.perturb_ramp * episodes),
            args=condition.sampler_args,
            scenario=self.scenario,
            solvable=solvability(self.scenario, self.max_turns),
            oracle_gold=condition.oracle_gold,
            seed=seed,
        )
        if condition.llm_share > 0:
            inner = MixedSampler(inner, self.llm_train, condition.llm_share, condition.llm_block)
        if condition.mix is not None:
            inner = MixedSampler(inner, self.mixed(condition), condition.mix.share)
        return inner

    def endpoints(self, conditions: Sequence[Condition]) -> set[str]:
        """Names of the endpoints the ``llm`` members of these conditions (and evaluation) use."""
        specs = [*self.ensemble.heldout, *(s for c in conditions for s in self.train_members(c))]
        return {s.llm.endpoint for s in specs if s.llm is not None}


def _built_from(cfg: StudyConfig) -> str:
    """Everything ``StudyWorld._assemble`` reads, as one string: ``cfg``'s scenario, ensemble,
    turn limit and mixed families; a scenario file's size and modification time; the
    data root and the folders ``module:Name`` may be imported from."""
    ref = cfg.scenario
    stamp: tuple[int, int] | None = None
    if is_path(ref):
        try:
            st = Path(ref).stat()
            stamp = (st.st_size, st.st_mtime_ns)
        except OSError:  # gone since the study was read: building says so
            stamp = None
    return json.dumps(
        {
            "scenario": ref,
            "file": stamp,
            "ensemble": cfg.ensemble.model_dump(mode="json"),
            "max_turns": cfg.train.max_turns,
            "mixed": [c.mix.family for c in cfg.conditions if c.mix is not None],
            "env": [os.environ.get(k) for k in (corpora.ENV, SCENARIO_PATH_ENV)],
        },
        sort_keys=True,
    )


@contextmanager
def llm_runtime(cfg: StudyConfig, needed: set[str]) -> Iterator[LLMRuntime | None]:
    """The endpoints a sub-run needs, or None when it has no ``llm`` member."""
    if not needed:
        yield None
        return
    with LLMRuntime.open(cfg.llm, needed) as runtime:
        yield runtime


def evaluate_members(
    cfg: StudyConfig,
    agent: Agent,
    specs: Sequence[SimulatorSpec],
    world: StudyWorld,
    per_member: int,
    llm: LLMRuntime | None,
    **kw: Any,
) -> list[Episode]:
    """``evaluate`` with ``eval.llm_episodes_per_member`` episodes on each ``llm`` member."""
    persona = [s for s in specs if not needs_endpoint(s)]
    chat = [s for s in specs if needs_endpoint(s)]
    per_llm = cfg.eval.llm_episodes_per_member or per_member
    out = (
        evaluate(
            agent,
            persona,
            world.scenario,
            per_member=per_member,
            llm=llm,
            max_turns=world.max_turns,
            **kw,
        )
        if persona
        else []
    )
    if chat:
        out += evaluate(
            agent,
            chat,
            world.scenario,
            per_member=per_llm,
            llm=llm,
            max_turns=world.max_turns,
            **kw,
        )
    return out


Splits = list[tuple[str, Sequence[SimulatorSpec], int]]
"""``(split, members, episodes per member)``, evaluated in order (``evaluate_splits``)."""


def heldout_splits(cfg: StudyConfig, world: StudyWorld) -> Splits:
    """The held-out members at ``eval.episodes_per_member``, then the members of each family of
    ``eval.per_family`` at its own count (the others' episodes are those they would be without
    it: an episode depends on its member and seed, never on the members beside it)."""
    own = cfg.eval.per_family
    held = world.ensemble.heldout
    rest = [s for s in held if s.family not in own]
    groups = [("heldout", [s for s in held if s.family == f], n) for f, n in own.items()]
    return [
        (split, members, n)
        for split, members, n in [("heldout", rest, cfg.eval.episodes_per_member), *groups]
        if members
    ]


def evaluate_splits(
    cfg: StudyConfig,
    agent: Agent,
    world: StudyWorld,
    llm: LLMRuntime | None,
    splits: Sequence[tuple[str, Sequence[SimulatorSpec], int]],
    condition: str,
    on_episode: Callable[[Episode], None],
    phases: Phases | None = None,
) -> list[Episode]:
    """``(split, members, episodes per member)`` evaluated in order, as one list; ``phases``
    gets each split's seconds (training members, held-out families, real people)."""
    phases = phases if phases is not None else Phases()
    episodes: list[Episode] = []
    for split, members, per in splits:
        with phases.timing(eval_phase(split, members)):
            episodes += evaluate_members(
                cfg,
                agent,
                members,
                world,
                per,
                llm,
                split=split,
                condition=condition,
                on_episode=on_episode,
            )
    return episodes


def eval_phase(split: str, members: Sequence[SimulatorSpec]) -> str:
    """The phase an evaluation's time counts under: its split, real people apart."""
    if split != "train" and members and all(map(is_real, members)):
        return "eval_real"
    return f"eval_{split}"
