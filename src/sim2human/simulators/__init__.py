"""User simulators: the ``Simulator`` protocol, families, and a table of kinds."""

from __future__ import annotations

from sim2human.errors import UsageError
from sim2human.scenarios.base import Scenario
from sim2human.simulators.base import Simulator, SimulatorSpec
from sim2human.simulators.persona import PersonaSimulator
from sim2human.simulators.replay import ReplaySimulator
from sim2human.types import Profile


def build_simulator(spec: SimulatorSpec, scenario: Scenario) -> Simulator:
    """Instantiate the simulator a spec describes (looked up by its kind)."""
    if spec.kind == "persona":
        return PersonaSimulator(spec, scenario)
    if spec.kind == "replay":
        return ReplaySimulator(spec, scenario)
    if spec.kind == "human":
        from sim2human.simulators.human import HumanSimulator

        return HumanSimulator(spec)
    if spec.kind == "human-replay":
        from sim2human.simulators.human_replay import HumanReplaySimulator

        return HumanReplaySimulator(spec, scenario)
    raise UsageError(f"simulator {spec.id!r}: kind {spec.kind!r} is not available")


def fixed_profile(spec: SimulatorSpec, scenario: Scenario) -> Profile | None:
    """The profile a recorded member always plays (``human-replay``: the person's card)."""
    if spec.kind == "human-replay":
        from sim2human.simulators.human_replay import recorded_profile

        return recorded_profile(spec, scenario)
    return None
