"""A tool-using agent's turns outside the call: ``export`` writes its tool calls in the OpenAI
chat format (and their results, as it was sent them), and the viewer shows them under the turn.
An agent without tools is exported and shown exactly as before."""

from __future__ import annotations

from collections.abc import Sequence

from sim2human.agents.base import AgentTurn, Observation
from sim2human.agents.scripted import reference_agent
from sim2human.integrations.chat import chat_row
from sim2human.rollout.evaluate import eval_jobs
from sim2human.rollout.play import play
from sim2human.scenarios.catalog import get_scenario
from sim2human.simulators.base import QuirkPool
from sim2human.simulators.families import get_family
from sim2human.types import Episode, ToolCall
from sim2human.viewer.data import Strings, turns
from tool_calls import SEVERITY_RECORDED

INTAKE = get_scenario("intake")
SEVERITY = ToolCall(name="record", arguments={"field": "severity", "value": "7"})


class RecordsSeverity:
    """Asks as the reference agent does; on its first turn records a severity and submits."""

    name = "records-severity"

    def __init__(self) -> None:
        self.inner = reference_agent(INTAKE)

    def act(self, observations: Sequence[Observation]) -> list[AgentTurn]:
        return [
            AgentTurn(
                text=t.text, tool_calls=(SEVERITY, ToolCall(name="submit")) if o.turn == 0 else ()
            )
            for o, t in zip(observations, self.inner.act(observations), strict=True)
        ]


def episode(agent: object) -> Episode:
    spec = get_family("cooperative").sample(0, QuirkPool.from_acts(INTAKE.acts))
    (e,) = play(agent, eval_jobs([spec], "heldout", 1, "x"), INTAKE, max_turns=3)  # type: ignore[arg-type]
    return e


def test_export_carries_tool_calls_and_their_results_in_the_openai_format() -> None:
    messages = chat_row(episode(RecordsSeverity()))["messages"]
    roles = [m["role"] for m in messages]
    assert roles[:6] == ["system", "user", "assistant", "tool", "tool", "assistant"]
    calls = messages[2]["tool_calls"]
    assert [c["function"]["name"] for c in calls] == ["record", "submit"]
    assert calls[0]["function"]["arguments"] == '{"field": "severity", "value": "7"}'
    assert [m["tool_call_id"] for m in messages[3:5]] == [c["id"] for c in calls]
    assert messages[3]["content"] == SEVERITY_RECORDED
    assert messages[4]["content"].startswith("submitted: ")
    assert "tool_calls" not in messages[5] and messages[5]["content"]


def test_an_agent_without_tools_exports_plain_messages() -> None:
    messages = chat_row(episode(reference_agent(INTAKE)))["messages"]
    assert all(set(m) == {"role", "content"} for m in messages)


def test_the_viewer_shows_a_turns_tool_calls_and_nothing_for_a_turn_without() -> None:
    e = episode(RecordsSeverity())
    strings = Strings()
    rows = turns(e, strings)
    shown = [strings.items[r[4]] for r in rows if len(r) == 5]
    assert shown == ['record(field="severity", value="7") · submit()']
    assert all(len(r) == 4 for r in turns(episode(reference_agent(INTAKE)), Strings()))
