"""The records every other module speaks: turns, outcomes and episodes.

They are pydantic models (frozen) rather than plain dataclasses because episodes are written to
and read back from ``episodes.jsonl``: validation on load is what lets ``report`` and ``diagnose``
name the broken line of a corrupted run instead of failing somewhere downstream.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

# A field value in canonical form: text, a number, yes/no, or a set of names (kept sorted).
Value = str | int | bool | tuple[str, ...]
Profile = dict[str, Value]
"""The hidden truth about one user: field name -> canonical value. Never shown to the agent."""
Record = dict[str, Value | None]
"""What the agent has collected so far: field name -> value, or None while unknown."""


class Frozen(BaseModel):
    """An immutable record that refuses unknown keys (every stored record is one)."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class FrozenConfig(Frozen):
    """A model read from a user's config: no NaN and no infinity in any float field.

    Not on ``Frozen`` itself: stored results legitimately hold NaN (the mean of no episodes,
    ``metrics.collapse``). In a config a non-finite number is always a mistake, and one that
    surfaces late: ``model_dump_json`` writes inf and NaN as ``null``, which the worker's
    ``model_validate_json`` then refuses with a traceback.
    """

    model_config = ConfigDict(allow_inf_nan=False)


def ordered_range(bounds: tuple[float, float]) -> tuple[float, float]:
    """``(low, high)`` with low <= high, and a signed zero made plain.

    ``-0.0 + 0.0`` is ``0.0``: numpy's ``uniform(0.0, -0.0)`` raises ``high - low < 0`` although
    the two ends are equal, so a config's ``[0.0, -0.0]`` would pass ``low <= high`` here and
    crash the worker later.
    """
    low, high = bounds
    if low > high:
        raise ValueError(f"low end {low} is above high end {high}")
    return (low + 0.0, high + 0.0)


Range = Annotated[tuple[float, float], AfterValidator(ordered_range)]
"""A ``[low, high]`` interval a value is drawn from uniformly (checked by ``ordered_range``)."""


class Termination(StrEnum):
    """How a conversation ended, whichever side ended it (the scenario decides which, in
    ``Scenario.ending``; the turn limit and errors are the conversation core's). The stored
    values of the first four are those of runs made before the others existed."""

    COMPLETED = "completed"  # the task done, the call closed (slot filling: by the agent)
    HUNG_UP = "hung_up"  # the user left without the task done: a dropped call
    MAX_TURNS = "max_turns"  # ran out of turns without an end
    ERROR = "error"  # an endpoint or component failed; the reason is stored
    AGREED = "agreed"  # both sides accepted the same deal (negotiation)
    WALKED_AWAY = "walked_away"  # a side chose to leave without a deal


class ToolCall(Frozen):
    """One tool call an agent made, in the OpenAI tool-call format's terms: a function name and
    its arguments (``scenarios.tools`` says which tools a scenario offers and what they do)."""

    name: str
    arguments: dict[str, str | int | float | bool | None] = Field(default_factory=dict)


def _empty(value: object) -> bool:
    return not value


RecordSource = Literal["heard", "submitted"]
"""Which record an episode's gold grades. ``heard``: the scenario's reading of the conversation
(an act-level agent's record: what it asked for and the caller said). ``submitted``: what the
agent itself recorded through tools and submitted (a language-model agent's: words alone record
nothing)."""


class Turn(Frozen):
    speaker: Literal["agent", "user"]
    text: str
    act: str | None = None
    """Agent turns: the act id when the agent is act-level. User turns: never read by agents."""
    tags: tuple[str, ...] = ()
    """Annotations from persona simulators (``confused``, ``trigger``...), for analysis only."""
    tool_calls: tuple[ToolCall, ...] = Field(default=(), exclude_if=_empty)
    """Agent turns: the tools the agent called with this turn (not spoken: the caller hears
    ``text`` alone). Left out of the stored line when empty, so runs of agents without tools
    are stored exactly as before tools existed."""


class Outcome(Frozen):
    """The gold result of one episode, from ``Scenario.grade`` on the hidden profile."""

    success: bool
    """Whether the task was achieved (slot filling: every field right and the call closed)."""
    fields: dict[str, bool]
    """Slot filling: which fields were recorded right (empty where a task has no fields)."""
    completed: bool
    dropped: bool
    score: float = Field(
        default_factory=lambda data: float(data.get("success", False)), ge=0.0, le=1.0
    )
    """The gold as a number in [0, 1] (slot filling: 1 for success, else 0; negotiation: the
    agent's normalised points). Outcomes stored before it existed score their success."""
    detail: dict[str, float] = Field(default_factory=dict)
    """The score's breakdown, by name (slot filling: the share of fields right and whether the
    call closed; negotiation: each side's points)."""

    @property
    def field_accuracy(self) -> float:
        """The share of the scenario's fields the agent got right."""
        return sum(self.fields.values()) / max(1, len(self.fields))


class Episode(Frozen):
    """One whole conversation with both of its rewards. Everything downstream reads these."""

    id: str
    scenario: str
    simulator_id: str
    family: str
    kind: str = Field(default_factory=lambda data: legacy_kind(str(data.get("family", ""))))
    """Which simulator kind played the user: a row of ``simulators.kinds.KINDS`` (``persona``,
    ``llm``, ``replay``, ``human`` ...). Episodes stored before it existed get the kind their
    family names (``legacy_kind``). A default that reads the validated ``family`` rather than a
    ``mode="before"`` model validator: such a validator makes pydantic build the whole episode as
    Python objects before validating it, which costs ``model_validate_json`` its speed."""
    split: Literal["train", "heldout"]
    seed: int
    turns: tuple[Turn, ...]
    proxy: float = Field(ge=0.0, le=1.0)
    """The simulator's satisfaction score: the only reward a trainer may see."""
    gold: Outcome
    termination: Termination
    profile: Profile
    record: Record
    error: str | None = None
    condition: str = ""
    phase: str = ""
    """``train`` or ``eval``: where in a run the episode was played."""
    step: int = 0
    """Trainer update index at which the episode was played (0 for evaluations)."""
    record_source: RecordSource = Field(default="heard", exclude_if=lambda v: v == "heard")
    """Which record ``gold`` graded (``RecordSource``); stored only when it is ``submitted``."""
    diagnostics: dict[str, float] = Field(default_factory=dict)
    """Counters from the simulator (an ``llm`` member's role-guard retries and failures, judge
    parse failures, tokens), for analysis; empty for ``persona`` members."""

    @property
    def agent_turns(self) -> list[Turn]:
        """The agent's turns, in order."""
        return [t for t in self.turns if t.speaker == "agent"]

    @property
    def n_turns(self) -> int:
        """How many turns the agent took (the handle time of the call)."""
        return len(self.agent_turns)


def legacy_kind(family: str) -> str:
    """The simulator kind of an episode stored without one, from its family (the families there
    were then: ``llm:*``, ``aci-*`` replays, ``human``, ``human-replay``, persona)."""
    if family.startswith("llm:"):
        return "llm"
    if family in ("human", "human-replay"):
        return family
    return "replay" if family.startswith("aci-") else "persona"
