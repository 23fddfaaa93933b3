"""The intake extractor on clean, noisy and re-ordered text; grading on hand-built records."""

from __future__ import annotations

import numpy as np
import pytest

from sim2human.scenarios import readers
from sim2human.scenarios.intake.scenario import IntakeScenario
from sim2human.types import Termination


@pytest.mark.parametrize(
    ("text", "expecting", "field", "value"),
    [
        ("I've got a headache.", "complaint", "complaint", "headache"),
        ("pain in my lower back, mostly", "complaint", "complaint", "lower back pain"),
        ("I've got a tummy ache", "complaint", "complaint", "abdominal pain"),
        ("It started three weeks ago.", "onset", "onset", "3 weeks"),
        ("for about 2 days now", "onset", "onset", "2 days"),
        ("I'd say 7 out of 10.", "severity", "severity", 7),
        ("about a seven", "severity", "severity", 7),
        (
            "I take metfromin and lisinopril.",
            "medications",
            "medications",
            ("lisinopril", "metformin"),
        ),
        ("I'm on tylenol", "medications", "medications", ("acetaminophen",)),
        ("No, I'm not taking any medicines.", "medications", "medications", ()),
        ("I'm allergic to penicilin and latex", "allergies", "allergies", ("latex", "penicillin")),
        ("None that I know of, no allergies.", "allergies", "allergies", ()),
        ("I have rheumatoid arthritis", "history", "history", ("rheumatoid arthritis",)),
        ("No chest pain or breathing trouble.", "red_flag", "red_flag", False),
        ("Actually yes, I get short of breath.", None, "red_flag", True),
        ("yes", "red_flag", "red_flag", True),
        ("I was born on March 4th, 1960.", "dob", "dob", "1960-03-04"),
        ("4 March 1960", "dob", "dob", "1960-03-04"),
        ("3/4/1960", "dob", "dob", "1960-03-04"),
    ],
)
def test_extracts_field(
    scenario: IntakeScenario, text: str, expecting: str | None, field: str, value: object
) -> None:
    record = scenario.extract(text, scenario.empty_record(), expecting)
    assert record[field] == value


def test_volunteered_fields_are_routed_by_their_cue_words(scenario: IntakeScenario) -> None:
    text = "I take metformin, and I'm allergic to peanuts. I have asthma."
    record = scenario.extract(text, scenario.empty_record(), "medications")
    assert record["medications"] == ("metformin",)
    assert record["allergies"] == ("peanuts",)
    assert record["history"] == ("asthma",)


def test_evasion_is_not_read_as_no(scenario: IntakeScenario) -> None:
    record = scenario.extract("Hmm, I'm not sure.", scenario.empty_record(), "red_flag")
    assert record["red_flag"] is None
    assert readers.yes_no("why do you need to know that?") is None


def test_similar_names_do_not_both_match(scenario: IntakeScenario) -> None:
    record = scenario.extract("I take citalopram", scenario.empty_record(), "medications")
    assert record["medications"] == ("citalopram",)  # not escitalopram too
    record = scenario.extract("I have every day pain", scenario.empty_record(), None)
    assert record["complaint"] is None  # "every" is not a typo of "fever"


def test_extract_never_mutates_the_record(scenario: IntakeScenario) -> None:
    before = scenario.empty_record()
    scenario.extract("I've got a cough", before, "complaint")
    assert all(v is None for v in before.values())


def test_a_canned_dump_of_every_field_is_read_back_exactly(scenario: IntakeScenario) -> None:
    """The uniform way a triggered simulator tells everything must be extractable (300 profiles)."""
    for seed in range(300):
        rng = np.random.default_rng(seed)
        profile = scenario.sample_profile(rng)
        text = " ".join(scenario.say(f, profile[f], 0.0, rng) for f in scenario.fields)
        assert scenario.extract(text, scenario.empty_record(), None) == profile, text


def test_answers_in_every_surface_form_are_read_back(scenario: IntakeScenario) -> None:
    """Asked one field at a time, a full-capacity speaker is understood at least 97% of the time."""
    hits = total = 0
    for seed in range(200):
        rng = np.random.default_rng(seed)
        profile = scenario.sample_profile(rng)
        record = scenario.empty_record()
        for f in scenario.fields:
            record = scenario.extract(scenario.say(f, profile[f], 1.0, rng), record, f)
        hits += sum(record[f] == profile[f] for f in scenario.fields)
        total += len(scenario.fields)
    assert hits / total >= 0.97


def test_grade_on_hand_built_records(scenario: IntakeScenario) -> None:
    profile = scenario.sample_profile(np.random.default_rng(1))
    perfect = dict(profile)
    out = scenario.grade(profile, perfect, Termination.COMPLETED)
    assert out.success and out.completed and not out.dropped and all(out.fields.values())

    one_wrong = {**profile, "severity": (int(profile["severity"]) % 10) + 1}
    out = scenario.grade(profile, one_wrong, Termination.COMPLETED)
    assert not out.success and not out.fields["severity"] and out.field_accuracy == 7 / 8

    out = scenario.grade(profile, perfect, Termination.HUNG_UP)
    assert not out.success and out.dropped and not out.completed

    out = scenario.grade(profile, perfect, Termination.MAX_TURNS)
    assert not out.success and not out.dropped and not out.completed


def test_vocabularies_are_big_enough(scenario: IntakeScenario) -> None:
    sizes = {k: len(v.canonical) for k, v in scenario.vocab.items()}
    assert sizes["complaint"] >= 40 and sizes["medications"] >= 60
    assert sizes["allergies"] >= 20 and sizes["history"] >= 30


def test_act_inventory_covers_every_field_with_plain_and_jargon(scenario: IntakeScenario) -> None:
    for f in scenario.fields:
        asks = [a for a in scenario.acts if a.kind == "ask" and a.field == f]
        assert len(asks) >= 3 and {"plain", "jargon"} <= {a.style for a in asks}
        assert all(f in scenario.interpret(a.text).asks for a in asks)
    kinds = {a.kind for a in scenario.acts}
    assert {"greet", "clarify", "confirm", "empathise", "prompt", "close", "style"} <= kinds
