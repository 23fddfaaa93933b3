"""The Agent seam: what an agent observes and what it says."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from sim2human.scenarios.core import Act, View
from sim2human.scenarios.slots import SlotState, UserSignals
from sim2human.types import Record, ToolCall


@dataclass(frozen=True)
class Observation:
    """Everything an agent may see: text and the scenario's view of the state, never the
    simulator.

    The same for every simulator family (fair observation), so an agent trained on personas can
    be evaluated on LLM, replay and human users without changing the task. ``record``,
    ``signals``, ``last_field``, ``asked``, ``greeted`` and ``read_back`` read the view of a
    slot-filling scenario (``scenarios.slots.SlotState``).
    """

    user_text: str
    turn: int
    max_turns: int
    history: tuple[str, ...]
    """Act ids (or texts, for free-text agents) of the agent's earlier turns, oldest first."""
    view: View
    """What the scenario shows of the state (``Scenario.observe``)."""
    transcript: tuple[tuple[str, str], ...] = ()
    """(speaker, text) of every turn so far, oldest first: what a free-text (LLM) agent reads."""
    tool_calls: tuple[tuple[ToolCall, ...], ...] = ()
    """The tools the agent called, one entry per agent turn of ``transcript`` in order (what a
    tool-using agent reads back of its own turns; ``scenarios.tools``)."""
    call: str = ""
    """Which call this is (the episode's id): an agent that keeps state per call (a language
    model keeping the exact tokens it wrote) keys it by this."""

    @property
    def brief(self) -> str:
        """The agent's own private brief for this call (empty for intake)."""
        return self.view.brief

    def field_of(self, act: Act) -> str | None:
        """The field ``act`` is about in this call (``Act.about``): only a clarify reads the
        field asked last, so an act of a scenario off the slot kit never needs a slot view."""
        return act.about_in(self.view)

    @property
    def slots(self) -> SlotState:
        """The view of a slot-filling scenario; a TypeError for any other."""
        if not isinstance(self.view, SlotState):
            raise TypeError(f"not a slot-filling scenario's view: {type(self.view).__name__}")
        return self.view

    @property
    def record(self) -> Record:
        """What the agent has collected so far (do not mutate)."""
        return self.slots.record

    @property
    def signals(self) -> UserSignals:
        """What the user's last turn showed: silent, confused, new fields, a correction."""
        return self.slots.signals

    @property
    def last_field(self) -> str | None:
        """The field the agent itself asked about last."""
        return self.slots.last_field

    @property
    def asked(self) -> tuple[tuple[str, int], ...]:
        """How often the agent asked each field so far."""
        return self.slots.asked

    @property
    def greeted(self) -> bool:
        """The agent has greeted the caller."""
        return self.slots.greeted

    @property
    def read_back(self) -> bool:
        """The agent has read the record back since it last changed."""
        return self.slots.read_back


@dataclass(frozen=True)
class AgentTurn:
    """One agent turn: its text, and the act and field it was, when the agent knows."""

    text: str
    act: str | None = None
    field: str | None = None
    """The field this turn asks for, if the agent knows (act-level agents do)."""
    tool_calls: tuple[ToolCall, ...] | None = None
    """The tools this turn called (``scenarios.tools``), or None for an agent that does not act
    through tools (an act-level agent, whose record is what it heard). An agent that acts through
    tools gives a tuple every turn, empty when it called none: its gold grades what it submitted."""


class Agent(Protocol):
    """Who plays the agent: turns for a batch of conversations."""

    name: str

    def act(self, observations: Sequence[Observation]) -> list[AgentTurn]:
        """Next turns for a batch of conversations (batched: policies run one forward pass)."""
        ...


@runtime_checkable
class SamplingAgent(Protocol):
    """An agent whose turns are random draws, which can take each conversation's own generator:
    then an episode's draws depend on its own job only, never on which other conversations
    share its batch (so leaving a family out of an evaluation moves no other family's episodes).
    """

    name: str

    def act_each(
        self, observations: Sequence[Observation], rngs: Sequence[np.random.Generator]
    ) -> list[AgentTurn]:
        """``act``, the turn for ``observations[i]`` drawn from ``rngs[i]``."""
        ...


@runtime_checkable
class AsyncAgent(Protocol):
    """An agent whose turns wait on an endpoint."""

    name: str

    async def act_async(self, observations: Sequence[Observation]) -> list[AgentTurn]:
        """Next turns for a batch of conversations (may wait on the endpoint)."""
