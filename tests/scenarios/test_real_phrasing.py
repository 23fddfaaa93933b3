"""The extractor reads how real patients say things (ACI-Bench train-split phrasings), while what
programmatic callers say is drawn from the spoken vocabularies only."""

from __future__ import annotations

import numpy as np
import pytest

from sim2human.scenarios.intake.scenario import HEARD, IntakeScenario
from sim2human.scenarios.vocab import Vocab, words
from sim2human.types import Value

S = IntakeScenario()


@pytest.mark.parametrize(
    ("text", "field", "value"),
    [
        ("uh, i'm on the toprol and insulin.", "medications", ("insulin glargine", "metoprolol")),
        ("just my inhaler", "medications", ("albuterol",)),
        ("i take metformin 500 milligrams twice a day", "medications", ("metformin",)),
        ("i don't take anything", "medications", ()),
        ("no allergies that i know of", "allergies", ()),
        ("my blood sugar has been high, i'm a diabetic", "history", ("type 2 diabetes",)),
        (
            "yeah, my blood pressure and cholesterol",
            "history",
            ("high cholesterol", "hypertension"),
        ),
        ("i take digoxin for afib", "history", ("atrial fibrillation",)),
        ("i haven't noticed any shortness of breath", "red_flag", False),
        ("i get a little short of breath when i walk", "red_flag", True),
        ("this happened yesterday morning", "onset", "1 day"),
        ("it started last week", "onset", "1 week"),
    ],
)
def test_reads_real_phrasings(text: str, field: str, value: Value) -> None:
    assert S.extract(text, S.empty_record(), field)[field] == value


def test_a_dosage_is_no_onset_and_no_rating() -> None:
    heard = S.extract(
        "lisinopril 20 mg once a day, tylenol every six hours", S.empty_record(), "medications"
    )
    assert heard["onset"] is None and heard["severity"] is None
    assert heard["medications"] == ("acetaminophen", "lisinopril")


def test_denying_a_red_flag_says_nothing_about_history() -> None:
    heard = S.extract("i don't have any chest pain", S.empty_record(), "red_flag")
    assert heard["red_flag"] is False and heard["history"] is None


def test_heard_names_are_never_said() -> None:
    """Programmatic callers keep their surface forms: a heard-only name shows up in what they say
    only inside a spoken name ("insulin" inside "insulin glargine")."""
    rng = np.random.default_rng(0)
    for f in HEARD:
        heard_only = set(S.reading[f].aliases) - set(S.vocab[f].aliases)
        assert heard_only
        for k in range(200):
            value = S.sample_profile(np.random.default_rng(k))[f]
            said = " " + " ".join(words(S.say(f, value, 1.0, rng))) + " "
            spoken = [a for a in S.vocab[f].aliases if f" {a} " in said]
            for a in heard_only:
                assert f" {a} " not in said or any(a in s for s in spoken), (a, said)


def test_heard_table_names_only_known_items() -> None:
    spoken = Vocab.parse("meds", "aspirin\n")
    with pytest.raises(ValueError, match="not in meds: warfarin"):
        spoken.hearing(Vocab.parse("heard", "warfarin | coumadin\n"))
    both = spoken.hearing(Vocab.parse("heard", "aspirin | baby aspirin\n"))
    assert both.find("just a baby aspirin") == ["aspirin"] and spoken.find("baby aspirin") == [
        "aspirin"
    ]
    assert both != spoken  # the caches keep them apart
