"""A replayed patient's profile card, in the scenario's terms, derived from one ACI-Bench encounter.

Every field records where its value came from: ``from-metadata`` (the corpus's ``cc`` and
``2nd_complaints``, or ``patient_age`` for the date of birth, whose day is drawn), ``from-note``
(the reference clinical note, read with the scenario's own vocabularies and parsers) or
``from-transcript`` (note and metadata are silent: the first of the patient's own answers to a
question about the field that the scenario's extractor reads a value from) or ``sampled``
(nothing says it: drawn as the scenario draws any profile, seeded by the encounter id so a
patient is always the same person).
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Mapping, Sequence
from datetime import date
from typing import Final

import numpy as np

from sim2human.corpora.aci_bench import Transcript
from sim2human.scenarios import readers
from sim2human.scenarios.intake.scenario import LIST_SIZES, IntakeScenario
from sim2human.simulators.replay_corpus import Card, Source
from sim2human.types import Profile, Value

REFERENCE_DATE: Final = date(2023, 1, 1)
"""Ages in the metadata are taken at this date (ACI-Bench was published in 2023)."""
SECTIONS: Final[dict[str, tuple[str, ...]]] = {
    "complaint": ("CHIEF COMPLAINT",),
    "medications": ("MEDICATIONS", "CURRENT MEDICATIONS"),
    "allergies": ("ALLERGIES",),
    "history": ("MEDICAL HISTORY", "PAST HISTORY", "PAST MEDICAL HISTORY"),
    "story": ("HISTORY OF PRESENT ILLNESS", "SUBJECTIVE"),
    "review": ("REVIEW OF SYSTEMS", "REVIEW OF SYMPTOMS"),
}
_HEADER = re.compile(r"^[A-Z][A-Z /&]+$")
_NONE = re.compile(r"\b(no known|nkda|denies|none|no allergies|not allergic)\b")
_RED_FLAG = re.compile(r"chest pain|chest tight|short(ness)? of breath|dyspnea")
_NEGATED = re.compile(r"\b(denies|denied|no|not|without|negative for)\b")
_RATING = re.compile(r"\b(\d{1,2})\s*(?:/|out of)\s*10\b")
_AGE = re.compile(r"\b\w+[- ](year|month|week|day)s?[- ]old\b", re.IGNORECASE)
_TAKES = re.compile(r"\b(continue|continues|taking|takes|is on|currently on|compliant with)\b")
_SENTENCE = re.compile(r"(?<=[.;!?])\s+|\n+")


def note_sections(note: str) -> dict[str, str]:
    """Upper-case header lines -> the text under them (the note's own section names)."""
    out: dict[str, list[str]] = {}
    current = ""
    for raw in note.splitlines():
        line = raw.strip()
        if _HEADER.match(line) and len(line) < 40:
            current = line
            continue
        out.setdefault(current, []).append(line)
    return {k: "\n".join(v) for k, v in out.items()}


def derive_card(
    t: Transcript, scenario: IntakeScenario, answers: Mapping[str, Sequence[str]] | None = None
) -> Card:
    """The card for ``t`` (see the module docstring for the rules); ``answers``: the patient's
    turns that answered a question about each field, in visit order."""
    rng = np.random.default_rng(zlib.crc32(t.encounter_id.encode()))
    drawn = scenario.sample_profile(rng)
    card = _CardValues(scenario, note_sections(t.note))
    card.from_note(t)
    if t.meta.age is not None:
        born = (
            date(REFERENCE_DATE.year - t.meta.age - 1, 1, 1).toordinal()
            + 1
            + int(rng.integers(364))
        )
        card.put("dob", date.fromordinal(born).isoformat(), "from-metadata")
    for field in scenario.fields:
        for text in (answers or {}).get(field, ()):
            if field in card.values:
                break
            heard = scenario.extract(text, scenario.empty_record(), field)[field]
            card.put(field, heard, "from-transcript")
        if field not in card.values:
            card.put(field, drawn[field], "sampled")
    ordered = {f: card.values[f] for f in scenario.fields}
    return Card(t.encounter_id, ordered, {f: card.sources[f] for f in scenario.fields})


class _CardValues:
    """A card's values as they are found, each with where it came from (first source wins
    where ``put`` is chained with ``or``)."""

    def __init__(self, scenario: IntakeScenario, sections: Mapping[str, str]) -> None:
        self.scenario = scenario
        self.sections = sections
        self.values: Profile = {}
        self.sources: dict[str, Source] = {}

    def put(self, field: str, value: Value | None, source: Source) -> bool:
        if value is None:
            return False
        self.values[field], self.sources[field] = value, source
        return True

    def section(self, name: str) -> str:
        return "\n".join(self.sections.get(s, "") for s in SECTIONS[name]).strip()

    def items(self, field: str, text: str) -> tuple[str, ...] | None:
        found = self.scenario.vocab[field].find(text)
        return tuple(sorted(set(found))[: LIST_SIZES[field]]) if found else None

    def first(self, text: str) -> str | None:
        return next(iter(self.scenario.vocab["complaint"].find(text)), None)

    def from_note(self, t: Transcript) -> None:
        """Every field the visit's metadata or note states."""
        put, section, items = self.put, self.section, self.items
        _ = (
            put("complaint", self.first(t.meta.cc), "from-metadata")
            or put("complaint", self.first(section("complaint")), "from-note")
            or put("complaint", self.first(section("story")), "from-note")
        )
        story = section("story")
        put("onset", readers.onset(_AGE.sub(" ", story)) if story else None, "from-note")
        rating = _RATING.search(t.note)
        severity = int(rating.group(1)) if rating and int(rating.group(1)) <= 10 else None
        put("severity", severity, "from-note")
        meds = section("medications") or "\n".join(
            x for x in _SENTENCE.split(t.note) if _TAKES.search(x.lower())
        )
        put("medications", items("medications", meds) if meds else None, "from-note")
        if allergies := section("allergies"):
            found = items("allergies", allergies)
            none = () if _NONE.search(allergies.lower()) else None
            put("allergies", found if found else none, "from-note")
        _ = put("history", items("history", "; ".join(t.meta.secondary)), "from-metadata") or put(
            "history", items("history", section("history")), "from-note"
        )
        put("red_flag", _red_flag(f"{story}\n{section('review')}"), "from-note")


def _red_flag(text: str) -> bool | None:
    """True if the note reports chest pain or breathlessness, False if it denies them, None if
    it is silent (a negation before the cue in its sentence denies it)."""
    said = [(s, m) for s in _SENTENCE.split(text.lower()) if (m := _RED_FLAG.search(s))]
    if not said:
        return None
    return any(not _NEGATED.search(s[: m.start()]) for s, m in said)
