"""The patient card in plain words, and a card typed in by a person read back into a profile.

A person who answers "as yourself" confirms their card after the call: every field is shown
filled in from what the agent's extractor heard, and each box they correct is read with the same
extractor (asked for that one field), so gold is graded on canonical values exactly as for
simulators.
"""

from __future__ import annotations

from datetime import date

from sim2human.scenarios.base import Scenario
from sim2human.types import Profile, Record, Value

LABELS = {
    "complaint": "Why you are calling",
    "onset": "When it started",
    "severity": "How bad it is (out of 10)",
    "medications": "Medicines you take",
    "allergies": "Allergies",
    "history": "Long-term health conditions",
    "red_flag": "Chest pain or trouble breathing",
    "dob": "Date of birth",
}
"""Plain labels for the ``intake`` fields; other scenarios' fields get their own name."""
SUFFIX = {"onset": " ago", "severity": " out of 10"}


def label(field: str) -> str:
    return LABELS.get(field, field.replace("_", " ").capitalize())


def plain(field: str, value: Value | None) -> str:
    """One value as a person would say it: ``"3 days ago"``, ``"none"``, ``"2 May 1980"``."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, tuple):
        return ", ".join(value) if value else "none"
    if field == "dob" and isinstance(value, str):
        try:
            d = date.fromisoformat(value)
        except ValueError:
            return value
        return f"{d.day} {d:%B %Y}"
    return f"{value}{SUFFIX.get(field, '')}"


def card_lines(scenario: Scenario, profile: Profile) -> list[tuple[str, str]]:
    return [(label(f), plain(f, profile.get(f))) for f in scenario.fields]


def form_defaults(scenario: Scenario, record: Record) -> dict[str, str]:
    return {f: plain(f, record.get(f)) for f in scenario.fields}


def read_card(scenario: Scenario, typed: dict[str, str]) -> tuple[Profile, dict[str, str]]:
    """(profile, problems): each box read by the extractor expecting that field."""
    profile: Profile = {}
    problems: dict[str, str] = {}
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
