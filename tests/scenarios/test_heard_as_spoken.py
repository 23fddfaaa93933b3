"""File scenarios hear callers as they speak (issue 37, item 3): number words to the
thousands, number aliases, a number carrying another field's unit, alias templates said once,
and ``support``'s times, tickets, "leaving for" and corrected stations. Made-up lines only."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from sim2human.agents.base import AgentTurn
from sim2human.scenarios.catalog import get_scenario
from sim2human.scenarios.files.load import load_scenario_file
from sim2human.scenarios.files.scenario import FileScenario
from sim2human.scenarios.spoken_numbers import spoken, value_of, with_digits

SKELETON = Path(__file__).resolve().parents[2] / "src/sim2human/scenarios/skeleton"
EXTRA = """
  guests:
    kind: number
    range: [1, 5000]
    unit: guests
    label: guests
    ask:
      plain: ["How many guests are coming?"]
    cues: [how many guests]
    say: ["We expect {v} guests."]
  notice:
    kind: number
    range: [1, 365]
    unit: days
    label: notice
    ask:
      plain: ["How much notice do you need?"]
    cues: [how much notice]
    say: ["We need {v} days."]
  order:
    kind: category
    vocabulary: ["set menu|my usual order", "a la carte"]
    label: order
    ask:
      plain: ["What would you like to order?"]
    cues: [like to order]
    say: ["It's my {v}.", "We'll have the {v}."]
"""


def _party(out: Path, extra: str) -> FileScenario:
    text = (SKELETON / "scenario.yaml").read_text(encoding="utf-8").replace("__NAME__", "party")
    text = text.replace("\nacts:\n", extra + "\nacts:\n", 1)
    text = text.replace("  tastes: [", "  liked: [")  # the old name, read by old and new code
    (out / "scenario.yaml").write_text(text, encoding="utf-8")
    (out / "areas.txt").write_text((SKELETON / "areas.txt").read_text(encoding="utf-8"))
    return load_scenario_file(out / "scenario.yaml")


@pytest.fixture(scope="module")
def party(tmp_path_factory: pytest.TempPathFactory) -> FileScenario:
    return _party(tmp_path_factory.mktemp("party"), EXTRA)


@pytest.fixture(scope="module")
def party_aliases(tmp_path_factory: pytest.TempPathFactory) -> FileScenario:
    extra = EXTRA.replace("    unit: guests\n", "    unit: guests\n    aliases: {a dozen: 12}\n")
    return _party(tmp_path_factory.mktemp("aliases"), extra)


def _read(s: FileScenario, line: str, asked: str | None) -> dict[str, object]:
    return {k: v for k, v in s.extract(line, s.empty_record(), asked).items() if v is not None}


@pytest.mark.parametrize(
    ("line", "value"),
    [
        ("five hundred guests", 500),
        ("two thousand and twelve guests", 2012),
        ("about twenty-five guests", 25),
        ("a couple of guests", 2),
        ("one hundred and one guests", 101),
    ],
)
def test_number_words_to_the_thousands(party: FileScenario, line: str, value: int) -> None:
    assert _read(party, line, "guests")["guests"] == value


def test_spoken_numbers_round_trip() -> None:
    assert all(value_of(spoken(n)) == n for n in range(0, 100_000, 7))
    assert with_digits("one two three") == "one two three"  # no one number


def test_a_number_alias_is_heard(party_aliases: FileScenario) -> None:
    assert _read(party_aliases, "Oh, a dozen, I think.", "guests")["guests"] == 12


def test_a_number_with_another_fields_unit_goes_to_that_field(party: FileScenario) -> None:
    heard = _read(party, "We need 90 days.", "guests")
    assert heard.get("notice") == 90
    assert "guests" not in heard


def test_an_alias_template_says_its_word_once(party: FileScenario) -> None:
    rng = np.random.default_rng(0)
    said = {party.say("order", "set menu", 1.0, rng) for _ in range(60)}
    assert "It's my usual order." in said
    assert not any("my my" in s or "the the" in s for s in said)


def _support() -> FileScenario:
    s = get_scenario("support")
    assert isinstance(s, FileScenario)
    return s


def test_support_reads_a_time_with_a_leading_zero() -> None:
    assert _read(_support(), "At 09:15, please.", "time")["time"] == "9 15"


@pytest.mark.parametrize("line", ["We need 6 tickets.", "6 seats, please."])
def test_support_tickets_and_seats_are_a_party_size_whenever_said(line: str) -> None:
    assert _read(_support(), line, "day")["people"] == 6


def test_support_leaving_for_is_the_destination() -> None:
    assert _read(_support(), "I'm leaving for Ely.", "departure") == {"destination": "ely"}


def test_support_a_station_is_corrected_after_a_read_back() -> None:
    s = _support()
    state = s.initial_state({})
    for ask, answer in (
        ("What is your destination?", "Cambridge"),
        ("Where are you leaving from?", "Norwich"),
    ):
        state = s.hear_user(s.hear_agent(state, AgentTurn(ask, field=None)), answer)
    state = s.hear_agent(state, AgentTurn("Let me confirm the booking: ... Is that correct?"))
    assert state.record["destination"] == "cambridge"
    after = s.hear_user(state, "No, not Cambridge, Ely.")
    assert after.record["destination"] == "ely"
    assert after.record["departure"] == "norwich"
