"""The desk an agent that writes its own words acts on: gold grades what it submitted, never
what the caller happened to say."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from sim2human.agents.base import AgentTurn, Observation
from sim2human.agents.scripted import reference_agent
from sim2human.experiments.study.config import load_study
from sim2human.experiments.study.world import StudyWorld
from sim2human.rollout.evaluate import eval_jobs
from sim2human.rollout.play import play
from sim2human.scenarios.catalog import get_scenario
from sim2human.scenarios.tools import (
    open_desk,
    split_tool_text,
    summary_calls,
    tool_specs,
    tool_text,
    use_tools,
    value_text,
)
from sim2human.types import ToolCall
from tool_calls import record

INTAKE = get_scenario("intake")
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "collapse.yaml"


def test_a_value_is_read_as_the_callers_answer_and_only_a_submit_counts() -> None:
    desk = use_tools(INTAKE, open_desk(INTAKE), [record("severity", "7"), record("red_flag", "no")])
    assert desk.submitted is None
    assert desk.graded(INTAKE.empty_record())["severity"] is None
    desk = use_tools(INTAKE, desk, [ToolCall(name="submit"), record("severity", "2")])
    graded = desk.graded(INTAKE.empty_record())
    assert graded["severity"] == 7 and graded["red_flag"] is False


def test_a_call_the_scenario_cannot_read_changes_nothing() -> None:
    bad = [record("no_such_field", "3"), record("severity", "banana"), ToolCall(name="fly")]
    desk = use_tools(INTAKE, open_desk(INTAKE), [*bad, ToolCall(name="submit")])
    assert desk.submitted == INTAKE.empty_record()


def test_tool_blocks_leave_the_spoken_text_and_round_trip() -> None:
    call = record("onset", "3 weeks")
    spoken, calls = split_tool_text(f"Thanks. {tool_text(call)} How bad is it?")
    assert spoken == "Thanks. How bad is it?" and calls == (call,)
    assert split_tool_text("<tool_call>{not json</tool_call> hi") == ("hi", ())


def test_a_summary_is_read_as_record_calls_and_a_submit() -> None:
    calls = summary_calls(INTAKE, 'Done. {"severity": 4, "medications": [], "x": 1}')
    desk = use_tools(INTAKE, open_desk(INTAKE), calls)
    assert desk.submitted is not None
    assert desk.submitted["severity"] == 4 and desk.submitted["medications"] == ()
    assert summary_calls(INTAKE, "no summary here") == ()


@pytest.mark.parametrize("name", ["intake", "support"])
def test_every_profile_value_has_words_that_read_back(name: str) -> None:
    scenario = get_scenario(name)
    rng = np.random.default_rng(0)
    for _ in range(40):
        for field, value in scenario.sample_profile(rng).items():
            assert value_text(scenario, field, value, scenario.say, rng) is not None, field


def test_the_default_tools_are_openai_functions_over_the_fields() -> None:
    specs = tool_specs(INTAKE)
    assert [s["function"]["name"] for s in specs] == ["record", "submit"]
    enum = specs[0]["function"]["parameters"]["properties"]["field"]["enum"]
    assert enum == list(INTAKE.fields)


class Refuser:
    """An agent that answers every caller with a refusal and calls no tool."""

    name = "refuser"

    def act(self, observations: Sequence[Observation]) -> list[AgentTurn]:
        return [
            AgentTurn(text="I'm unable to assist with that.", tool_calls=()) for _ in observations
        ]


class ToolReference:
    """The scripted reference, recording through tools what its record heard, and submitting."""

    name = "tool-reference"

    def __init__(self) -> None:
        self.inner = reference_agent(INTAKE)

    def act(self, observations: Sequence[Observation]) -> list[AgentTurn]:
        out = []
        for obs, turn in zip(observations, self.inner.act(observations), strict=True):
            calls = [
                record(f, str(value_text(INTAKE, f, v)))
                for f, v in obs.record.items()
                if v is not None
            ]
            out.append(
                AgentTurn(
                    text=turn.text,
                    act=turn.act,
                    field=turn.field,
                    tool_calls=(*calls, ToolCall(name="submit")),
                )
            )
        return out


def world() -> StudyWorld:
    """The demo's members: every family, replayed ACI-Bench callers included where found."""
    return StudyWorld.build(load_study(EXAMPLE, quick=True))


def test_an_agent_that_refuses_scores_no_field_on_any_member() -> None:
    members = world().ensemble
    jobs = eval_jobs([*members.train, *members.heldout], "heldout", 2, "refuse")
    episodes = play(Refuser(), jobs, INTAKE, max_turns=6)
    assert episodes and all(e.record_source == "submitted" for e in episodes)
    assert all(e.gold.field_accuracy == 0 for e in episodes)


def test_an_agent_that_records_what_it_heard_scores_as_the_heard_rule() -> None:
    jobs = eval_jobs(world().ensemble.train, "train", 2, "ref")
    heard = play(reference_agent(INTAKE), jobs, INTAKE, max_turns=20)
    tools = play(ToolReference(), jobs, INTAKE, max_turns=20)
    assert [e.gold for e in tools] == [e.gold for e in heard]
    assert heard[0].record_source == "heard" and "record_source" not in heard[0].model_dump_json()
