"""User simulators: the ``Simulator`` protocol, families, and the table of kinds.

A kind is one row of ``KINDS``: how to build a member of that kind, and whether it needs an
endpoint (a chat client) to play. Adding a kind is one module plus one row here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sim2human.errors import UsageError
from sim2human.scenarios.base import Scenario
from sim2human.simulators.base import AsyncSimulator, Simulator, SimulatorSpec, SyncAsAsync
from sim2human.simulators.persona import PersonaSimulator
from sim2human.simulators.replay import ReplaySimulator
from sim2human.types import Profile

if TYPE_CHECKING:
    from sim2human.llm.client import ChatClient

Clients = dict[str, "ChatClient"]
"""Chat clients by endpoint name (what an endpoint-backed kind plays on)."""


@dataclass(frozen=True)
class Kind:
    """One simulator kind: a builder for programmatic members, or one that needs clients."""

    build: Callable[[SimulatorSpec, Scenario], Simulator] | None = None
    build_async: Callable[[SimulatorSpec, Scenario, Clients], AsyncSimulator] | None = None

    @property
    def needs_endpoint(self) -> bool:
        return self.build_async is not None


def _human(spec: SimulatorSpec, scenario: Scenario) -> Simulator:
    from sim2human.simulators.human import HumanSimulator

    return HumanSimulator(spec)


def _human_replay(spec: SimulatorSpec, scenario: Scenario) -> Simulator:
    from sim2human.simulators.human_replay import HumanReplaySimulator

    return HumanReplaySimulator(spec, scenario)


def _llm(spec: SimulatorSpec, scenario: Scenario, clients: Clients) -> AsyncSimulator:
    from sim2human.simulators.llm import build_llm_simulator

    return build_llm_simulator(spec, scenario, clients)


KINDS: dict[str, Kind] = {
    "persona": Kind(build=PersonaSimulator),
    "replay": Kind(build=ReplaySimulator),
    "human": Kind(build=_human),
    "human-replay": Kind(build=_human_replay),
    "llm": Kind(build_async=_llm),
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


def build_simulator(spec: SimulatorSpec, scenario: Scenario) -> Simulator:
    """Instantiate the programmatic simulator a spec describes (looked up by its kind)."""
    kind = kind_of(spec)
    if kind.build is None:
        raise UsageError(f"simulator {spec.id!r}: kind {spec.kind!r} plays on an endpoint")
    return kind.build(spec, scenario)


def build_async_simulator(
    spec: SimulatorSpec, scenario: Scenario, clients: Clients
) -> AsyncSimulator:
    """The member ``spec`` describes, behind the async interface whatever its kind."""
    kind = kind_of(spec)
    if kind.build_async is not None:
        return kind.build_async(spec, scenario, clients)
    return SyncAsAsync(build_simulator(spec, scenario))


def fixed_profile(spec: SimulatorSpec, scenario: Scenario) -> Profile | None:
    """The profile a recorded member always plays (``human-replay``: the person's card)."""
    if spec.kind == "human-replay":
        from sim2human.simulators.human_replay import recorded_profile

        return recorded_profile(spec, scenario)
    return None
