"""The extractor reads callers who correct themselves, add to a list, or answer a read-back."""

from __future__ import annotations

import numpy as np

from sim2human.scenarios.intake.scenario import IntakeScenario

S = IntakeScenario()


def test_a_self_correction_wins() -> None:
    r = S.extract("It started three days, no wait, four days ago.", S.empty_record(), "onset")
    assert r["onset"] == "4 days"


def test_a_disfluent_repeat_does_not_shrink_a_list() -> None:
    text = "I take aspirin and metformin, I mean, metformin."
    assert S.extract(text, S.empty_record(), "medications")["medications"] == (
        "aspirin",
        "metformin",
    )


def test_a_list_answered_over_two_turns_is_read_whole() -> None:
    first = S.extract("I take aspirin.", S.empty_record(), "medications")
    both = S.extract("Oh, and metformin too.", first, "medications")
    assert both["medications"] == ("aspirin", "metformin")
    restated = S.extract("No, I take ibuprofen.", first, "medications")
    assert restated["medications"] == ("ibuprofen",)


def test_every_read_back_reads_as_the_record_it_states() -> None:
    act = next(a for a in S.acts if a.id == "confirm.readback")
    for k in range(50):
        profile = S.sample_profile(np.random.default_rng(k))
        heard = S.extract(S.render_act(act, None, dict(profile)), S.empty_record(), None)
        assert heard == profile


def test_a_read_back_asks_for_nothing_and_a_short_no_is_not_silence() -> None:
    assert S.interpret("Let me read that back: pain: 3 out of 10. Is that correct?").asks == ()
    record = S.empty_record()
    assert not S.signals("no", record, record).silent
    assert S.signals("...", record, record).silent
