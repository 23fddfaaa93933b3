"""A tool-using agent's turns as OpenAI chat messages: what ``LLMAgent`` sends back to its model
and what ``export`` writes, one rendering for both, so a transcript trains on what the model saw.

An agent turn that called tools reads as the exchange it was: an assistant message carrying the
``tool_calls`` (ids ``call_<agent turn>_<index>``: stable, so that cache keys are), one ``tool``
message per call saying what the desk made of it ("recorded severity = 7", "submitted: {...}",
"not recorded: ..."; a recorded value says which fields are still empty, as a paper form shows
its empty boxes, so a model need not work out from the whole call what it has yet to ask), then
an assistant message with the words the caller heard. The results are
worked out again from the calls (``scenarios.tools.use_tools`` over a fresh desk), not stored:
they are a function of the calls. A turn without tool calls is one assistant message, so the
chat of an agent that never calls tools is exactly the chat it was before tools existed.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from sim2human.scenarios.slots import applicable_fields
from sim2human.scenarios.tools import (
    RECORD,
    SUBMIT,
    Desk,
    ReadsFields,
    has_desk,
    open_desk,
    read_value,
    use_tools,
)
from sim2human.types import ToolCall

RESULTS_WORDING = "2: a recorded value names the fields still empty"
"""Which words the desk answers tool calls with. A model trains on them (they are its context),
so a warm start's name hashes this: change it whenever ``result_text`` says something new, and
no run reuses a warm start trained on the old words."""

Message = dict[str, Any]
Spoken = tuple[str, str, Sequence[ToolCall]]
"""One turn: speaker (``agent`` or ``user``), its text, and the tools an agent turn called."""


def call_id(agent_turn: int, index: int) -> str:
    """The id of the ``index``-th call of the ``agent_turn``-th agent turn (0-based)."""
    return f"call_{agent_turn}_{index}"


def openai_call(call: ToolCall, id_: str) -> dict[str, Any]:
    """``call`` as an entry of an assistant message's ``tool_calls`` (arguments as JSON text)."""
    arguments = json.dumps(call.arguments, ensure_ascii=False)
    return {"id": id_, "type": "function", "function": {"name": call.name, "arguments": arguments}}


def run_calls(scenario: object, desk: Desk, calls: Sequence[ToolCall]) -> tuple[Desk, list[str]]:
    """``desk`` after ``calls``, and what each call did, in words the model reads back."""
    said = []
    for call in calls:
        after = use_tools(scenario, desk, [call])
        said.append(result_text(scenario, call, desk, after))
        desk = after
    return desk, said


def result_text(scenario: object, call: ToolCall, before: Desk, after: Desk) -> str:
    """What ``call`` did to the desk: the value as read, the record as submitted, or why it
    changed nothing (so a model that wrote a field the scenario cannot read can try again)."""
    if call.name == SUBMIT:
        return "submitted: " + _json(after.submitted)
    if call.name == RECORD and isinstance(scenario, ReadsFields):
        field, value = call.arguments.get("field"), call.arguments.get("value")
        if not isinstance(field, str) or field not in before.working:
            return f"not recorded: no field {field!r} (fields: {', '.join(scenario.fields)})"
        read = None if value is None else read_value(scenario, field, str(value))
        if read is None:
            return f"not recorded: {str(value).strip()!r} is not a value of {field}"
        return f"recorded {field} = {_json(read)}; {still_empty(scenario, after)}"
    if after.working == before.working:
        return f"{call.name}: nothing changed"
    return f"{call.name}: done; record now {_json(after.working)}"


def still_empty(scenario: ReadsFields, desk: Desk) -> str:
    """The fields of ``desk``'s record that apply (given what it holds) and hold nothing yet."""
    empty = [f for f in applicable_fields(scenario, desk.working) if desk.working.get(f) is None]
    return "still empty: " + ", ".join(empty) if empty else "every field recorded"


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def tool_turn(
    scenario: object, desk: Desk, agent_turn: int, text: str | None, calls: Sequence[ToolCall]
) -> tuple[Desk, list[Message]]:
    """The assistant message of ``calls`` (with ``text`` as its content, None for none) and
    their ``tool`` results, and the desk after them."""
    ids = [call_id(agent_turn, i) for i in range(len(calls))]
    desk, said = run_calls(scenario, desk, calls)
    asked: Message = {
        "role": "assistant",
        "content": text,
        "tool_calls": [openai_call(c, i) for c, i in zip(calls, ids, strict=True)],
    }
    results = [
        {"role": "tool", "tool_call_id": i, "content": r} for i, r in zip(ids, said, strict=True)
    ]
    return desk, [asked, *results]


def chat_messages(
    scenario: object, turns: Iterable[Spoken], system: str | None
) -> tuple[list[Message], Desk]:
    """``turns`` as chat messages after ``system``, and the desk they leave (what the agent has
    recorded and submitted so far)."""
    desk = open_desk(scenario) if has_desk(scenario) else Desk(working={})
    out: list[Message] = [] if system is None else [{"role": "system", "content": system}]
    agent_turn = 0
    for speaker, text, calls in turns:
        if speaker != "agent":
            out.append({"role": "user", "content": text})
            continue
        if calls:
            desk, said = tool_turn(scenario, desk, agent_turn, None, calls)
            out += said
        out.append({"role": "assistant", "content": text})
        agent_turn += 1
    return out, desk
