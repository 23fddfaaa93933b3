"""The conversation core's rules: who ends a call and how, the turn limit, the proxy's trace,
and a state that is replaced, never changed."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np
import pytest

from sim2human.agents.base import AgentTurn
from sim2human.rollout.conversation import Conversation, Job
from sim2human.scenarios.intake.scenario import IntakeScenario
from sim2human.scenarios.slots import SlotState
from sim2human.simulators.base import SimulatorSpec, Traits, UserTurn
from sim2human.types import Episode, Profile, Termination

SPEC = SimulatorSpec(id="scripted-user", family="test", traits=Traits(), seed=0)


@dataclass
class ScriptedUser:
    """Says its lines in order; leaves (``done``) after the last one."""

    lines: list[str]
    spec: SimulatorSpec = SPEC
    heard: list[str] = field(default_factory=list)
    _replies: Iterator[str] = field(init=False)

    def __post_init__(self) -> None:
        self._replies = iter(self.lines)

    def start(self, profile: Profile, rng: np.random.Generator) -> UserTurn:
        return UserTurn(text="hello, I need an appointment")

    def reply(self, agent_text: str) -> UserTurn:
        self.heard.append(agent_text)
        text = next(self._replies, None)
        return UserTurn(text="bye", done=True) if text is None else UserTurn(text=text)

    def satisfaction(self) -> float:
        return len(self.heard) / 10

    def judge(self, episode: Episode) -> float:
        return 0.0


class AgentEndsScenario(IntakeScenario):
    """Intake where the agent's ``close`` act itself ends the call (as accepting a deal does)."""

    def ending(self, state: SlotState, user_left: bool) -> Termination | None:
        if state.closed and not user_left:
            return Termination.AGREED
        return super().ending(state, user_left)


def call(
    lines: list[str], max_turns: int = 5, scenario: IntakeScenario | None = None
) -> Conversation:
    scenario = scenario or IntakeScenario()
    return Conversation.open(Job(spec=SPEC, seed=1), scenario, max_turns, ScriptedUser(lines))


def say(conv: Conversation, act: str) -> None:
    text = next(a.text for a in conv.scenario.acts if a.id == act)
    conv.step(AgentTurn(text=text, act=act))


def close_act(scenario: IntakeScenario) -> str:
    return next(a.id for a in scenario.acts if a.kind == "close")


def test_a_user_leaving_before_the_close_is_a_hang_up() -> None:
    conv = call([])
    conv.step(AgentTurn(text="how can I help?"))
    assert conv.termination is Termination.HUNG_UP
    assert conv.episode().termination is Termination.HUNG_UP


def test_a_user_leaving_after_the_close_completes_the_call() -> None:
    conv = call([])
    say(conv, close_act(conv.scenario))
    assert conv.termination is Termination.COMPLETED


def test_the_turn_limit_counts_agent_turns() -> None:
    conv = call(["mm"] * 10, max_turns=3)
    for k in range(3):
        assert not conv.done, k
        conv.step(AgentTurn(text="tell me more"))
    assert conv.termination is Termination.MAX_TURNS
    assert sum(t.speaker == "agent" for t in conv.turns) == 3


def test_an_agent_turn_the_scenario_ends_on_gets_no_reply() -> None:
    scenario = AgentEndsScenario()
    conv = call(["never said"], scenario=scenario)
    say(conv, close_act(scenario))
    assert conv.termination is Termination.AGREED
    assert conv.turns[-1].speaker == "agent"  # the user did not answer
    assert conv.simulator.heard == []  # type: ignore[union-attr]
    assert len(conv.satisfaction) == 1  # one proxy value per agent turn, still


def test_the_proxy_trace_has_one_value_per_agent_turn() -> None:
    conv = call(["one", "two"], max_turns=10)
    while not conv.done:
        conv.step(AgentTurn(text="and?"))
    agent_turns = sum(t.speaker == "agent" for t in conv.turns)
    assert len(conv.satisfaction) == agent_turns == 3
    assert conv.satisfaction == [0.1, 0.2, 0.3]


def test_an_ended_call_takes_no_turn_and_a_running_one_has_no_episode() -> None:
    conv = call(["still here"])
    with pytest.raises(RuntimeError, match="still running"):
        conv.episode()
    conv.step(AgentTurn(text="hi"))
    conv.step(AgentTurn(text="hi"))
    assert conv.done
    with pytest.raises(RuntimeError, match="already ended"):
        conv.step(AgentTurn(text="hello?"))


def test_the_state_is_replaced_never_changed() -> None:
    conv = call(["my name is Ada Lovelace"] * 3)
    before = conv.state
    snapshot = (before.record, before.asked)
    ask = next(a.id for a in conv.scenario.acts if a.kind == "ask")
    say(conv, ask)
    assert conv.state is not before
    assert (before.record, before.asked) == snapshot


def test_a_failed_call_is_an_error_episode_with_its_reason() -> None:
    conv = call(["x"])
    ep = conv.fail("endpoint timed out")
    assert ep.termination is Termination.ERROR and ep.error == "endpoint timed out"
    assert ep.id == "/eval/scripted-user/1"
