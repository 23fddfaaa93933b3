"""A recorded call as objects: its turns (``StoredTurn``, a tool-using agent's calls beside its
words), its session (``Session``), how a stored row reads back into them, and whose record a
call's gold grades (``record_source``). The database that holds them is ``store.calls``; this
module is what both it and the call page's readers share, and holds no SQL.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from sim2human.types import (
    Episode,
    Profile,
    Record,
    RecordSource,
    Termination,
    ToolCall,
    Turn,
    Value,
)

Mode = Literal["card", "self"]
Status = Literal["card", "calling", "confirm", "rating", "done"]


@dataclass(frozen=True)
class StoredTurn:
    speaker: Literal["agent", "user"]
    text: str
    act: str | None = None
    field: str | None = None
    tool_calls: tuple[ToolCall, ...] | None = None
    """Agent turns of a tool-using agent: the tools it called (empty when none); None for an
    agent whose record is what the call made heard (``AgentTurn.tool_calls``)."""


@dataclass(frozen=True)
class Session:
    """One call between a person and an agent: who, on what, how it went, its turns."""

    id: str
    run: str
    scenario: str
    agent: str
    agent_seed: int
    mode: Mode
    status: Status
    seed: int
    max_turns: int
    created: float
    profile: Profile | None
    termination: Termination | None
    record: Record | None
    rating: int | None
    details_right: str | None
    comment: str | None
    episode: Episode | None
    turns: tuple[StoredTurn, ...] = ()


def _profile(text: str | None) -> Profile | None:
    if text is None:
        return None
    raw: dict[str, Any] = json.loads(text)
    return {k: _value(v) for k, v in raw.items()}


def _value(v: Any) -> Value:
    return tuple(v) if isinstance(v, list) else v


def _record(text: str | None) -> Record | None:
    if text is None:
        return None
    raw: dict[str, Any] = json.loads(text)
    return {k: None if v is None else _value(v) for k, v in raw.items()}


def session_of(row: dict[str, Any], turns: Sequence[tuple[Any, ...]]) -> Session:
    return Session(
        id=row["id"],
        run=row["run"],
        scenario=row["scenario"],
        agent=row["agent"],
        agent_seed=int(row["agent_seed"]),
        mode=row["mode"],
        status=row["status"],
        seed=int(row["seed"]),
        max_turns=int(row["max_turns"]),
        created=float(row["created"]),
        profile=_profile(row["profile"]),
        termination=None if row["termination"] is None else Termination(row["termination"]),
        record=_record(row["record"]),
        rating=row["rating"],
        details_right=row["details_right"],
        comment=row["comment"],
        episode=None if row["episode"] is None else Episode.model_validate_json(row["episode"]),
        turns=tuple(
            StoredTurn(speaker=s, text=t, act=a, field=f, tool_calls=read_calls(c))
            for s, t, a, f, c in turns
        ),
    )


def as_turns(stored: Sequence[StoredTurn]) -> tuple[Turn, ...]:
    return tuple(
        Turn(speaker=t.speaker, text=t.text, act=t.act, tool_calls=t.tool_calls or ())
        for t in stored
    )


def record_source(stored: Sequence[StoredTurn]) -> RecordSource:
    """Whose record a call's gold grades: what a tool-using agent submitted, else what was heard
    (the rule of ``rollout.conversation``)."""
    return "submitted" if any(t.tool_calls is not None for t in stored) else "heard"


def calls_json(calls: tuple[ToolCall, ...] | None) -> str | None:
    if calls is None:
        return None
    return json.dumps([c.model_dump(mode="json") for c in calls])


def read_calls(text: str | None) -> tuple[ToolCall, ...] | None:
    if text is None:
        return None
    return tuple(ToolCall.model_validate(c) for c in json.loads(text))
