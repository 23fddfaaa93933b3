"""``intake``: a phone intake of a patient, the default scenario.

The agent must collect eight fields from a caller and close the call. Gold success means every
field in the record matches the hidden profile and the agent closed the call (not dropped, not
timed out).
"""

from __future__ import annotations

import re
from datetime import date
from functools import cached_property, lru_cache
from importlib import resources

import numpy as np
import yaml

from sim2human.scenarios import readers
from sim2human.scenarios.core import Act
from sim2human.scenarios.intake import speech as intake_speech
from sim2human.scenarios.intake.voice import VOICE
from sim2human.scenarios.slots import AgentIntent, SlotFilling, UserSignals
from sim2human.scenarios.vocab import Vocab
from sim2human.types import Profile, Record, Value

DATA = "intake"
"""Its folder under ``scenarios``, whose ``data/`` holds its files (not ``self.name``: a
subclass named ``module:Name`` by a study, ``scenarios.refs``, reads the same files)."""
FIELDS = (
    "complaint",
    "onset",
    "severity",
    "medications",
    "allergies",
    "history",
    "red_flag",
    "dob",
)
LIST_FIELDS = {"medications": "medications", "allergies": "allergens", "history": "conditions"}
"""List-valued field -> the vocabulary file that names its items."""
LIST_SIZES = {"medications": 3, "allergies": 2, "history": 2}
HEARD = {
    "medications": "heard_medications",
    "allergies": "heard_allergens",
    "history": "heard_conditions",
}
"""List-valued field -> the file of names the extractor reads but no programmatic caller says."""

# Which words in an agent turn ask for which field. Plain and jargon wordings both count.
ASK_CUES: dict[str, tuple[str, ...]] = {
    "complaint": ("main problem", "brings you", "calling about", "complaint", "reason for"),
    "onset": ("when did", "how long", "onset", "duration", "start"),
    "severity": ("how bad", "scale", "severity", "out of 10", "rating"),
    "medications": ("medicine", "medication", "pills", "pharmacotherapy", "prescription"),
    "allergies": ("allerg", "hypersensitiv", "reaction to"),
    "history": ("health condition", "long-term illness", "medical history", "comorbid"),
    "red_flag": ("chest", "breath", "angina", "dyspn"),
    "dob": ("date of birth", "birthday", "dob", "born"),
}
JARGON = (
    "chief complaint",
    "onset",
    "severity",
    "rating scale",
    "pharmacotherapy",
    "hypersensitiv",
    "comorbid",
    "angina",
    "dyspn",
    "dob",
    "assessment",
)
CLOSE_CUES = ("goodbye", "bye", "all done", "that's everything")
EMPATHY_CUES = ("sorry to hear", "must be", "i understand", "that sounds")
CONFUSED = re.compile(r"what do you mean|don't understand|what's that|what is that|huh\?|sorry\?")
# Clause cues that route a volunteered list item to the right field.
LIST_CUES = {
    "allergies": re.compile(r"allerg|react"),
    "medications": re.compile(
        r"\b(take|taking|on|medications?|medicines?|pills|prescribed|use|using)\b"
    ),
    "history": re.compile(r"\b(have|had|history|diagnosed|suffer)\b"),
}
_CLAUSES = re.compile(r"[.;!?]|\bbut\b|, and\b")
_COMPLAINT = re.compile(r"got|having|calling about|problem|mainly|to be honest|because")
_CORRECTION = re.compile(
    r"\b(?:no,? wait|wait,? no|sorry,? i mean|i mean|no,? actually|actually,? no|scratch that"
    r"|correction|let me correct that|or rather)\b"
)
"""Where a caller corrects themselves: what follows overrides what came before."""
_ADDS = re.compile(r"\b(?:also|as well|too|another|plus|oh,? and|and also)\b")
_RED_FLAG = re.compile(r"chest pain|chest tight|short of breath|shortness of breath|breathing")
_DENIED = re.compile(r"\b(no|not|never|without|deny|denies|(?:have|has|do|does|did)(?:n't| not))\b")
"""A denial in the few words before a red-flag cue: "i haven't noticed any shortness of breath"."""
_DOSAGE = re.compile(
    r"\b(?:once|twice|\w+ times)\s+(?:a|per|each|every)\s+(?:day|week|month)\b"
    r"|\b(?:pills?|tablets?|capsules?|doses?|puffs?)\s+(?:a|per|each)\s+day\b"
    r"|\bevery\s+(?:\w+\s+){0,3}?(?:hours?|days?|weeks?|mornings?|nights?)\b"
    r"|\b[\w.]+\s*(?:mg|milligrams?|mcg|micrograms?|units?)\b"
)
"""How often and how much of a medicine ("twice a day", "every six hours", "500 milligrams"):
masked before reading a duration or a rating, so "once a day" is no onset of one day."""
_RELATIVE = {
    "yesterday": "1 day",
    "last night": "1 day",
    "last week": "1 week",
    "last month": "1 month",
    "last year": "1 year",
}
_RELATIVE_ONSET = re.compile(r"\b(" + "|".join(_RELATIVE) + r")\b")
_ONSET_CUE = re.compile(r"\b(start|started|starts|began|begun|since|ago)\b")


@lru_cache(maxsize=1 << 14)
def _manner_of(user_text: str) -> tuple[bool, bool]:
    """Whether a user turn is silent ("no" is an answer, not silence) and whether it is
    confused. Cached: read on every user turn, and a replayed caller says the same few dozen
    turns call after call."""
    text = user_text.strip().lower()
    return readers.silent(text), CONFUSED.search(text) is not None


class IntakeScenario(SlotFilling):
    """Phone intake: see the module docstring (the state, ends and gold: the slot kit's)."""

    name = "intake"
    fields: tuple[str, ...] = FIELDS
    voice = VOICE

    @cached_property
    def vocab(self) -> dict[str, Vocab]:
        names = {"complaint": "complaints", **LIST_FIELDS}
        return {f: Vocab.load(DATA, file) for f, file in names.items()}

    @cached_property
    def reading(self) -> dict[str, Vocab]:
        """The vocabularies the extractor reads with: ``vocab`` plus heard-only names
        (``HEARD``), so real callers' brand and lay names are understood while what programmatic
        callers say (drawn from ``vocab``) stays the same."""
        out = dict(self.vocab)
        for f, file in HEARD.items():
            out[f] = self.vocab[f].hearing(Vocab.load(DATA, file))
        return out

    @cached_property
    def acts(self) -> tuple[Act, ...]:
        path = resources.files("sim2human.scenarios").joinpath(DATA, "data", "acts.yaml")
        return tuple(Act(**row) for row in yaml.safe_load(path.read_text(encoding="utf-8")))

    @cached_property
    def plain_question(self) -> dict[str, str]:
        return {
            a.field: a.text
            for a in reversed(self.acts)
            if a.kind == "ask" and a.field and (a.style == "plain")
        }

    # -- the hidden profile -------------------------------------------------------------------

    def sample_profile(self, rng: np.random.Generator) -> Profile:
        def pick(field: str, k: int) -> tuple[str, ...]:
            items = self.vocab[field].canonical
            return tuple(sorted(items[i] for i in rng.choice(len(items), size=k, replace=False)))

        born = date(1935, 1, 1).toordinal() + int(rng.integers(0, 365 * 70))
        unit = readers.UNITS[int(rng.integers(3))]
        complaints = self.vocab["complaint"].canonical
        return {
            "complaint": complaints[int(rng.integers(len(complaints)))],
            "onset": readers.format_onset(int(rng.integers(1, 11)), unit),
            "severity": int(rng.integers(1, 11)),
            "medications": pick("medications", int(rng.integers(0, 4))),
            "allergies": pick("allergies", int(rng.integers(0, 3))),
            "history": pick("history", int(rng.integers(0, 3))),
            "red_flag": bool(rng.random() < 0.3),
            "dob": date.fromordinal(born).isoformat(),
        }

    # -- reading the user ---------------------------------------------------------------------

    def extract(self, user_text: str, record: Record, expecting: str | None) -> Record:
        """The record updated by what ``user_text`` says (``expecting``: the field just asked).

        A value said after a self-correction ("three days, no wait, four days") wins over the one
        before it; list items added with "also", "and ... too" join those already heard instead of
        replacing them, so a list answered over two turns is read whole.
        """
        out = dict(record)
        found, adds = _read(self, user_text, expecting)
        for f, v in found:
            old = out[f]
            if adds and f in LIST_FIELDS and isinstance(v, tuple) and isinstance(old, tuple):
                v = tuple(sorted(set(old) | set(v)))[: LIST_SIZES[f]]
            out[f] = v
        return out

    def read(self, text: str, expecting: str | None) -> dict[str, Value]:
        """Every value one stretch of speech states, later mentions overriding earlier ones."""
        found: dict[str, Value] = {}
        for part in _CORRECTION.split(text.lower()):
            for f, v in self._read_part(part, expecting).items():
                old = found.get(f)
                # "aspirin and metformin, I mean, metformin" repeats an item, it corrects nothing
                if isinstance(v, tuple) and isinstance(old, tuple) and set(v) <= set(old):
                    continue
                found[f] = v
        return found

    def _read_part(self, text: str, expecting: str | None) -> dict[str, Value]:
        out: dict[str, Value] = {}
        if (expecting == "complaint" or _COMPLAINT.search(text)) and (
            found := self.reading["complaint"].find(text)
        ):
            out["complaint"] = found[0]
        amounts = _DOSAGE.sub(" ", text)
        if (v := readers.onset(amounts)) is not None:
            out["onset"] = v
        elif (expecting == "onset" or _ONSET_CUE.search(text)) and (
            m := _RELATIVE_ONSET.search(text)
        ):
            out["onset"] = _RELATIVE[m.group(1)]
        if (r := readers.rating(amounts, expecting == "severity")) is not None:
            out["severity"] = r
        if (d := readers.birth_date(text)) is not None:
            out["dob"] = d
        clauses = _CLAUSES.split(text)
        flagged = [c for c in clauses if _RED_FLAG.search(c)]
        if flagged:
            out["red_flag"] = _flag_said(flagged[0])
        elif expecting == "red_flag" and (yn := readers.yes_no(text)) is not None:
            out["red_flag"] = yn
        out.update(self._list_fields(clauses, expecting))
        return out

    def _list_fields(self, clauses: list[str], expecting: str | None) -> dict[str, Value]:
        items: dict[str, list[str]] = {}
        for clause in clauses:
            if (heard := _clause_items(self, clause, expecting)) is not None:
                items.setdefault(heard[0], []).extend(heard[1])
        return {f: tuple(sorted(set(v))[: LIST_SIZES[f]]) for f, v in items.items()}

    def clause_items(self, clause: str, expecting: str | None) -> tuple[str, list[str]] | None:
        """The list field one clause speaks of and the items it names (none: a denial), or
        None when it names no list field."""
        cued = [f for f, cue in LIST_CUES.items() if cue.search(clause)]
        target = cued[0] if cued else expecting
        if target not in LIST_FIELDS:
            return None
        items = self.reading[target].find(clause)
        # "i take digoxin for afib", answering a history question: "take" cues
        # medications, but the items it names are the field asked for
        if (
            not items
            and cued
            and expecting in LIST_FIELDS
            and expecting != target
            and (asked := self.reading[expecting].find(clause))
        ):
            target, items = expecting, asked
        if items:
            return target, items
        if (target == expecting or (cued and not _RED_FLAG.search(clause))) and (
            readers.yes_no(clause) is False
        ):  # "i've never had chest pain" denies the red flag, not every condition
            return target, []
        return None

    def signals(self, user_text: str, before: Record, after: Record) -> UserSignals:
        silent, confused = _manner_of(user_text)
        changed = [f for f in FIELDS if after[f] != before[f]]
        return UserSignals(
            silent=silent,
            confused=confused,
            new_fields=sum(before[f] is None for f in changed),
            corrected=any(before[f] is not None for f in changed),
        )

    # -- reading the agent --------------------------------------------------------------------

    def interpret(self, agent_text: str) -> AgentIntent:
        return _interpret(agent_text)

    def render_act(self, act: Act, last_field: str | None, record: Record) -> str:
        if "{" not in act.text:
            return act.text
        question = self.plain_question.get(last_field or "", "How can I help you today?")
        readback = ""
        if "{readback}" in act.text:
            readback = "; ".join(_read_back(f, v) for f, v in record.items() if v is not None)
        return act.text.format(last_question=question, readback=readback or "nothing yet")

    # -- gold ---------------------------------------------------------------------------------

    def say(self, field: str, value: Value, capacity: float, rng: np.random.Generator) -> str:
        """How a programmatic caller of the given capacity says one value."""
        return intake_speech.say(field, value, capacity, rng, self.vocab)


def _flag_said(clause: str) -> bool:
    """Whether a clause naming a red flag reports it (not "no", nor a denial just before it)."""
    m = _RED_FLAG.search(clause)
    if readers.yes_no(clause) is False or m is None:
        return m is None
    return not _DENIED.search(" ".join(clause[: m.start()].split()[-5:]))


@lru_cache(maxsize=200_000)
def _clause_items(
    scenario: IntakeScenario, clause: str, expecting: str | None
) -> tuple[str, tuple[str, ...]] | None:
    """``IntakeScenario.clause_items`` memoised: a noisy line garbles a clause or two, and the
    others recur in line after line."""
    heard = scenario.clause_items(clause, expecting)
    return None if heard is None else (heard[0], tuple(heard[1]))


@lru_cache(maxsize=200_000)
def _read(
    scenario: IntakeScenario, text: str, expecting: str | None
) -> tuple[tuple[tuple[str, Value], ...], bool]:
    """``IntakeScenario.read`` memoised (a user's line is read by the agent's side and by the
    simulator checking what got across): (field, value) pairs, and whether the line adds to a
    list rather than restating it."""
    if not text.strip():
        return (), False
    found = scenario.read(text, expecting)
    return tuple(found.items()), bool(_ADDS.search(text.lower()))


READBACK_LABELS = {
    "complaint": "main problem",
    "onset": "started",
    "severity": "pain",
    "medications": "medications",
    "allergies": "allergies",
    "history": "medical history",
    "red_flag": "chest pain or breathing trouble",
    "dob": "date of birth",
}
"""How a read-back names each field: words the caller (and the extractor) recognise."""


def _read_back(field: str, value: Value) -> str:
    """One field of a read-back, said so that a caller can check it ("pain: 7 out of 10")."""
    if isinstance(value, tuple):
        spoken = ", ".join(value) or "none"
    elif isinstance(value, bool):
        spoken = "yes" if value else "no"
    elif field == "severity":
        spoken = f"{value} out of 10"
    elif field == "onset":
        spoken = f"{value} ago"
    else:
        spoken = str(value)
    return f"{READBACK_LABELS.get(field, field)}: {spoken}"


@lru_cache(maxsize=50_000)
def _interpret(agent_text: str) -> AgentIntent:
    t = agent_text.lower()
    confirm = "read that back" in t or "is that correct" in t
    return AgentIntent(
        # a read-back names every field it holds, but asks for none of them
        asks=()
        if confirm
        else tuple(f for f, cues in ASK_CUES.items() if any(c in t for c in cues)),
        jargon=any(j in t for j in JARGON),
        greet=t.startswith(("hello", "hi", "good day")),
        close=any(c in t for c in CLOSE_CUES),
        empathy=any(c in t for c in EMPATHY_CUES),
        confirm=confirm,
        clarify=t.startswith("sorry,"),
    )
