"""The rule "a clarify asks the last field" has one home (``Act.about``), and every agent that
says an act says it through it: the policy agent, the scripted reference and the Gymnasium
adapter report the same field for the same act in the same state."""

from __future__ import annotations

from sim2human.agents.base import AgentTurn, Observation
from sim2human.agents.policy import PolicyAgent
from sim2human.agents.scripted import ScriptedAgent
from sim2human.integrations.gym import render_act
from sim2human.rollout.conversation import Conversation, Job
from sim2human.scenarios.core import Act
from sim2human.scenarios.intake.scenario import IntakeScenario
from sim2human.simulators.base import QuirkPool
from sim2human.simulators.families import get_family


def test_a_clarify_is_about_the_field_asked_last_and_an_ask_about_its_own() -> None:
    clarify = Act(id="c", kind="clarify", text="sorry?")
    ask = Act(id="a", kind="ask", text="your name?", field="name")
    close = Act(id="x", kind="close", text="bye")
    assert clarify.about("dob") == "dob"
    assert clarify.about(None) is None
    assert ask.about("dob") == "name"
    assert close.about("dob") is None


def _asked_then_confused(scenario: IntakeScenario) -> tuple[Conversation, Observation]:
    """A call in which the agent asked a field; the observation after the answer."""
    spec = get_family("cooperative").sample(0, QuirkPool.from_acts(scenario.acts))
    conv = Conversation.open(Job(spec=spec, seed=3), scenario, 12)
    ask = next(a for a in scenario.acts if a.kind == "ask" and a.field == scenario.fields[1])
    conv.step(AgentTurn(text=ask.text, act=ask.id, field=ask.field))
    return conv, conv.observe()


def test_the_policy_agent_and_the_gym_adapter_say_a_clarify_about_the_last_field() -> None:
    scenario = IntakeScenario()
    _, obs = _asked_then_confused(scenario)
    assert obs.last_field == scenario.fields[1]
    index = next(i for i, a in enumerate(scenario.acts) if a.kind == "clarify")
    policy = PolicyAgent(scenario, seed=0).turn(index, obs)
    assert policy.field == scenario.fields[1]
    assert render_act(scenario, index, obs) == policy


def test_the_scripted_agent_reports_the_field_of_what_it_says() -> None:
    scenario = IntakeScenario()
    _, obs = _asked_then_confused(scenario)
    (turn,) = ScriptedAgent(scenario).act([obs])
    act = next(a for a in scenario.acts if a.id == turn.act)
    assert turn.field == act.about(obs.last_field)
    assert turn.text
