"""The tools an agent that writes its own words acts through: what it records is what gold grades.

Why tools. An act-level agent's record is the scenario's reading of the call (it asked for a
field and the caller said it), which is fair for an agent that can only ask. An agent that writes
its own words can say anything, and an agent that answered "I'm unable to assist with trains"
must not score the fields the caller happened to say. So, as in τ²-bench (where the reward reads
the end state of the database the agent's tool calls changed), such an agent acts on a **desk**:
``record(field, value)`` writes one field, ``submit()`` hands the record over, and gold grades
the record as of its last submit (``Episode.record_source == "submitted"``). An agent that
neither calls tools nor summarises has recorded nothing.

The tools are described in the OpenAI tool-call format (``tool_specs``), so an endpoint agent
gets them as ``tools=[...]``; a model in this process writes them as Hermes/Qwen
``<tool_call>{json}</tool_call>`` blocks (``split_tool_text``), the format its chat template
renders. A model served without tool calls may instead end with a summary, a JSON object of
field -> value in its text (``summary_calls``), read as ``record`` calls and a ``submit``.

A value is read by the scenario's own reader as the caller's answer to that field
(``read_value``), so ``"42"``, ``"forty-two"`` and ``"none"`` mean what they would mean from
the caller. A scenario of another shape declares its own tools (``DeclaresTools``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol, runtime_checkable

import numpy as np

from sim2human.types import Record, ToolCall, Value

RECORD = "record"
SUBMIT = "submit"
_TOOL_BLOCK = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL)
_JSON_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


@runtime_checkable
class ReadsFields(Protocol):
    """What the default desk needs of a scenario: the slot kit's fields and reader."""

    @property
    def name(self) -> str: ...

    @property
    def fields(self) -> tuple[str, ...]: ...

    def empty_record(self) -> Record: ...

    def extract(self, user_text: str, record: Record, expecting: str | None) -> Record: ...


@runtime_checkable
class DeclaresTools(Protocol):
    """A scenario with tools of its own (a booking desk's ``book``, a sale's ``bid``): their
    OpenAI specs, and what one call does to the desk (``Desk.working``)."""

    def agent_tools(self) -> list[dict[str, Any]]: ...

    def use_tool(self, working: Record, call: ToolCall) -> Record: ...


@dataclass(frozen=True)
class Desk:
    """What an agent has recorded (``working``) and handed over (``submitted``, None until its
    first ``submit``)."""

    working: Record
    submitted: Record | None = None

    def graded(self, empty: Record) -> Record:
        """The record gold grades: the last submitted one, or ``empty`` if none was."""
        return dict(self.submitted) if self.submitted is not None else dict(empty)


def tool_specs(scenario: object) -> list[dict[str, Any]]:
    """The scenario's tools in the OpenAI format: its own, or ``record`` and ``submit`` over its
    fields."""
    if isinstance(scenario, DeclaresTools):
        return scenario.agent_tools()
    fields = list(_fields(scenario))
    return [
        _spec(
            RECORD,
            "Write one field of the record from what the caller told you.",
            {
                "field": {"type": "string", "enum": fields, "description": "Which field."},
                "value": {"type": "string", "description": "Its value, in plain words."},
            },
            ["field", "value"],
        ),
        _spec(SUBMIT, "Hand the record over as it stands: only what is submitted counts.", {}, []),
    ]


def _spec(name: str, doc: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": doc,
            "parameters": {"type": "object", "properties": properties, "required": required},
        },
    }


def _fields(scenario: object) -> tuple[str, ...]:
    fields = getattr(scenario, "fields", None)
    if not isinstance(fields, tuple):
        name = getattr(scenario, "name", type(scenario).__name__)
        raise TypeError(f"scenario {name!r} has no fields and declares no tools (DeclaresTools)")
    return fields


def has_desk(scenario: object) -> bool:
    """Whether ``scenario`` has a desk: tools of its own, or fields to record. One without
    (negotiation, whose deal is made by both sides' words) is graded on what was said."""
    return isinstance(scenario, DeclaresTools | ReadsFields)


def open_desk(scenario: object) -> Desk:
    """An empty desk for one call (a scenario's empty record, or nothing for one off the kit)."""
    return Desk(working=scenario.empty_record() if isinstance(scenario, ReadsFields) else {})


def use_tools(scenario: object, desk: Desk, calls: Sequence[ToolCall]) -> Desk:
    """``desk`` after ``calls``, in order. A call the scenario cannot read (an unknown tool or
    field, a value its reader makes nothing of) changes nothing: an agent's mistake, not an
    error of the run."""
    for call in calls:
        if call.name == SUBMIT:
            desk = replace(desk, submitted=dict(desk.working))
        elif isinstance(scenario, DeclaresTools):
            desk = replace(desk, working=scenario.use_tool(desk.working, call))
        elif call.name == RECORD and isinstance(scenario, ReadsFields):
            field, value = call.arguments.get("field"), call.arguments.get("value")
            if isinstance(field, str) and field in desk.working and value is not None:
                read = read_value(scenario, field, str(value))
                if read is not None:
                    desk = replace(desk, working={**desk.working, field: read})
    return desk


def read_value(scenario: ReadsFields, field: str, text: str) -> Value | None:
    """``text`` read as the caller's answer to ``field`` (None when it says nothing of it), the
    spaces around it stripped (the warm start writes a value after a space: ``written_value``)."""
    return scenario.extract(text.strip(), scenario.empty_record(), field).get(field)


def value_text(
    scenario: ReadsFields,
    field: str,
    value: Value,
    say: Any = None,
    rng: np.random.Generator | None = None,
) -> str | None:
    """Words for ``value`` that ``read_value`` reads back as ``value`` (the reference agent's
    ``record`` argument in a warm-start transcript): the plain forms first, then the caller's own
    words (``say(field, value, capacity, rng)``), or None when nothing round-trips."""
    plain: list[str] = []
    if isinstance(value, bool):
        plain = ["yes" if value else "no"]
    elif isinstance(value, tuple):
        plain = [" and ".join(value) if value else "none", ", ".join(value)]
    else:
        plain = [str(value)]
    for text in plain:
        if read_value(scenario, field, text) == value:
            return text
    if say is not None and rng is not None:
        for _ in range(4):
            text = str(say(field, value, 1.0, rng))
            if read_value(scenario, field, text) == value:
                return text
    return None


def split_tool_text(raw: str) -> tuple[str, tuple[ToolCall, ...]]:
    """A model's raw turn as (what it said, the tools it called): ``<tool_call>{json}
    </tool_call>`` blocks are taken out of the spoken text; a block that is not a JSON call of
    the form ``{"name": ..., "arguments": {...}}`` is dropped (said nothing, did nothing)."""
    calls = [c for block in _TOOL_BLOCK.findall(raw) if (c := _parse_call(block)) is not None]
    spoken = _TOOL_BLOCK.sub(" ", raw)
    return " ".join(spoken.split()), tuple(calls)


def _parse_call(block: str) -> ToolCall | None:
    try:
        data = json.loads(block)
    except ValueError:
        return None
    return to_call(data)


def to_call(data: object) -> ToolCall | None:
    """``{"name": ..., "arguments": {...} | "json text"}`` (the OpenAI function object, or a
    Hermes block) as a ``ToolCall``; None when it is not one."""
    if not isinstance(data, dict) or not isinstance(data.get("name"), str):
        return None
    args = data.get("arguments", {})
    if isinstance(args, str):
        try:
            args = json.loads(args) if args.strip() else {}
        except ValueError:
            return None
    if not isinstance(args, dict):
        return None
    plain = {
        str(k): v if isinstance(v, str | int | float | bool) or v is None else json.dumps(v)
        for k, v in args.items()
    }
    return ToolCall(name=data["name"], arguments=plain)


def tool_text(call: ToolCall) -> str:
    """``call`` as the block a model writes (the inverse of ``split_tool_text``)."""
    body = json.dumps({"name": call.name, "arguments": call.arguments}, ensure_ascii=False)
    return f"<tool_call>{body}</tool_call>"


def summary_calls(scenario: ReadsFields, text: str) -> tuple[ToolCall, ...]:
    """A summary in ``text`` (a JSON object of field -> value, the last one) as ``record``
    calls and a ``submit``: how a model served without tool calls hands its record over."""
    fields = set(scenario.fields)
    for match in reversed(list(_JSON_OBJECT.finditer(text))):
        try:
            data = json.loads(match.group(0))
        except ValueError:
            continue
        if isinstance(data, dict) and fields & set(data):
            calls = [
                ToolCall(name=RECORD, arguments={"field": k, "value": _words(v)})
                for k, v in data.items()
                if k in fields and v is not None
            ]
            return (*calls, ToolCall(name=SUBMIT))
    return ()


def _words(value: object) -> str:
    if isinstance(value, list | tuple):
        return " and ".join(str(v) for v in value) if value else "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)
