"""The ``llm`` simulator on a scenario off the slot kit: a camper of ``negotiation``, against a
scripted fake endpoint. What the model is told comes from the camper's side of the profile
(never the agent's priorities), its replies reach the deal through the scenario's ``hear_user``
like any camper's, its satisfaction is the persona rule over the scenario's progress, a user's
own template gets the camper's side as variables, a tiny study runs with llm campers, and a
scenario that cannot have llm users is refused when the study loads. The same against the
embedded model is in test_llm_live.py.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from sim2human.agents.scripted import reference_agent
from sim2human.checks.crossing import check_kinds
from sim2human.cli.app import main
from sim2human.errors import ConfigError, UsageError
from sim2human.experiments.study.condition import run_condition
from sim2human.experiments.study.config import parse_study
from sim2human.llm.client import EndpointConfig
from sim2human.llm.runtime import LLMRuntime, LLMSettings
from sim2human.rollout.evaluate import evaluate
from sim2human.scenarios.catalog import SCENARIOS, get_scenario
from sim2human.scenarios.negotiation import deal
from sim2human.scenarios.negotiation.deal import ISSUES
from sim2human.simulators.base import QuirkPool, SimulatorSpec
from sim2human.simulators.families import get_family
from sim2human.simulators.llm import LLMSimulator, llm_spec
from sim2human.simulators.llm_reading import CoreReading, reading, unsupported
from sim2human.simulators.persona import PersonaSimulator
from sim2human.store.rundir import read_episodes
from sim2human.testing import FakeOpenAI, Reply, completion
from sim2human.types import Episode, Termination

NEG = get_scenario("negotiation")
POOL = QuirkPool.of(NEG)
GREEDY = "I get 3 food, 3 water and 3 firewood, and you get 0 food, 0 water and 0 firewood."


def camper(n: int, body: dict[str, Any]) -> Reply:
    """A camper that accepts any offer worth more than its walk-away (as its reminder says),
    counters anything else with a greedy split of its own, and rates every call 6/10."""
    last = str(body["messages"][-1]["content"])
    if "0 (not at all) to 10" in last:
        return Reply(body=completion("6"))
    if ", more than the" in last:
        return Reply(body=completion("Deal, I accept."))
    if "(Relevant facts:" in last:
        return Reply(body=completion(f"Hmm. {GREEDY}"))
    return Reply(body=completion("Hi! Let's split the food, water and firewood."))


def member(judge: str = "persona", seed: int = 3, **kw: Any) -> SimulatorSpec:
    base = get_family("cooperative").sample(seed, POOL, temperature=0.0)
    return llm_spec(base, prompt=kw.pop("prompt", "plain"), judge=judge, endpoint="fake", **kw)


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(camper) as f:
        yield f


def play(fake: FakeOpenAI, specs: list[SimulatorSpec], per_member: int = 2) -> list[Episode]:
    endpoint = EndpointConfig(base_url=fake.base_url, model="fake", timeout_s=5.0)
    settings = LLMSettings(endpoints={"fake": endpoint}, cache=None)
    with LLMRuntime.open(settings, {"fake"}, check=False) as rt:
        return evaluate(
            reference_agent(NEG),
            specs,
            NEG,
            split="heldout",
            per_member=per_member,
            llm=rt,
            max_turns=12,
        )


def test_the_camper_is_told_its_own_side_and_how_to_speak_the_moves(fake: FakeOpenAI) -> None:
    (ep,) = play(fake, [member()], per_member=1)
    system = fake.seen[0].body["messages"][0]["content"]
    for issue in ISSUES:
        level = ep.profile[issue]
        assert f"- {issue}: {level} priority, each package is worth " in system
    assert str(ep.profile["reason"]) in system
    assert "- without a deal: you get 15 points; accept no deal worth less to you" in system
    example = re.search(r'"(I get .*?)\."', system)
    assert example is not None and deal.read_split(example.group(1)) is not None
    assert '"Deal, I accept."' in system and '"I\'m walking away."' in system
    # The agent's own priorities (agent.food, ...) are its brief, never the camper's prompt.
    assert "agent" not in system.lower().replace("another camper", "").replace("other camper", "")


def test_replies_reach_the_deal_through_the_scenario_and_the_proxy_is_its_progress(
    fake: FakeOpenAI,
) -> None:
    eps = play(fake, [member(), member(seed=4)], per_member=3)
    agreed = [e for e in eps if e.termination == Termination.AGREED]
    assert agreed, [e.termination for e in eps]
    for e in eps:
        assert e.error is None and e.scenario == "negotiation"
        assert e.gold == NEG.grade(e.profile, e.record, e.termination)  # graded by the core
        # The persona rule over the scenario's progress of the stored end state.
        rule = PersonaSimulator(member(seed=int(e.simulator_id.rsplit("-", 1)[1])), NEG)
        agent = [t.text for t in e.turns if t.speaker == "agent"]
        progress = NEG.progress_of(e.profile, e.record)
        dropped = any("hangup" in t.tags for t in e.turns)
        want = rule.score_texts(agent, set(), 0, dropped, None, progress)
        assert e.proxy == pytest.approx(want)
    for e in agreed:  # a deal the camper accepted is one its reminder said beat the walk-away
        assert e.gold.detail["camper_points"] > 15 and e.proxy >= 0.6
        last_user = [t for t in e.turns if t.speaker == "user"][-1]
        assert last_user.text == "Deal, I accept."
    # Each agent offer came with what it is worth to this camper.
    turns = [s.body["messages"][-1]["content"] for s in fake.seen]
    assert any("that offer gives you " in t and "points" in t for t in turns)


def test_an_llm_judge_rates_a_negotiation(fake: FakeOpenAI) -> None:
    eps = play(fake, [member("llm"), member("llm-turn", seed=5)], per_member=1)
    assert [e.proxy for e in eps] == pytest.approx([0.6, 0.6])
    assert all(e.diagnostics["judge_requests"] >= 1 for e in eps)


TEMPLATE = """You are {{ name }}, at a campsite ({{ scenario }}), talking to the {{ agent_name }}.
Food matters to you: {{ values.food }}. Water: {{ profile.water }}.
You walk away below {{ values.walk_away }} points. Why: {{ values.reason }}
{{ rules }}
{{ manner }}"""


def test_a_users_own_template_gets_the_campers_side(fake: FakeOpenAI, tmp_path: Path) -> None:
    (tmp_path / "camper.j2").write_text(TEMPLATE)
    spec = member(prompt=str(tmp_path / "camper.j2"))
    assert spec.llm is not None and spec.llm.prompt == "camper"
    (ep,) = play(fake, [spec], per_member=1)
    system = fake.seen[0].body["messages"][0]["content"]
    assert f"Food matters to you: {ep.profile['food']}." in system
    assert f"Water: {ep.profile['water']} priority, each package is worth" in system
    assert "You walk away below 15 points." in system and str(ep.profile["reason"]) in system
    assert "To accept the other camper's offer, say" in system and "{{" not in system
    assert "Other camper" in system and ep.error is None


def test_the_core_reading_follows_the_state_as_the_conversation_does() -> None:
    """The member's own copy of the scenario state hears the same lines: the agent accepting
    the camper's offer ends the call on the agent's turn, and the camper feels the deal."""
    profile = NEG.sample_profile(np.random.default_rng(0))
    rp = NEG.voice.role_play
    assert rp is not None
    seen = reading(NEG, rp, profile)
    assert isinstance(seen, CoreReading)
    rule = PersonaSimulator(member(), NEG)
    said = ["Hello! Shall we work out how to split the food, water and firewood?"]
    seen.hear_agent(said[0])
    assert seen.hear_user("", GREEDY, ()) == () and not seen.ended()
    before = seen.score(rule, said, hung_up=False)
    said.append("Okay, I accept your offer.")
    seen.hear_agent(said[1])
    assert seen.ended() and seen.score(rule, said, hung_up=False) > before
    assert NEG.record(seen.state)["agreed"] is True  # type: ignore[arg-type]


def tiny(base_url: str, scenario: str) -> dict[str, Any]:
    members = {"members": 1, "endpoint": "fake", "max_tokens": 24}
    return {
        "name": "tiny-llm-neg",
        "scenario": scenario,
        "seeds": [0],
        "train": {"episodes": 16, "batch_episodes": 8, "epochs": 1, "max_turns": 6},
        "ensemble": {
            "train": ["cooperative"],
            "heldout": ["terse-guarded"],
            "members_per_family": 1,
            "llm": {"heldout": {"families": ["noisy-line"], "prompts": ["story"], **members}},
        },
        "eval": {"episodes_per_member": 1, "llm_episodes_per_member": 2, "bootstrap": 100},
        "llm": {
            "endpoints": {"fake": {"base_url": base_url, "model": "fake", "timeout_s": 5}},
            "cache": None,
        },
        "conditions": [
            {
                "name": "frozen-llm",
                "sampler": "fixed",
                "episodes": 8,
                "simulator": {
                    "family": "standard",
                    "temperature": 0,
                    "llm": {"endpoint": "fake", "judge": "persona", "max_tokens": 24},
                },
            }
        ],
    }


def test_a_tiny_negotiation_study_trains_and_evaluates_on_llm_campers(
    fake: FakeOpenAI, tmp_path: Path
) -> None:
    cfg = parse_study(tiny(fake.base_url, "negotiation"))
    sub = tmp_path / "frozen-llm" / "seed-0"
    run_condition(cfg, cfg.conditions[0], 0, sub)
    eps = read_episodes(sub / "episodes.jsonl")
    trained = [e for e in eps if e.phase == "train"]
    held = [e for e in eps if e.split == "heldout" and e.family.startswith("llm:noisy")]
    assert len(trained) == 8 and all(e.family == "llm:standard" for e in trained)
    assert len(held) == 2 and all(e.scenario == "negotiation" and e.error is None for e in held)
    assert all(0.0 <= e.gold.score <= 1.0 for e in eps)


def test_a_scenario_without_llm_users_is_refused_when_the_study_loads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(ConfigError, match="scenario 'pizza' cannot have llm users") as err:
        parse_study(tiny("http://127.0.0.1:9/v1", "pizza"))
    assert "\n" not in str(err.value)
    import yaml

    path = tmp_path / "study.yaml"
    path.write_text(yaml.safe_dump(tiny("http://127.0.0.1:9/v1", "pizza")))
    assert main(["study", str(path), "--check"]) == 2
    out = capsys.readouterr().err
    assert "cannot have llm users: it has no voice for llm users" in out
    assert "Traceback" not in out


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_the_contract_checks_play_the_llm_kind_on_every_registered_scenario(name: str) -> None:
    scenario = get_scenario(name)
    report = check_kinds(scenario, QuirkPool.of(scenario))
    llm = [f for f in report.findings if f.check.startswith("llm")]
    assert report.ok, "\n".join(report.lines())
    if scenario.voice.role_play is None:  # pizza: no words for llm users, said so
        assert [f.skipped for f in llm] == [True] and "voice.role_play" in llm[0].detail
    else:  # every prompt style and a template, each through check_simulator
        assert len(llm) == 25 and not any(f.skipped for f in llm)


class NoBrief:
    """Moves, progress and words for llm users, but nothing saying what they are told."""

    name = "no-brief"
    voice = NEG.voice

    def user_moves(self, profile: Any, traits: Any, rng: Any) -> Any:
        return NEG.user_moves(profile, traits, rng)

    def progress_of(self, profile: Any, record: Any) -> Any:
        return NEG.progress_of(profile, record)


def test_a_core_scenario_must_say_what_its_llm_users_are_told() -> None:
    assert unsupported(NEG) is None
    why = unsupported(NoBrief())
    assert why is not None and "user_side and user_hint" in why
    with pytest.raises(UsageError, match="scenario 'no-brief' cannot have llm users"):
        LLMSimulator(member(), NoBrief(), client=None)  # type: ignore[arg-type]
