"""The scenario core: party-neutral endings, gold as a score, state owned by the scenario."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace

import numpy as np
import pytest

from sim2human.agents.base import AgentTurn, Observation
from sim2human.checks import check_scenario
from sim2human.rollout.conversation import Conversation, Job
from sim2human.scenarios.core import Act, AgentMove
from sim2human.scenarios.intake.scenario import IntakeScenario
from sim2human.scenarios.slots import SlotState
from sim2human.simulators.base import UserTurn
from sim2human.testing import PIZZA_VOICE, TinyScenario, scripted_spec
from sim2human.types import Episode, Outcome, Profile, Record, Termination

# ------------------------------------------------------------------ a toy core-only scenario


@dataclass(frozen=True)
class Split:
    """Who takes how many of 3 packages: the offer on the table and who has accepted it."""

    offer: int | None = None  # packages the agent would take
    accepted: frozenset[str] = frozenset()
    brief: str = "You value every package at 5 points."


class SplitScenario:
    """The smallest negotiation: each side's words move one shared state, either side accepts."""

    name = "split"
    voice = replace(PIZZA_VOICE, user=replace(PIZZA_VOICE.user, opening_field=None))
    acts = (
        Act("propose", "prompt", "I take 2, you take 1?"),
        Act("accept", "confirm", "I accept your offer."),
        Act("close", "close", "Goodbye."),
    )

    def sample_profile(self, rng: np.random.Generator) -> Profile:
        return {"worth": int(rng.integers(3, 6))}

    def initial_state(self, profile: Profile) -> Split:
        return Split()

    def _hear(self, state: Split, text: str, side: str) -> Split:
        t = text.lower()
        if "i take 2" in t:
            return Split(offer=2, accepted=frozenset({side}), brief=state.brief)
        if "you take 2" in t:
            return Split(offer=1, accepted=frozenset({side}), brief=state.brief)
        if ("accept" in t or "deal" in t) and state.offer is not None:
            return replace(state, accepted=state.accepted | {side})
        return state

    def hear_user(self, state: Split, text: str) -> Split:
        return self._hear(state, text, "user")

    def hear_agent(self, state: Split, turn: AgentMove) -> Split:
        return self._hear(state, turn.text, "agent")

    def observe(self, state: Split) -> Split:
        return state

    def ending(self, state: Split, user_left: bool) -> Termination | None:
        if state.accepted == {"agent", "user"}:
            return Termination.AGREED
        return Termination.WALKED_AWAY if user_left else None

    def record(self, state: Split) -> Record:
        return {"agent_takes": state.offer, "agreed": len(state.accepted) == 2}

    def grade(self, profile: Profile, record: Record, termination: Termination) -> Outcome:
        agreed = termination == Termination.AGREED
        takes = int(record["agent_takes"] or 0) if agreed else 0
        return Outcome(
            success=agreed,
            fields={},
            completed=agreed,
            dropped=termination == Termination.HUNG_UP,
            score=takes / 3,
            detail={"agent_packages": float(takes)},
        )


class Camper:
    """Opens with a counter-offer; says "deal" (and leaves) to any offer of 2 for the agent."""

    def __init__(self) -> None:
        self.spec = scripted_spec(0, "camper")
        self.happy = 0.0

    def start(self, profile: Profile, rng: np.random.Generator) -> UserTurn:
        return UserTurn(text="You take 2, I take 1... no wait. Your offer?")

    def reply(self, agent_text: str) -> UserTurn:
        if "i take 2" in agent_text.lower():
            self.happy = 0.8
            return UserTurn(text="Deal.", done=True)
        return UserTurn(text="Hmm.")

    def satisfaction(self) -> float:
        return self.happy

    def judge(self, episode: Episode) -> float:
        return 0.0


def _open(max_turns: int = 6) -> Conversation:
    scenario = SplitScenario()
    return Conversation.open(Job(scripted_spec(0), 0), scenario, max_turns, simulator=Camper())  # type: ignore[arg-type]


def test_a_user_accepting_a_deal_ends_it_agreed_not_hung_up() -> None:
    conv = _open()
    conv.step(AgentTurn(text="I take 2, you take 1?"))
    episode = conv.episode()
    assert episode.termination == Termination.AGREED
    assert episode.gold.success and episode.gold.score == pytest.approx(2 / 3)
    assert episode.record == {"agent_takes": 2, "agreed": True}
    assert conv.observe().brief == "You value every package at 5 points."


def test_the_agent_can_end_the_call_itself_without_a_reply() -> None:
    conv = _open()
    conv.step(AgentTurn(text="Hmm, let me think."))
    assert not conv.done
    conv.step(AgentTurn(text="I accept your offer."))  # the camper's opening offer
    assert conv.termination == Termination.AGREED
    assert [t.speaker for t in conv.turns] == ["user", "agent", "user", "agent"]  # no reply
    assert len(conv.satisfaction) == 2  # still one entry per agent turn
    assert conv.episode().gold.score == pytest.approx(1 / 3)


def test_the_turn_limit_stays_the_cores() -> None:
    conv = _open(max_turns=2)
    for _ in range(2):
        conv.step(AgentTurn(text="Hmm."))
    assert conv.termination == Termination.MAX_TURNS


def test_a_core_only_scenario_passes_the_core_checks() -> None:
    report = check_scenario(SplitScenario())  # type: ignore[arg-type]
    assert report.ok, "\n".join(report.lines())
    assert not any("extract" in f.check for f in report.findings)  # no slot checks on it


def test_a_scenario_without_the_core_is_told_what_is_missing() -> None:
    class OldStyle:  # the pre-core protocol: no state of its own
        name = "old"
        voice = PIZZA_VOICE
        acts = TinyScenario.acts

        def sample_profile(self, rng: np.random.Generator) -> Profile:
            return {}

        def grade(self, profile: Profile, record: Record, t: Termination) -> Outcome:
            return Outcome(success=False, fields={}, completed=False, dropped=False)

    report = check_scenario(OldStyle())  # type: ignore[arg-type]
    first = report.violations()[0]
    assert first.check == "has every member of the scenario core"
    assert "initial_state" in first.detail and "SlotFilling" in first.detail


def test_a_slot_view_is_not_read_as_another_scenarios() -> None:
    obs = Observation(user_text="Hi", turn=0, max_turns=4, history=(), view=Split())
    with pytest.raises(TypeError, match="not a slot-filling scenario's view"):
        _ = obs.record


# ----------------------------------------------------------------------------- the slot kit


def test_the_kit_state_is_replaced_never_changed() -> None:
    s = TinyScenario()
    start = s.initial_state({"size": "large", "topping": "cheese", "mode": "pickup"})
    asked = s.hear_agent(start, AgentTurn(text="What size would you like?"))
    heard = s.hear_user(asked, "Large, please.")
    assert start == SlotState(record=dict.fromkeys(s.fields))
    assert (
        asked.last_field == "size"
        and asked.asked == (("size", 1),)
        and asked.record == start.record
    )
    assert heard.record["size"] == "large" and heard.record_version == 1 and not heard.read_back
    read = s.hear_agent(heard, AgentTurn(text="So that's size: large. Let me read that back."))
    assert read.read_back and read.last_field is None
    assert s.observe(read).brief == ""  # no brief of its own for a slot-filling agent


def test_an_answer_given_when_asked_outlives_a_story_about_another_question() -> None:
    """A real caller asked for their date of birth tells a story naming a drug: the medicines
    they gave when asked stay recorded. Asked again, or corrected after a read-back, it moves."""
    s = IntakeScenario()
    state = s.hear_agent(s.initial_state({}), AgentTurn(text="Are you taking any medicines?"))
    state = s.hear_user(state, "I take lisinopril and metformin.")
    assert state.record["medications"] == ("lisinopril", "metformin")
    assert state.answered == frozenset({"medications"})
    state = s.hear_agent(state, AgentTurn(text="Can I have your date of birth?"))
    story = s.hear_user(state, "I take vitamin d every morning, born march 3rd, 1950.")
    assert story.record["medications"] == ("lisinopril", "metformin")  # kept
    assert story.record["dob"] == "1950-03-03"  # the question asked is answered
    assert story.answered == frozenset({"medications", "dob"})
    again = s.hear_agent(story, AgentTurn(text="Are you taking any medicines?"))
    assert s.hear_user(again, "Only vitamin d.").record["medications"] == ("vitamin d",)
    read = s.hear_agent(story, AgentTurn(text="Let me read that back: medications lisinopril."))
    assert read.last_field is None
    fixed = s.hear_user(read, "No, I take vitamin d.")
    assert fixed.record["medications"] == ("vitamin d",)


def test_a_turn_that_asks_nothing_reopens_no_answer() -> None:
    """After a greeting or an "I understand", the caller's story changes no answer: the last
    question was answered already, and only a fresh ask or a read-back reopens it."""
    s = IntakeScenario()
    state = s.hear_agent(s.initial_state({}), AgentTurn(text="On a scale of 0 to 10, how bad?"))
    state = s.hear_user(state, "I'd say 2 out of 10.")
    assert state.record["severity"] == 2 and state.answered == {"severity"}
    soothed = s.hear_agent(state, AgentTurn(text="I understand, that must be worrying."))
    assert soothed.last_field == "severity" and not soothed.asked_now
    story = s.hear_user(soothed, "I climb three flights of stairs to my apartment.")
    assert story.record["severity"] == 2  # kept: nothing was asked
    again = s.hear_agent(story, AgentTurn(text="On a scale of 0 to 10, how bad is it?"))
    assert again.asked_now and s.hear_user(again, "More like 3.").record["severity"] == 3
    read = s.hear_agent(story, AgentTurn(text="Let me read that back: pain 2 out of 10."))
    assert read.asked_now and s.hear_user(read, "No, it's 4 out of 10.").record["severity"] == 4


def test_a_field_never_asked_is_filled_from_any_turn() -> None:
    s = IntakeScenario()
    state = s.hear_agent(s.initial_state({}), AgentTurn(text="Can I have your date of birth?"))
    heard = s.hear_user(state, "March 3rd, 1950. I take metformin.")
    assert heard.record["medications"] == ("metformin",) and heard.answered == {"dob"}
    later = s.hear_user(s.hear_agent(heard, AgentTurn(text="Any allergies?")), "I take aspirin.")
    assert later.record["medications"] == ("aspirin",)  # volunteered, not answered: replaced


def test_the_kit_ends_completed_after_the_agents_close_else_hung_up() -> None:
    s = IntakeScenario()
    state = s.initial_state({})
    assert s.ending(state, user_left=False) is None
    assert s.ending(state, user_left=True) == Termination.HUNG_UP
    closed = s.hear_agent(state, AgentTurn(text="Thank you, that's everything. Goodbye."))
    assert s.ending(closed, user_left=False) is None  # the caller still says bye
    assert s.ending(closed, user_left=True) == Termination.COMPLETED


def test_the_kit_scores_its_gold_with_a_breakdown() -> None:
    s = TinyScenario()
    profile: Profile = {"size": "large", "topping": "cheese", "mode": "pickup"}
    right = s.grade(profile, dict(profile), Termination.COMPLETED)
    half = s.grade(profile, {**profile, "mode": "delivery"}, Termination.HUNG_UP)
    assert (right.success, right.score, right.detail) == (
        True,
        1.0,
        {"fields_right": 1.0, "closed": 1.0},
    )
    assert (half.success, half.score, half.dropped) == (False, 0.0, True)
    assert half.detail == {"fields_right": pytest.approx(2 / 3), "closed": 0.0}


# ------------------------------------------------------------------ stored runs still read


def test_an_outcome_stored_before_the_score_scores_its_success() -> None:
    old = {"success": True, "fields": {"a": True}, "completed": True, "dropped": False}
    assert Outcome.model_validate_json(json.dumps(old)).score == 1.0
    assert Outcome.model_validate({**old, "success": False}).score == 0.0
    assert Outcome.model_validate(old).detail == {}
    with pytest.raises(ValueError):
        Outcome.model_validate({**old, "score": 1.5})


def test_the_stored_termination_values_are_kept() -> None:
    stored = {t.value for t in Termination}
    assert {"completed", "hung_up", "max_turns", "error"} <= stored
    assert {"agreed", "walked_away"} <= stored
