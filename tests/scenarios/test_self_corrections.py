"""A caller correcting an earlier answer of their own accord is heard (issue 37, item 3), while
a story naming another value still changes no answer (``keep_answers``). Made-up lines only."""

from __future__ import annotations

from sim2human.agents.base import AgentTurn
from sim2human.scenarios.catalog import get_scenario
from sim2human.scenarios.files.scenario import FileScenario
from sim2human.scenarios.slots import SlotState, keep_answers


def _support() -> FileScenario:
    s = get_scenario("support")
    assert isinstance(s, FileScenario)
    return s


def _answered_day(s: FileScenario, day_line: str) -> SlotState:
    """A call where the caller said the day when asked, and the agent then asked the party."""
    state = s.initial_state({})
    state = s.hear_agent(state, AgentTurn("Which day should I book?"))
    state = s.hear_user(state, day_line)
    return s.hear_agent(state, AgentTurn("For how many people?"))


def test_a_correction_wins_over_the_value_it_corrects() -> None:
    s = _support()
    state = _answered_day(s, "Make it for Tuesday, please.")
    assert state.record["day"] == "tuesday"
    after = s.hear_user(state, "Sorry, not Tuesday: Wednesday.")
    assert after.record["day"] == "wednesday"
    assert after.signals.corrected


def test_a_story_naming_another_day_changes_no_answer() -> None:
    s = _support()
    state = _answered_day(s, "Make it for Tuesday, please.")
    after = s.hear_user(state, "We came up on a Wednesday last year, it was lovely.")
    assert after.record["day"] == "tuesday"


def test_the_rule_is_the_same_for_every_reader() -> None:
    from sim2human.scenarios.slots import corrects

    before = {"age": 40, "people": None}
    heard = {"age": 42, "people": None}
    kept, _ = keep_answers(before, heard, frozenset({"age"}), "people")
    assert kept["age"] == 40
    fixed, _ = keep_answers(
        before, heard, frozenset({"age"}), "people", correcting=corrects("Actually it's 42.")
    )
    assert fixed["age"] == 42


def test_what_counts_as_a_correction() -> None:
    from sim2human.scenarios.slots import corrects

    for line in (
        "Sorry, not Tuesday: Wednesday.",
        "Actually it's 42.",
        "I mean 8 people.",
        "No, not Ely, Cambridge.",
        "Not Tuesday, Wednesday.",
        "Scratch that, make it Friday.",
    ):
        assert corrects(line), line
    for line in (
        "Actually, I also take ibuprofen.",
        "Actually yes, I get short of breath.",
        "I'm not sure, maybe.",
        "No, not really.",
        "It's not bad, but it hurts.",
        "Sorry, it's a bit noisy here.",
    ):
        assert not corrects(line), line


def test_a_value_said_after_not_is_the_one_taken_back() -> None:
    s = _support()
    empty = s.empty_record()
    assert s.extract("Sorry, not Tuesday: Wednesday", empty, None)["day"] == "wednesday"
    assert s.extract("Not in the north, the south.", empty, "area")["area"] == "south"
