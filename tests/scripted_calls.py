"""A call played from a fixed list of agent lines (the user's side is the simulator's)."""

from __future__ import annotations

from collections.abc import Sequence

from sim2human.agents.base import AgentTurn
from sim2human.rollout.conversation import MAX_TURNS, Conversation, Job
from sim2human.scenarios.core import AnyScenario
from sim2human.simulators.base import SimulatorSpec


def play_lines(
    scenario: AnyScenario, spec: SimulatorSpec, lines: Sequence[str], seed: int = 0
) -> Conversation:
    """Say ``lines`` in order until the call ends (or they run out); the call as it stands."""
    conv = Conversation.open(Job(spec, seed), scenario, max_turns=MAX_TURNS)
    for line in lines:
        if conv.done:
            break
        conv.step(AgentTurn(text=line))
    return conv
