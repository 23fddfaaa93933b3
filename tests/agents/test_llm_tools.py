"""An endpoint LLM agent acts through the scenario's tools, and gold grades what it submitted:
a refusing agent records nothing, whatever the caller said (issue 35, item 2)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from sim2human.agents.base import Observation
from sim2human.agents.llm import MAX_TOOL_ROUNDS, LLMAgent, Mode
from sim2human.cli.app import main
from sim2human.experiments.study.config import load_study
from sim2human.experiments.study.world import StudyWorld
from sim2human.llm.client import EndpointConfig
from sim2human.llm.runtime import LLMRuntime, LLMSettings
from sim2human.metrics.record_rule import SUBMITTED
from sim2human.rollout.conversation import job_profile
from sim2human.rollout.evaluate import eval_jobs, evaluate
from sim2human.scenarios.catalog import get_scenario
from sim2human.scenarios.tools import tool_text, value_text
from sim2human.simulators.base import QuirkPool, SimulatorSpec
from sim2human.simulators.families import get_family
from sim2human.store.rundir import read_json
from sim2human.testing import FakeOpenAI, Reply, completion
from sim2human.types import Episode, ToolCall
from tool_calls import SEVERITY_RECORDED, record

INTAKE = get_scenario("intake")
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "collapse.yaml"
REFUSAL = "I'm unable to assist with that."
Script = Callable[[int, dict[str, Any]], Reply]


@pytest.fixture
def endpoint() -> Iterator[Callable[[Script], LLMRuntime]]:
    """A runtime whose ``fake`` endpoint answers with ``script`` (no start-up check)."""
    opened: list[Any] = []

    def make(script: Script) -> LLMRuntime:
        fake = FakeOpenAI(script).__enter__()
        config = EndpointConfig(base_url=fake.base_url, model="fake", timeout_s=5.0)
        ctx = LLMRuntime.open(
            LLMSettings(endpoints={"fake": config}, cache=None), {"fake"}, check=False
        )
        opened.append((fake, ctx))
        return ctx.__enter__()

    yield make
    for fake, ctx in opened:
        ctx.__exit__(None, None, None)
        fake.__exit__()


def play(
    rt: LLMRuntime, members: list[SimulatorSpec], mode: Mode, turns: int = 20
) -> list[Episode]:
    agent = LLMAgent(INTAKE, rt.clients["fake"], record_by=mode)
    return evaluate(agent, members, INTAKE, split="heldout", per_member=1, llm=rt, max_turns=turns)


def one_per_family() -> list[SimulatorSpec]:
    """Two members of each of the demo's families, replayed ACI-Bench callers included."""
    world = StudyWorld.build(load_study(EXAMPLE, quick=True))
    members = [*world.ensemble.train, *world.ensemble.heldout]
    families = sorted({s.family for s in members})
    assert "aci-heldout" in families  # the replayed callers (../shared/data) are in the test
    return [s for f in families for s in [m for m in members if m.family == f][:2]]


@pytest.mark.parametrize("mode", ["tools", "summary"])
def test_an_endpoint_agent_that_refuses_scores_no_field_on_any_family(
    endpoint: Callable[[Script], LLMRuntime], mode: Mode
) -> None:
    members = one_per_family()
    rt = endpoint(lambda n, body: Reply(body=completion(REFUSAL)))
    episodes = play(rt, members, mode)
    assert {e.family for e in episodes} == {m.family for m in members}
    assert all(e.record_source == "submitted" and e.error is None for e in episodes)
    assert all(e.gold.field_accuracy == 0 for e in episodes)
    # The old rule read the callers' words as the agent's record: the same refusals scored.
    heard = play(rt, members, "heard")
    assert sum(e.gold.field_accuracy for e in heard) > 0


def test_gold_follows_what_a_tool_calling_agent_submitted_not_what_the_caller_said(
    endpoint: Callable[[Script], LLMRuntime],
) -> None:
    spec = get_family("cooperative").sample(1, QuirkPool.from_acts(INTAKE.acts), capacity=1.0)
    profile = job_profile(eval_jobs([spec], "heldout", 1, "")[0], INTAKE)
    wrong = profile["severity"] % 10 + 1
    rng = np.random.default_rng(0)
    calls = [
        record(f, str(wrong if f == "severity" else value_text(INTAKE, f, v, INTAKE.say, rng)))
        for f, v in profile.items()
    ]

    def agent(n: int, body: dict[str, Any]) -> Reply:
        last = body["messages"][-1]
        if last["role"] == "tool":  # the tools' results: now speak
            return Reply(body=completion("Thank you, that's everything. Goodbye!"))
        if len(body["messages"]) == 2:  # the caller's opening
            return Reply(body=completion("How bad is it, on a scale of 1 to 10?"))
        return Reply(body=completion(None, tool_calls=[*calls, ToolCall(name="submit")]))

    rt = endpoint(agent)
    (episode,) = play(rt, [spec], "tools")
    said = INTAKE.extract(episode.turns[2].text, INTAKE.empty_record(), "severity")["severity"]
    assert said == profile["severity"] != wrong  # the caller said it right
    assert episode.record_source == "submitted" and episode.record["severity"] == wrong
    assert {f: v for f, v in episode.record.items() if f != "severity"} == {
        f: v for f, v in profile.items() if f != "severity"
    }
    assert episode.gold.field_accuracy == pytest.approx(1 - 1 / len(INTAKE.fields))
    agent_turn = episode.turns[3]
    assert agent_turn.text.startswith("Thank you") and agent_turn.tool_calls[-1].name == "submit"


def test_the_request_offers_the_tools_and_reads_their_results_back(
    endpoint: Callable[[Script], LLMRuntime],
) -> None:
    seen: list[dict[str, Any]] = []

    def agent(n: int, body: dict[str, Any]) -> Reply:
        seen.append(body)
        if body["messages"][-1]["role"] == "tool":
            return Reply(body=completion("Got it, thank you. Goodbye!"))
        calls = [record("severity", "7"), record("severity", "banana"), ToolCall(name="submit")]
        return Reply(body=completion("", tool_calls=calls))

    rt = endpoint(agent)
    spec = get_family("cooperative").sample(2, QuirkPool.from_acts(INTAKE.acts))
    (episode,) = play(rt, [spec], "tools")
    assert [t["function"]["name"] for t in seen[0]["tools"]] == ["record", "submit"]
    assert "call submit" in seen[0]["messages"][0]["content"]  # the system prompt says so
    asked, *results = seen[1]["messages"][-4:]
    assert asked["role"] == "assistant" and asked["content"] is None
    assert [c["id"] for c in asked["tool_calls"]] == ["call_0_0", "call_0_1", "call_0_2"]
    assert json.loads(asked["tool_calls"][0]["function"]["arguments"]) == {
        "field": "severity",
        "value": "7",
    }
    assert [r["tool_call_id"] for r in results] == ["call_0_0", "call_0_1", "call_0_2"]
    assert results[0]["content"] == SEVERITY_RECORDED
    assert results[1]["content"].startswith("not recorded")
    assert (
        results[2]["content"].startswith("submitted: {")
        and '"severity": 7' in results[2]["content"]
    )
    assert episode.record["severity"] == 7 and len(seen) == 2  # one turn: two requests


def test_history_renders_each_turns_tool_calls_and_results_before_its_words(
    endpoint: Callable[[Script], LLMRuntime],
) -> None:
    rt = endpoint(lambda n, body: Reply(body=completion("ok")))
    agent = LLMAgent(INTAKE, rt.clients["fake"])
    state = INTAKE.initial_state(INTAKE.sample_profile(np.random.default_rng(0)))
    obs = Observation(
        user_text="Seven.",
        turn=2,
        max_turns=20,
        history=(),
        view=INTAKE.observe(state),
        transcript=(
            ("user", "Hi."),
            ("agent", "How bad?"),
            ("user", "Seven."),
            ("agent", "Thanks."),
        ),
        tool_calls=((), (record("severity", "seven"),)),
    )
    roles = [(m["role"], m.get("content")) for m in agent.messages(obs)]
    assert roles[1:] == [
        ("user", "Hi."),
        ("assistant", "How bad?"),
        ("user", "Seven."),
        ("assistant", None),
        ("tool", SEVERITY_RECORDED),
        ("assistant", "Thanks."),
    ]


def test_hermes_blocks_in_the_text_are_calls_and_are_not_spoken(
    endpoint: Callable[[Script], LLMRuntime],
) -> None:
    block = tool_text(record("severity", "4")) + tool_text(ToolCall(name="submit"))
    rt = endpoint(lambda n, body: Reply(body=completion(f"{block} Thank you, goodbye!")))
    spec = get_family("cooperative").sample(2, QuirkPool.from_acts(INTAKE.acts))
    (episode,) = play(rt, [spec], "tools")
    agent_turn = episode.turns[1]
    assert agent_turn.text == "Thank you, goodbye!" and len(agent_turn.tool_calls) == 2
    assert episode.record["severity"] == 4


def test_the_summary_fallback_offers_no_tools_and_reads_the_summary(
    endpoint: Callable[[Script], LLMRuntime],
) -> None:
    seen: list[dict[str, Any]] = []
    summary = json.dumps({"severity": 3, "red_flag": False})

    def agent(n: int, body: dict[str, Any]) -> Reply:
        seen.append(body)
        return Reply(body=completion(f"Thank you, goodbye! {summary}"))

    rt = endpoint(agent)
    spec = get_family("cooperative").sample(2, QuirkPool.from_acts(INTAKE.acts))
    (episode,) = play(rt, [spec], "summary")
    assert "tools" not in seen[0] and '"severity"' in seen[0]["messages"][0]["content"]
    assert episode.turns[1].text == "Thank you, goodbye!"
    assert episode.record["severity"] == 3 and episode.record["red_flag"] is False
    assert episode.record_source == "submitted"


def small_study(base_url: str) -> dict[str, Any]:
    """Intake with one persona member per split and no LLM users: every request is the agent's."""
    endpoint = {"base_url": base_url, "model": "fake", "timeout_s": 5, "max_retries": 0}
    return {
        "name": "tools-eval",
        "seeds": [0],
        "train": {"episodes": 24, "batch_episodes": 8, "epochs": 1, "max_turns": 6},
        "ensemble": {
            "train": ["cooperative"],
            "heldout": ["terse-guarded"],
            "members_per_family": 1,
        },
        "eval": {"episodes_per_member": 2, "bootstrap": 100},
        "llm": {"endpoints": {"fake": endpoint}, "cache": None},
        "conditions": [{"name": "frozen", "sampler": "fixed", "simulator": {"family": "standard"}}],
    }


@pytest.mark.parametrize(("flags", "offered"), [([], True), (["--no-tools"], False)])
def test_eval_agent_scores_a_refusing_endpoint_on_what_it_submitted_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str], offered: bool
) -> None:
    seen: list[dict[str, Any]] = []

    def refuse(n: int, body: dict[str, Any]) -> Reply:
        seen.append(body)
        return Reply(body=completion(REFUSAL))

    with FakeOpenAI(refuse) as fake:
        study = tmp_path / "study.yaml"
        study.write_text(yaml.safe_dump(small_study(fake.base_url)))
        out = tmp_path / "eval"
        argv = ["eval-agent", str(study), "--base-url", fake.base_url, "--model", "fake"]
        assert main([*argv, "--split", "all", "--out", str(out), *flags]) == 0
    printed = capsys.readouterr().out
    summary = read_json(out / "summary.json")
    assert summary["record_rule"] == SUBMITTED and "submitted through tools" in printed
    assert all(r["fields"]["mean"] == 0 for r in summary["rows"])
    asked = [body for body in seen if body["messages"][0]["role"] == "system"]  # not the probe
    assert asked and all(("tools" in body) == offered for body in asked)
    assert main(["report", str(out)]) == 0
    assert SUBMITTED in capsys.readouterr().out  # the terminal summary
    for page in ("report.md", "report.html"):
        assert SUBMITTED in (out / page).read_text(encoding="utf-8"), page


def test_a_model_that_only_calls_tools_is_asked_at_most_max_tool_rounds_times_a_turn(
    endpoint: Callable[[Script], LLMRuntime],
) -> None:
    rt = endpoint(
        lambda n, body: Reply(body=completion(None, tool_calls=[record("severity", "5")]))
    )
    spec = get_family("cooperative").sample(2, QuirkPool.from_acts(INTAKE.acts))
    (episode,) = play(rt, [spec], "tools", turns=2)
    agent_turns = [t for t in episode.turns if t.speaker == "agent"]
    assert [t.text for t in agent_turns] == ["...", "..."]  # the caller hears a turn of no words
    assert [len(t.tool_calls) for t in agent_turns] == [MAX_TOOL_ROUNDS, MAX_TOOL_ROUNDS]
    assert episode.record["severity"] is None  # recorded, never submitted


def test_an_agent_graded_on_what_was_heard_sends_what_it_sent_before_tools(
    endpoint: Callable[[Script], LLMRuntime],
) -> None:
    seen: list[dict[str, Any]] = []

    def agent(n: int, body: dict[str, Any]) -> Reply:
        seen.append(body)
        return Reply(body=completion("Thank you, goodbye!"))

    rt = endpoint(agent)
    spec = get_family("cooperative").sample(2, QuirkPool.from_acts(INTAKE.acts))
    (episode,) = play(rt, [spec], "heard")
    assert "tools" not in seen[0] and episode.record_source == "heard"
    assert seen[0]["messages"][0]["content"] == INTAKE.voice.agent.system_prompt
