"""The card in plain words (the scenario's ``Voice.card``), and a card typed in by a person read
back into a profile.

A person who answers "as yourself" confirms their card after the call: every field is shown
filled in from what the agent's extractor heard, and each box they correct is read with the same
extractor (asked for that one field), so gold is graded on canonical values exactly as for
simulators.
"""

from __future__ import annotations

from typing import Any

from sim2human.scenarios.capabilities import Lacks, slot_kit
from sim2human.scenarios.core import BriefsLLMUsers, Scenario
from sim2human.scenarios.slots import SlotScenario, applicable_fields, conditional
from sim2human.scenarios.voice import CardWords, plain_value
from sim2human.types import Profile, Record, Value


def words(scenario: Scenario[Any]) -> CardWords:
    """The scenario's card words, or plain ones from its field names."""
    return scenario.voice.card or CardWords(labels={}, show=lambda _f, v: plain_value(v))


def label(scenario: Scenario[Any], field: str) -> str:
    return words(scenario).labels.get(field, field.replace("_", " ").capitalize())


def plain(scenario: Scenario[Any], field: str, value: Value | None) -> str:
    """One value as a person would say it (empty while unknown)."""
    return "" if value is None else words(scenario).show(field, value)


def card_lines(scenario: Scenario[Any], profile: Profile) -> list[tuple[str, str]]:
    """The card's lines: the fields that apply to ``profile`` (all, for most slot scenarios).
    Off the slot kit, what a person may see of the hidden profile is the scenario's to say (a
    bidder's value, never the seller's cost): the keys its card words label, else what an
    ``llm`` user is told (``BriefsLLMUsers``), else it has no card (one line)."""
    if slot_kit(scenario) is not None:
        shown = applicable_fields(scenario, profile)
    elif (card := scenario.voice.card) is not None and card.labels:
        shown = tuple(card.labels)
    elif isinstance(scenario, BriefsLLMUsers):
        return [(lab, said) for _, lab, said in scenario.user_side(profile).facts]
    else:
        raise Lacks(
            scenario,
            "card for a person",
            "give its voice a CardWords whose labels name the profile keys a person may see "
            "(sim2human.scenarios.voice.CardWords)",
        )
    return [(label(scenario, f), plain(scenario, f, profile.get(f))) for f in shown]


def _kit(scenario: Scenario[Any]) -> SlotScenario:
    """A person answers as themselves only where the card's boxes are fields to read back."""
    kit = slot_kit(scenario)
    if kit is None:
        raise Lacks(scenario, "fields to confirm", "a person answers it from a card only")
    return kit


def form_defaults(scenario: Scenario[Any], record: Record) -> dict[str, str]:
    return {f: plain(scenario, f, record.get(f)) for f in _kit(scenario).fields}


def read_card(scenario: Scenario[Any], typed: dict[str, str]) -> tuple[Profile, dict[str, str]]:
    """(profile, problems): each box read by the extractor expecting that field; where some
    fields apply to some callers only, the boxes of fields that do not apply given the others
    are neither needed nor kept."""
    scenario = _kit(scenario)
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
    scenario: SlotScenario, typed: dict[str, str], fields: tuple[str, ...], *, required: bool
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
