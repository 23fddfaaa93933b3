"""The Scenario seam: what a task is, independent of who plays the user or the agent."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

import numpy as np

from sim2human.scenarios.voice import Voice
from sim2human.types import Outcome, Profile, Record, Termination, Value

ActKind = Literal["greet", "ask", "clarify", "confirm", "empathise", "prompt", "close", "style"]
ActStyle = Literal["plain", "jargon", "stylistic"]


@dataclass(frozen=True)
class Act:
    """One utterance of an act-level agent's inventory."""

    id: str
    kind: ActKind
    text: str
    field: str | None = None
    style: ActStyle = "plain"


@dataclass(frozen=True)
class AgentIntent:
    """How a simulator reads an agent turn (from its text alone, for every kind of agent)."""

    asks: tuple[str, ...] = ()
    jargon: bool = False
    greet: bool = False
    close: bool = False
    empathy: bool = False
    confirm: bool = False
    clarify: bool = False


@dataclass(frozen=True)
class UserSignals:
    """What the agent may read off the user's last turn besides the extracted fields."""

    silent: bool = False
    confused: bool = False
    new_fields: int = 0
    corrected: bool = False


class Scenario(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def fields(self) -> tuple[str, ...]: ...

    @property
    def acts(self) -> tuple[Act, ...]: ...

    @property
    def voice(self) -> Voice:
        """The scenario's words for simulator kinds and agents (``scenarios.voice``)."""
        ...

    def sample_profile(self, rng: np.random.Generator) -> Profile: ...

    def empty_record(self) -> Record: ...

    def extract(self, user_text: str, record: Record, expecting: str | None) -> Record:
        """Return a new record with whatever the user's text says (never mutates ``record``)."""
        ...

    def signals(self, user_text: str, before: Record, after: Record) -> UserSignals: ...

    def interpret(self, agent_text: str) -> AgentIntent: ...

    def render_act(self, act: Act, last_field: str | None, record: Record) -> str: ...

    def say(self, field: str, value: Value, capacity: float, rng: np.random.Generator) -> str: ...

    def grade(self, profile: Profile, record: Record, termination: Termination) -> Outcome: ...


def grade_record(
    fields: tuple[str, ...], profile: Profile, record: Record, termination: Termination
) -> Outcome:
    """The usual gold rule: every field recorded right, and the agent closed the call."""
    right = {f: record.get(f) == profile[f] for f in fields}
    completed = termination == Termination.COMPLETED
    return Outcome(
        success=completed and all(right.values()),
        fields=right,
        completed=completed,
        dropped=termination == Termination.HUNG_UP,
    )
