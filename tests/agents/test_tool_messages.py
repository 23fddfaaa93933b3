"""What the desk says back to a tool call: a recorded value names the boxes still empty, as a
paper form shows them, counting only the fields that apply given what is recorded."""

from __future__ import annotations

import numpy as np

from sim2human.agents.tool_messages import run_calls
from sim2human.scenarios.catalog import get_scenario
from sim2human.scenarios.tools import open_desk, value_text
from tool_calls import record


def test_each_recorded_value_names_the_fields_still_empty_until_none_is() -> None:
    intake = get_scenario("intake")
    profile = intake.sample_profile(np.random.default_rng(0))
    calls = [record(f, value_text(intake, f, v, intake.say) or "") for f, v in profile.items()]
    desk, said = run_calls(intake, open_desk(intake), calls)
    assert list(profile) == list(intake.fields)
    assert desk.working == profile
    assert said[0].endswith(
        "; still empty: onset, severity, medications, allergies, history, red_flag, dob"
    )
    assert said[-2].endswith("; still empty: dob")
    assert said[-1].endswith("; every field recorded")


def test_a_field_that_does_not_apply_is_never_called_empty() -> None:
    support = get_scenario("support")
    _, said = run_calls(support, open_desk(support), [record("domain", "restaurant")])
    (text,) = said
    empty = text.split("still empty: ")[1].split(", ")
    assert "food" in empty and "people" in empty
    assert "destination" not in empty and "stay" not in empty  # a train's and a hotel's


def test_a_call_that_records_nothing_says_why_and_lists_nothing() -> None:
    intake = get_scenario("intake")
    _, said = run_calls(intake, open_desk(intake), [record("severity", "banana")])
    assert said[0].startswith("not recorded") and "still empty" not in said[0]
