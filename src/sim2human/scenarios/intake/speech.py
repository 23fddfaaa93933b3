"""How a caller says each intake value: the surface forms programmatic simulators draw from.

Forms are ordered from most to least common; a simulator of capacity c uses the first
``1 + round(c * (n - 1))`` of them, and names items by alias only when c is high.
"""

from __future__ import annotations

from datetime import date
from functools import lru_cache

import numpy as np

from sim2human.scenarios.readers import MONTHS, NUMBER_WORDS
from sim2human.scenarios.vocab import Vocab
from sim2human.types import Value

FORMS: dict[str, tuple[str, ...]] = {
    "complaint": (
        "I've got {v}.",
        "It's {v}, mainly.",
        "I'm calling about {v}.",
        "Well, I've been having {v}.",
        "My main problem is {v}.",
        "Mostly {v}, to be honest.",
    ),
    "onset": (
        "It started {v} ago.",
        "For about {v} now.",
        "I'd say {v}, roughly.",
        "It's been going on {v}.",
        "Hmm, {v} ago, maybe.",
    ),
    "severity": (
        "I'd say {v} out of 10.",
        "About a {v} out of 10.",
        "It's a {v} out of ten.",
        "Maybe {v} out of 10 today.",
        "Probably {v} out of 10.",
    ),
    "medications": (
        "I take {v}.",
        "I'm on {v}.",
        "Just {v}, I take those every day.",
        "The doctor has me on {v}.",
        "I'm taking {v} at the moment.",
    ),
    "allergies": (
        "I'm allergic to {v}.",
        "Yes, {v}, I'm allergic.",
        "I react badly to {v}, I'm allergic.",
        "Only {v}, I'm allergic to that.",
    ),
    "history": (
        "I have {v}.",
        "I've had {v} for years.",
        "I was diagnosed with {v}.",
        "Well, there's {v}, I have that.",
    ),
    "dob": (
        "I was born on {v}.",
        "It's {v}.",
        "My birthday is {v}.",
        "{v}.",
    ),
}
NONE_FORMS: dict[str, tuple[str, ...]] = {
    "medications": ("No, I'm not taking any medicines.", "No medications, none at all."),
    "allergies": ("No, no allergies.", "None that I know of, no allergies."),
    "history": ("No, I don't have any conditions.", "No, I've been healthy, nothing like that."),
}
RED_FLAG_FORMS = {
    True: ("Yes, I've had some chest pain.", "Actually yes, I get short of breath."),
    False: ("No chest pain or breathing trouble.", "No, none of that."),
}


def n_forms(capacity: float, n: int) -> int:
    return 1 + round(capacity * (n - 1))


def say(
    field: str,
    value: Value,
    capacity: float,
    rng: np.random.Generator,
    vocab: dict[str, Vocab],
) -> str:
    """One way a caller of the given capacity says ``field = value``."""

    def pick(options: tuple[str, ...]) -> str:
        return options[int(rng.integers(n_forms(capacity, len(options))))]

    if field == "red_flag":
        return pick(RED_FLAG_FORMS[bool(value)])
    if isinstance(value, tuple) and not value:
        return pick(NONE_FORMS[field])
    return pick(FORMS[field]).format(v=_words(field, value, capacity, rng, vocab))


def _words(
    field: str, value: Value, capacity: float, rng: np.random.Generator, vocab: dict[str, Vocab]
) -> str:
    spoken = capacity >= 0.5 and rng.random() < 0.5
    if isinstance(value, tuple):
        names = [_alias(vocab[field], v, capacity, rng) for v in value]
        return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    if field == "severity":
        return _number(int(value), spoken)
    if field == "onset":
        n, unit = str(value).split()
        return f"{_number(int(n), spoken)} {unit}"
    if field == "dob":
        d = date.fromisoformat(str(value))
        month = MONTHS[d.month - 1].capitalize()
        styles = (
            f"{month} {d.day}, {d.year}",
            f"{d.month}/{d.day}/{d.year}",
            f"{d.day} {month} {d.year}",
        )
        return styles[int(rng.integers(n_forms(capacity, len(styles))))]
    if field == "complaint":
        return _alias(vocab["complaint"], str(value), capacity, rng)
    return str(value)


def _alias(vocab: Vocab, canonical: str, capacity: float, rng: np.random.Generator) -> str:
    if capacity < 0.5:
        return canonical
    names = _names_of(vocab)[canonical]
    return names[int(rng.integers(n_forms(capacity, len(names))))]


@lru_cache(maxsize=64)
def _names_of(vocab: Vocab) -> dict[str, tuple[str, ...]]:
    """Every alias of each canonical name, in the vocabulary's order."""
    out: dict[str, list[str]] = {}
    for alias, canonical in vocab.aliases.items():
        out.setdefault(canonical, []).append(alias)
    return {c: tuple(names) for c, names in out.items()}


_WORDS = {v: k for k, v in NUMBER_WORDS.items() if k not in ("no", "a", "an", "couple", "few")}


def _number(n: int, spoken: bool) -> str:
    return _WORDS.get(n, str(n)) if spoken else str(n)
