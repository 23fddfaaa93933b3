"""The slot-filling kit: the scenario core (``scenarios.core``) for tasks where the agent collects
fields from a caller (intake, the pizza order, a booking).

A slot-filling scenario subclasses ``SlotFilling`` and writes what is its own: ``fields``,
``acts``, ``voice``, ``sample_profile``, how it reads the user (``extract``, ``signals``) and the
agent (``interpret``), how it renders an act and how a programmatic user says a value. The kit
supplies the rest of the core: the state (``SlotState``: the record and what the agent did), what
each turn does to it, the agent's view (the state itself: everything in it is the agent's own),
the end rule (the user leaving after the agent's close completes the call; leaving otherwise is a
hang-up) and the gold (``grade_record``: every field right and the call closed).
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Protocol, TypeGuard, runtime_checkable

import numpy as np

from sim2human.scenarios.core import Act, AgentMove, Progress, Scenario, UserTraits
from sim2human.scenarios.slot_caller import SlotCaller, progress
from sim2human.scenarios.voice import Voice
from sim2human.types import Outcome, Profile, Record, Termination, Value

_CORRECTS = re.compile(
    r"\b(?:no,? wait|wait,? no|sorry,? i mean|i mean|i meant|no,? actually|actually,? no"
    r"|actually,? it'?s|actually,? (?:make|change) (?:it|that)"
    r"|(?:^|[.!?]\s*|\bno,?\s+|\bsorry,?\s+)not \w+(?: \w+){0,2}[,:;]+ (?:it'?s |make it |but )?\w"
    r"|scratch that|correction|let me correct that|or rather|my mistake)"
)
"""A caller correcting an answer of their own accord: "sorry, not Tuesday: Wednesday",
"actually it's 42", "I mean 8". Narrow on purpose: a story that merely starts "actually, I
also..." is no correction (``keep_answers``)."""


@lru_cache(maxsize=1 << 14)
def corrects(user_text: str) -> bool:
    """Whether ``user_text`` corrects an earlier answer (``keep_answers``' ``correcting``).
    Cached: it runs twice on every user turn (the agent's record, the replayed caller's
    belief), and a replayed caller says the same few dozen turns call after call."""
    return _CORRECTS.search(user_text.lower()) is not None


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


@dataclass(frozen=True, slots=True)
class SlotState:
    """A slot-filling call so far, all of it the agent's own (so it is also the agent's view)."""

    record: Record
    """What the agent has collected: field -> value, or None while unknown. Never mutated."""
    signals: UserSignals = UserSignals()
    last_field: str | None = None
    """The field the agent asked about last (None after a read-back)."""
    asked_now: bool = False
    """The agent's last turn asked a field or read the record back (``keep_answers``)."""
    asked: tuple[tuple[str, int], ...] = ()
    """How often the agent asked each field so far, by field name."""
    greeted: bool = False
    """The agent has greeted the caller."""
    record_version: int = 0
    """Bumped whenever the record changes; a read-back is current while it is unchanged."""
    read_back_version: int = -1
    closed: bool = False
    """The agent's last turn closed the call."""
    brief: str = ""
    """The agent's own brief (``View``): none for the kit's scenarios."""
    answered: frozenset[str] = frozenset()
    """Fields recorded while the agent was asking for them: a later turn about something else
    (a story naming another drug, a "no" to another question) does not overwrite them."""

    @property
    def read_back(self) -> bool:
        """The agent has read the record back since it last changed."""
        return self.read_back_version == self.record_version


class SlotScenario(Scenario[SlotState], Protocol):
    """The core protocol over ``SlotState``, plus the slot members the kit's users read (the
    simulators and the act-level agents, until the scenario owns the user's moves)."""

    @property
    def fields(self) -> tuple[str, ...]:
        """The slots to fill, in the order a plain agent asks them."""
        ...

    def empty_record(self) -> Record: ...

    def extract(self, user_text: str, record: Record, expecting: str | None) -> Record:
        """Return a new record with whatever the user's text says (never mutates ``record``)."""
        ...

    def signals(self, user_text: str, before: Record, after: Record) -> UserSignals: ...

    def interpret(self, agent_text: str) -> AgentIntent: ...

    def render_act(self, act: Act, last_field: str | None, record: Record) -> str: ...

    def say(self, field: str, value: Value, capacity: float, rng: np.random.Generator) -> str: ...


@runtime_checkable
class AppliesFields(Protocol):
    """A slot scenario some of whose fields apply only to some profiles (a scenario file's
    ``when:``): a booking desk's hotel fields to hotel callers only. A profile holds exactly the
    fields that apply to it; the user is never asked to say another; the agent's view says which
    apply given what it has recorded (``agents.features``)."""

    @property
    def conditional(self) -> bool:
        """Whether any field is conditional (False: every field applies to every profile)."""
        ...

    def applicable(self, values: Mapping[str, object]) -> tuple[str, ...]:
        """The fields that apply given ``values`` (a profile, or a record so far)."""
        ...


def conditional(scenario: object) -> AppliesFields | None:
    """``scenario`` when some of its fields apply only to some profiles, else None (every field
    applies to every profile: callers then use ``fields`` as they always did)."""
    if _applies_fields(scenario) and scenario.conditional:
        return scenario
    return None


def _applies_fields(scenario: object) -> TypeGuard[AppliesFields]:
    """``isinstance(scenario, AppliesFields)``, as ``typing`` checks a runtime protocol, without
    its cost (Python 3.11 works out the protocol's members again on every check: once a call
    here, a fiftieth of a replayed call's time)."""
    return hasattr(scenario, "conditional") and getattr(scenario, "applicable", None) is not None


def applicable_fields(scenario: object, values: Mapping[str, object]) -> tuple[str, ...]:
    """The fields of a slot ``scenario`` that apply given ``values`` (all, for most)."""
    own = conditional(scenario)
    if own is not None:
        return own.applicable(values)
    fields: tuple[str, ...] = getattr(scenario, "fields", ())
    return fields


def fields_of(scenario: SlotScenario, profile: Profile) -> tuple[str, ...]:
    """The fields that apply to ``profile``: every field, unless some are conditional (then the
    profile's own, which hold exactly those that apply)."""
    return scenario.fields if conditional(scenario) is None else tuple(profile)


class SlotUsers:
    """The kit's users (``core.SuppliesMoves``) of any slot ``scenario``: the moves of a
    ``SlotCaller``, and its progress read off a stored record. ``SlotFilling`` supplies these
    itself; this serves a scenario written to ``SlotScenario`` alone."""

    def __init__(self, scenario: SlotScenario) -> None:
        self.scenario = scenario

    def user_moves(
        self, profile: Profile, traits: UserTraits, rng: np.random.Generator
    ) -> SlotCaller:
        return SlotCaller(self.scenario, profile, fields_of(self.scenario, profile), traits, rng)

    def progress_of(self, profile: Profile, record: Record) -> Progress:
        """What got across, read off the record: the fields the agent recorded right."""
        across = {f for f, v in record.items() if v is not None and v == profile.get(f)}
        return progress(len(across), len(fields_of(self.scenario, profile)))


def grade_record(
    fields: tuple[str, ...], profile: Profile, record: Record, termination: Termination
) -> Outcome:
    """The usual gold rule: every field recorded right, and the agent closed the call. The score
    is that success (1 or 0); ``detail``: the share of fields right, and whether it closed."""
    right = {f: record.get(f) == profile[f] for f in fields}
    completed = termination == Termination.COMPLETED
    success = completed and all(right.values())
    return Outcome(
        success=success,
        fields=right,
        completed=completed,
        dropped=termination == Termination.HUNG_UP,
        score=float(success),
        detail={
            "fields_right": sum(right.values()) / max(1, len(right)),
            "closed": float(completed),
        },
    )


class SlotFilling(ABC):
    """The kit: the core members of a slot-filling scenario, from its slot members."""

    brief: str = ""
    """The agent's own brief in every call (none for intake)."""

    @property
    @abstractmethod
    def name(self) -> str: ...

    @property
    @abstractmethod
    def fields(self) -> tuple[str, ...]: ...

    @property
    @abstractmethod
    def acts(self) -> tuple[Act, ...]: ...

    @property
    @abstractmethod
    def voice(self) -> Voice: ...

    @abstractmethod
    def sample_profile(self, rng: np.random.Generator) -> Profile: ...

    @abstractmethod
    def extract(self, user_text: str, record: Record, expecting: str | None) -> Record: ...

    @abstractmethod
    def signals(self, user_text: str, before: Record, after: Record) -> UserSignals: ...

    @abstractmethod
    def interpret(self, agent_text: str) -> AgentIntent: ...

    @abstractmethod
    def render_act(self, act: Act, last_field: str | None, record: Record) -> str: ...

    @abstractmethod
    def say(self, field: str, value: Value, capacity: float, rng: np.random.Generator) -> str: ...

    # -- the core, supplied -------------------------------------------------------------------

    def empty_record(self) -> Record:
        return dict.fromkeys(self.fields)

    def carries_content(self, user_text: str) -> bool:
        """Whether ``user_text`` gives a value of any field (``core.ReadsUserContent``)."""
        return any(
            v is not None for v in self.extract(user_text, self.empty_record(), None).values()
        )

    def initial_state(self, profile: Profile) -> SlotState:
        return SlotState(record=self.empty_record(), brief=self.brief)

    def hear_user(self, state: SlotState, text: str) -> SlotState:
        """The record updated by what the user said (read as the answer to the last ask).

        A field answered when asked keeps its value against a turn that was about another
        question: real callers tell stories that name other drugs, dates and denials, and an
        extractor reading those as answers overwrote right values (ACI-Bench's train split).
        After a read-back (no field asked) the caller may correct any field."""
        before, asking = state.record, state.last_field
        heard = self.extract(text, before, asking)
        record, answered = keep_answers(
            before,
            heard,
            state.answered,
            asking,
            asked_now=state.asked_now,
            correcting=corrects(text),
        )
        changed = record != before
        return replace(
            state,
            record=record,
            signals=self.signals(text, before, record),
            record_version=state.record_version + changed,
            answered=answered,
        )

    def hear_agent(self, state: SlotState, turn: AgentMove) -> SlotState:
        """What the agent did: greeted, read the record back, asked a field, closed."""
        intent = self.interpret(turn.text)
        last_field, read_back_version = state.last_field, state.read_back_version
        if intent.confirm:  # the caller now answers the read-back, not the last question
            read_back_version, last_field = state.record_version, None
        asked = state.asked
        field_asked = turn.field or (intent.asks[0] if intent.asks else None)
        if field_asked is not None:
            last_field = field_asked
            asked = _bump(asked, field_asked)
        return replace(
            state,
            last_field=last_field,
            asked_now=field_asked is not None or intent.confirm,
            asked=asked,
            greeted=state.greeted or intent.greet,
            read_back_version=read_back_version,
            closed=intent.close,
        )

    def observe(self, state: SlotState) -> SlotState:
        return state

    def ending(self, state: SlotState, user_left: bool) -> Termination | None:
        """The user leaving after the agent's close completes the call; otherwise it is a
        hang-up. The agent's own turn never ends a slot-filling call (the caller says bye)."""
        if not user_left:
            return None
        return Termination.COMPLETED if state.closed else Termination.HUNG_UP

    def record(self, state: SlotState) -> Record:
        return dict(state.record)

    def user_moves(
        self, profile: Profile, traits: UserTraits, rng: np.random.Generator
    ) -> SlotCaller:
        """This scenario's users' moves (``core.SuppliesMoves``): the kit's ``SlotCaller``."""
        return SlotUsers(self).user_moves(profile, traits, rng)

    def progress_of(self, profile: Profile, record: Record) -> Progress:
        return SlotUsers(self).progress_of(profile, record)

    def grade(self, profile: Profile, record: Record, termination: Termination) -> Outcome:
        return grade_record(self.fields, profile, record, termination)


def keep_answers(
    before: Record,
    heard: Record,
    answered: frozenset[str],
    asking: str | None,
    *,
    asked_now: bool = True,
    correcting: bool = False,
) -> tuple[Record, frozenset[str]]:
    """``heard`` (the record after a user turn, as the extractor read it) with every field
    answered earlier, when asked for, kept as it was unless the agent's last turn reopened it:
    asked it again (``asking``, with ``asked_now``), or read the record back (no field asked,
    ``asked_now``: the caller may correct any). After a turn that asked nothing (a greeting, an
    "I understand") the caller's story changes no answer. A caller correcting themselves
    (``correcting``: the turn says so, ``corrects``: "sorry, not Tuesday: Wednesday") reopens
    every answer: what the turn states wins over the value it corrects. And the fields answered
    now. One rule for the agent's record (``SlotFilling.hear_user``), for what a replayed caller
    believes got across, and for an LLM user's reading."""
    record = dict(heard)
    for f in _kept(answered, asking, asked_now=asked_now, correcting=correcting):
        if f in record:
            record[f] = before.get(f)
    if asking is not None and record.get(asking) is not None:
        answered = answered | {asking}
    return record, answered


def _kept(
    answered: frozenset[str], asking: str | None, *, asked_now: bool, correcting: bool
) -> frozenset[str]:
    """The answers a user turn cannot change (``keep_answers``): those given earlier, less
    what the agent's last turn reopened. Worked out once per turn, not once per field: this
    rule runs twice on every user turn of a replayed call."""
    if correcting or (asked_now and asking is None):
        return frozenset()
    return answered - {asking} if asked_now else answered


def _bump(asked: tuple[tuple[str, int], ...], name: str) -> tuple[tuple[str, int], ...]:
    counts = dict(asked)
    counts[name] = counts.get(name, 0) + 1
    return tuple(sorted(counts.items()))
