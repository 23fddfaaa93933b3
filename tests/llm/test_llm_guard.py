"""The role guard, the judge's rating parser and the persona prompts: pure text functions."""

from __future__ import annotations

import pytest

from sim2human.scenarios.intake.scenario import IntakeScenario
from sim2human.scenarios.intake.voice import ROLE_PLAY, fact
from sim2human.simulators.base import Traits
from sim2human.simulators.llm_guard import judge_prompt, out_of_role, parse_rating, tidy
from sim2human.simulators.llm_prompts import PROMPT_STYLES, manner, system_prompt, turn_message

GUARD = ROLE_PLAY.guard


def prompt(style: str, traits: Traits | None = None) -> str:
    fields = IntakeScenario.fields
    return system_prompt(ROLE_PLAY, style, "Mary", PROFILE, fields, traits or Traits())


PROFILE = {
    "complaint": "sore throat",
    "onset": "3 days",
    "severity": 6,
    "medications": ("ibuprofen", "metformin"),
    "allergies": (),
    "history": ("diabetes",),
    "red_flag": False,
    "dob": "1962-03-14",
}


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("Patient: I have a sore throat.", "I have a sore throat."),
        ("Mary: It started 3 days ago.\nNurse: Thank you.", "It started 3 days ago."),
        ('"About 6 out of 10."', "About 6 out of 10."),
        ("One. Two. Three. Four.", "One. Two. Three."),
        ("I take ibuprofen. And I also take a", "I take ibuprofen."),
        ("Nurse: What is your date of birth?", "Nurse: What is your date of birth?"),
    ],
)
def test_tidy_repairs_formatting_only(raw: str, clean: str) -> None:
    assert tidy(raw, GUARD) == clean


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "empty"),
        ("...", "empty"),
        ("Nurse: Can I have your date of birth?", "spoke_as_agent"),
        ("I'm just a nurse, I can't tell you that.", "spoke_as_agent"),
        ("How can I help you today?", "spoke_as_agent"),
        ("(the nurse explains the situation)", "narrated"),
        ("*sighs* fine.", "narrated"),
        ("The patient says she has a cough.", "narrated"),
        ("The nurse is asking about the patient's age.", "narrated"),
        ("I am not the nurse. I'm here to assist you.", "spoke_as_agent"),
        ("As an AI language model I cannot", "leaked_prompt"),
        ("Role-play a patient named Mary.", "leaked_prompt"),
        ("I have a sore throat.", None),
        ("My date of birth is 14 March 1962.", None),
        ("Sorry, what do you mean?", None),
    ],
)
def test_out_of_role_names_the_drift(text: str, reason: str | None) -> None:
    assert out_of_role(text, GUARD) == reason


def test_copying_instructions_is_a_leak_but_repeating_facts_is_not() -> None:
    system = prompt("card")
    assert out_of_role("Mary, a caller on a clinic's intake line.", GUARD, system) == (
        "leaked_prompt"
    )
    assert out_of_role("My main problem is a sore throat, 6 out of 10.", GUARD, system) is None


@pytest.mark.parametrize(
    ("text", "rating"),
    [
        ("8", 0.8),
        ("7/10", 0.7),
        ("I would say 6 out of 10.", 0.6),
        ("10. I'm very happy", 1.0),
        ("7.5", 0.75),
        ("ten", 1.0),
        ("Rating: three", 0.3),
        ("In 2023 it was a 9", 0.9),
        ("42", None),
        ("very satisfied", None),
        ("", None),
    ],
)
def test_parse_rating_is_robust(text: str, rating: float | None) -> None:
    assert parse_rating(text) == rating


def test_prompts_carry_every_fact_in_words_the_extractor_reads() -> None:
    scenario = IntakeScenario()
    assert set(ROLE_PLAY.prompts) == set(PROMPT_STYLES)
    for name in PROMPT_STYLES:
        text = prompt(name)
        assert "14 March 1962" in text and "ibuprofen and metformin" in text, name
    # What the prompt says, the extractor reads back as the profile's value.
    for field in scenario.fields:
        said = f"My {field}: {fact(field, PROFILE[field])}."
        if field in ("onset", "severity", "dob", "medications"):
            got = scenario.extract(said, scenario.empty_record(), field)[field]
            assert got == PROFILE[field], field


def test_prompt_templates_differ_and_manner_follows_traits() -> None:
    built = {n: prompt(n) for n in PROMPT_STYLES}
    assert len(set(built.values())) == len(PROMPT_STYLES)
    terse = manner(ROLE_PLAY, Traits(verbosity=0.1, cooperativeness=0.5, emotion="irritated"))
    chatty = manner(ROLE_PLAY, Traits(verbosity=0.7, emotion="anxious", jargon_confusion=0.6))
    assert "one short sentence" in terse and "guarded" in terse and "short-tempered" in terse
    assert "like to chat" in chatty and "worried" in chatty and "do not understand" in chatty


def test_turn_message_reminds_only_the_asked_facts() -> None:
    msg = turn_message(ROLE_PLAY, "Can I have your date of birth?", ("dob",), PROFILE)
    assert "14 March 1962" in msg and "metformin" not in msg
    plain = turn_message(ROLE_PLAY, "You're in good hands.", (), PROFILE)
    assert plain == "Nurse: You're in good hands."


def test_judge_prompt_shows_the_last_turns_and_asks_for_a_number() -> None:
    turns = [("agent", f"question {i}") for i in range(30)]
    text = judge_prompt(ROLE_PLAY, "Mary", turns)
    assert "question 29" in text and "question 0\n" not in text
    assert "from 0" in text and "10" in text
