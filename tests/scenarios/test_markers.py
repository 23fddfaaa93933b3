"""Fields sharing a vocabulary told apart by ``markers`` (``scenarios.files.markers``), and a clock
time never read as a number answer."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import numpy as np
import pytest

from sim2human.scenarios.catalog import get_scenario
from sim2human.scenarios.files.load import load_scenario_file
from sim2human.scenarios.files.scenario import FileScenario

SKELETON = resources.files("sim2human.scenarios").joinpath("skeleton")
TEXT = SKELETON.joinpath("scenario.yaml").read_text(encoding="utf-8").replace("__NAME__", "taxi")
# two more fields on the skeleton's area vocabulary: a taxi's pick-up and drop-off
TWO = (
    "  pickup:\n"
    "    kind: category\n"
    "    vocabulary: areas.txt\n"
    "    markers: {before: [from, pick me up in], after: [is where i am]}\n"
    '    ask: {plain: ["Where should I pick you up?"]}\n'
    "    cues: [pick you up]\n"
    '    say: ["From the {v}.", "The {v} is where I am."]\n'
    "  dropoff:\n"
    "    kind: category\n"
    "    vocabulary: areas.txt\n"
    "    markers: {before: [to, going to]}\n"
    '    ask: {plain: ["Where are you going?"]}\n'
    "    cues: [where are you going]\n"
    '    say: ["To the {v}, please."]\n'
    "  party_size:\n"
)


@pytest.fixture
def taxi(tmp_path: Path) -> FileScenario:
    path = tmp_path / "taxi.yaml"
    path.write_text(TEXT.replace("  party_size:\n", TWO, 1), encoding="utf-8")
    (tmp_path / "areas.txt").write_text(
        SKELETON.joinpath("areas.txt").read_text(encoding="utf-8"), encoding="utf-8"
    )
    return load_scenario_file(path)


def heard(scenario: FileScenario, text: str, asked: str | None = None) -> dict[str, object]:
    record = scenario.extract(text, scenario.empty_record(), asked)
    return {f: v for f, v in record.items() if v is not None}


def test_markers_tell_two_fields_on_one_vocabulary_apart(taxi: FileScenario) -> None:
    said = "I need a cab from the north to the south."
    for asked in (None, "pickup", "dropoff", "area"):
        found = heard(taxi, said, asked)
        assert found["pickup"] == "north" and found["dropoff"] == "south", asked
    assert heard(taxi, "The east is where I am.")["pickup"] == "east"  # an after marker
    # a field without markers leaves a value marked for a field that holds it, and otherwise
    # reads as before: the first such value named, wherever it is said
    assert "area" not in heard(taxi, said)
    assert heard(taxi, "From the north, a table in the south.")["area"] == "south"
    assert heard(taxi, "A table in the east or the west.")["area"] == "east"
    # nor the value answering a marked field just asked; a value said twice counts twice
    assert "area" not in heard(taxi, "The west.", "pickup")
    assert heard(taxi, "The west.", "area")["area"] == "west"
    assert heard(taxi, "From the west, in the west.")["area"] == "west"


def test_an_unmarked_value_answers_only_the_field_just_asked(taxi: FileScenario) -> None:
    assert "pickup" not in heard(taxi, "The west.") and "dropoff" not in heard(taxi, "The west.")
    assert heard(taxi, "The west.", "pickup")["pickup"] == "west"
    assert "dropoff" not in heard(taxi, "The west.", "pickup")
    # marked for the other field: not this one's answer, even when this one was asked
    assert "pickup" not in heard(taxi, "To the west.", "pickup")


def test_the_callers_own_wordings_are_heard_unasked(taxi: FileScenario) -> None:
    rng = np.random.default_rng(0)
    for field in ("pickup", "dropoff"):
        for value in ("north", "centre"):
            line = taxi.say(field, value, 1.0, rng)
            assert heard(taxi, line).get(field) == value, line
            assert set(heard(taxi, line)) <= {field, "area"}, line


def test_support_reads_a_real_train_callers_stations() -> None:
    support = get_scenario("support")
    assert isinstance(support, FileScenario)
    said = "I need a train from Ely to Cambridge on Tuesday."
    found = heard(support, said, "destination")
    assert found["departure"] == "ely" and found["destination"] == "cambridge"
    assert found["domain"] == "train" and found["day"] == "tuesday"
    assert heard(support, "Cambridge, please.", "departure") == {"departure": "cambridge"}
    assert heard(support, "Cambridge, please.") == {}
    rng = np.random.default_rng(1)
    for field in ("destination", "departure"):
        for form in support.spec.fields[field].say:
            line = form.format(v="Stansted Airport")
            assert heard(support, line).get(field) == "stansted airport", line
        assert heard(support, support.say(field, "ely", 1.0, rng))[field] == "ely"


@pytest.mark.parametrize(
    "said", ["At 17:01, please.", "17:01", "Around 5.30.", "At 7 pm.", "At 8 o'clock.", "7pm"]
)
def test_a_clock_time_is_not_a_number_answer(said: str) -> None:
    support = get_scenario("support")
    assert heard(support, said, "people").get("people") is None
    assert heard(support, said, "stay").get("stay") is None


def test_a_number_beside_a_time_is_still_read() -> None:
    support = get_scenario("support")
    assert heard(support, "4 people at 17:01.", "people")["people"] == 4
    assert heard(support, "Five, at 17:30.", "people")["people"] == 5
    assert heard(support, "Just 2.", "people")["people"] == 2
