"""The table of simulator kinds: how a member of each kind is built, and what callers ask of it.

A kind is one row of ``KINDS``: how to build a member of that kind, and what callers ask of it
(does it need an endpoint, is it a programmatic persona with quirks, does it speak real people's
words, how is its hidden profile chosen). Callers read those attributes, never a kind's name
(``tests/test_kinds_declared.py``), so adding a kind is one module plus one row here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sim2human import seeding
from sim2human.errors import UsageError
from sim2human.scenarios.core import AnyScenario
from sim2human.simulators.base import AsyncSimulator, Simulator, SimulatorSpec, SyncAsAsync
from sim2human.simulators.persona import PersonaSimulator
from sim2human.simulators.replay import build_replay, replay_card
from sim2human.simulators.restyled import build_restyled
from sim2human.types import Episode, Profile

if TYPE_CHECKING:
    from sim2human.llm.client import ChatClient

Clients = dict[str, "ChatClient"]
"""Chat clients by endpoint name (what an endpoint-backed kind plays on)."""


@dataclass(frozen=True)
class Kind:
    """One simulator kind: a builder for programmatic members, or one that needs clients, and
    what its members are."""

    build: Callable[[SimulatorSpec, AnyScenario], Simulator] | None = None
    build_async: Callable[[SimulatorSpec, AnyScenario, Clients], AsyncSimulator] | None = None
    programmatic: bool = False
    """A programmatic persona with traits and quirks: played offline and cheaply, so the
    held-out probe, the diversity measure, the exploit finder and the integrations play it."""
    real_words: bool = False
    """Speaks real people's recorded words: its held-out episodes are reported as "real
    patients" and kept out of the simulated-user estimates."""
    profile: Callable[[SimulatorSpec, AnyScenario], Profile] | None = None
    """The one hidden profile every episode of a member plays (a recorded person's card);
    ``None``: the scenario draws one per episode (or from the member's fixed ``cards``)."""

    @property
    def needs_endpoint(self) -> bool:
        """Plays on an endpoint: needs chat clients and an event loop."""
        return self.build_async is not None

    @property
    def fixed_profiles(self) -> bool:
        """Plays fixed, recorded profiles rather than drawn ones."""
        return self.profile is not None


def _human(spec: SimulatorSpec, scenario: AnyScenario) -> Simulator:
    from sim2human.simulators.human import HumanSimulator

    return HumanSimulator(spec)


def _human_replay(spec: SimulatorSpec, scenario: AnyScenario) -> Simulator:
    from sim2human.simulators.human_replay import HumanReplaySimulator

    return HumanReplaySimulator(spec, scenario)


def _llm(spec: SimulatorSpec, scenario: AnyScenario, clients: Clients) -> AsyncSimulator:
    from sim2human.simulators.llm import build_llm_simulator

    return build_llm_simulator(spec, scenario, clients)


def _recorded(spec: SimulatorSpec, scenario: AnyScenario) -> Profile:
    from sim2human.simulators.human_replay import recorded_profile

    return recorded_profile(spec, scenario)


KINDS: dict[str, Kind] = {
    "persona": Kind(build=PersonaSimulator, programmatic=True),
    "replay": Kind(build=build_replay, real_words=True, profile=replay_card),
    "human": Kind(build=_human),
    "human-replay": Kind(build=_human_replay, profile=_recorded),
    "llm": Kind(build_async=_llm),
    "restyled": Kind(build=build_restyled, programmatic=True),
}


def needs_endpoint(spec: SimulatorSpec) -> bool:
    """Does this member play on an endpoint (so it needs clients, and an event loop)?"""
    return kind_of(spec).needs_endpoint


def kind_of(spec: SimulatorSpec) -> Kind:
    """The ``KINDS`` row of ``spec``; an unknown kind is a UsageError naming the known ones."""
    kind = KINDS.get(spec.kind)
    if kind is None:
        known = ", ".join(KINDS)
        raise UsageError(f"simulator {spec.id!r}: unknown kind {spec.kind!r} (known: {known})")
    return kind


def is_programmatic(spec: SimulatorSpec) -> bool:
    """Is ``spec`` a programmatic persona with quirks (``Kind.programmatic``)?"""
    return kind_of(spec).programmatic


def episode_kind(episode: Episode) -> Kind:
    """The ``KINDS`` row of the kind that played ``episode``. A stored kind this table does not
    know (a run written by another version) reads as a kind with nothing set, as the name
    comparisons it replaces read it."""
    return KINDS.get(episode.kind, Kind())


def speaks_real_words(episode: Episode) -> bool:
    """Did real people's recorded words play the user in ``episode`` (``Kind.real_words``)?"""
    return episode_kind(episode).real_words


def played_on_endpoint(episode: Episode) -> bool:
    """Did an endpoint-backed member play ``episode`` (``Kind.needs_endpoint``)?"""
    return episode_kind(episode).needs_endpoint


def build_simulator(spec: SimulatorSpec, scenario: AnyScenario) -> Simulator:
    """Instantiate the programmatic simulator a spec describes (looked up by its kind)."""
    kind = kind_of(spec)
    if kind.build is None:
        raise UsageError(f"simulator {spec.id!r}: kind {spec.kind!r} plays on an endpoint")
    return kind.build(spec, scenario)


def build_async_simulator(
    spec: SimulatorSpec, scenario: AnyScenario, clients: Clients
) -> AsyncSimulator:
    """The member ``spec`` describes, behind the async interface whatever its kind."""
    kind = kind_of(spec)
    if kind.build_async is not None:
        return kind.build_async(spec, scenario, clients)
    return SyncAsAsync(build_simulator(spec, scenario))


def member_profile(spec: SimulatorSpec, scenario: AnyScenario, seed: int) -> Profile:
    """The hidden profile ``spec`` plays in the episode of seed ``seed``: its kind's fixed one
    (``Kind.profile``: a recorded person's card), one of the member's fixed ``cards``
    (``LLMParams.cards``) chosen by the episode seed, or a fresh one per episode."""
    if (fixed := kind_of(spec).profile) is not None:
        return fixed(spec, scenario)
    cards = spec.llm.cards if spec.llm is not None else None
    if cards is None:
        return scenario.sample_profile(seeding.stream(seed, "profile"))
    return scenario.sample_profile(seeding.stream(spec.seed, "card", seed % cards))
