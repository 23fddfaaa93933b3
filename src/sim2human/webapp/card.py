"""The card in plain words (the scenario's ``Voice.card``), and a card typed in by a person read
back into a profile.

A person who answers "as yourself" confirms their card after the call: every field is shown
filled in from what the agent's extractor heard, and each box they correct is read with the same
extractor (asked for that one field), so gold is graded on canonical values exactly as for
simulators.
"""

from __future__ import annotations

from sim2human.scenarios.base import Scenario
from sim2human.scenarios.slots import applicable_fields, conditional
from sim2human.scenarios.voice import CardWords, plain_value
from sim2human.types import Profile, Record, Value


def words(scenario: Scenario) -> CardWords:
    """The scenario's card words, or plain ones from its field names."""
    return scenario.voice.card or CardWords(labels={}, show=lambda _f, v: plain_value(v))


def label(scenario: Scenario, field: str) -> str:
    return words(scenario).labels.get(field, field.replace("_", " ").capitalize())


def plain(scenario: Scenario, field: str, value: Value | None) -> str:
    """One value as a person would say it (empty while unknown)."""
    return "" if value is None else words(scenario).show(field, value)


def card_lines(scenario: Scenario, profile: Profile) -> list[tuple[str, str]]:
    """The card's lines: the fields that apply to ``profile`` (all, for most scenarios)."""
    fields = applicable_fields(scenario, profile)
    return [(label(scenario, f), plain(scenario, f, profile.get(f))) for f in fields]


def form_defaults(scenario: Scenario, record: Record) -> dict[str, str]:
    return {f: plain(scenario, f, record.get(f)) for f in scenario.fields}


def read_card(scenario: Scenario, typed: dict[str, str]) -> tuple[Profile, dict[str, str]]:
    """(profile, problems): each box read by the extractor expecting that field; where some
    fields apply to some callers only, the boxes of fields that do not apply given the others
    are neither needed nor kept."""
    profile: Profile = {}
    problems: dict[str, str] = {}
    if conditional(scenario) is not None:
        read, _ = _read_boxes(scenario, typed, scenario.fields, required=False)
        wanted = applicable_fields(scenario, read)
        return _read_boxes(scenario, typed, wanted, required=True)
    for f in scenario.fields:
        text = typed.get(f, "").strip()
        if not text:
            problems[f] = "please fill this in"
            continue
        value = scenario.extract(text, scenario.empty_record(), f).get(f)
        if value is None:
            problems[f] = "could not read this; try simpler words"
        else:
            profile[f] = value
    return profile, problems


def _read_boxes(
    scenario: Scenario, typed: dict[str, str], fields: tuple[str, ...], *, required: bool
) -> tuple[Profile, dict[str, str]]:
    profile: Profile = {}
    problems: dict[str, str] = {}
    for f in fields:
        text = typed.get(f, "").strip()
        value = scenario.extract(text, scenario.empty_record(), f).get(f) if text else None
        if value is not None:
            profile[f] = value
        elif required:
            problems[f] = (
                "please fill this in" if not text else "could not read this; try simpler words"
            )
    return profile, problems
