"""The Agent seam: what an agent observes and what it says."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from sim2human.scenarios.base import UserSignals
from sim2human.types import Record


@dataclass(frozen=True)
class Observation:
    """Everything an agent may see: text and the extractor's reading of it, never the simulator.

    The same for every simulator family (fair observation), so an agent trained on personas can
    be evaluated on LLM, replay and human users without changing the task.
    """

    user_text: str
    record: Record
    signals: UserSignals
    turn: int
    max_turns: int
    history: tuple[str, ...]
    """Act ids (or texts, for free-text agents) of the agent's earlier turns, oldest first."""
    last_field: str | None
    """The field the agent itself asked about last."""
    asked: tuple[tuple[str, int], ...] = ()
    """How often the agent asked each field so far."""
    transcript: tuple[tuple[str, str], ...] = ()
    """(speaker, text) of every turn so far, oldest first: what a free-text (LLM) agent reads."""
    greeted: bool = False
    """The agent has greeted the caller."""
    read_back: bool = False
    """The agent has read the record back since it last changed."""


@dataclass(frozen=True)
class AgentTurn:
    text: str
    act: str | None = None
    field: str | None = None
    """The field this turn asks for, if the agent knows (act-level agents do)."""


class Agent(Protocol):
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

    async def act_async(self, observations: Sequence[Observation]) -> list[AgentTurn]: ...
