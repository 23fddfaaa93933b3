"""Perturbations of what the user says rather than how: misunderstanding, tangents, code-switching.

Every canned sentence here is free of field values: no numbers, dates, times, medicines,
conditions, symptoms or yes/no words, so none of them can be read as an answer.
"""

from __future__ import annotations

import numpy as np

from ._words import match_case, pick, replace_listed

OFF_TARGET = (
    "Oh, I thought you were asking about my insurance.",
    "Sorry, is this about the bill I got in the mail?",
    "I'm calling about my appointment, is that what you mean?",
    "Oh, the pharmacy I use is next to the supermarket.",
    "Sorry, I thought you wanted my address.",
    "My daughter usually handles all of that, she's at work.",
    "Is this the same office I spoke to before?",
    "Wait, are you asking about my husband? He usually does the calling.",
)


def misunderstanding(text: str, severity: float, rng: np.random.Generator) -> str:
    """With probability ``severity`` the user answers a different question: the turn is replaced
    by a plausible off-target reply (``Oh, I thought you were asking about my insurance.``)."""
    return pick(rng, OFF_TARGET) if rng.random() < severity else text


TANGENTS = (
    "My neighbour's cat got stuck up a tree again, the whole street came out to watch.",
    "Sorry, the kettle's going, hold on.",
    "You sound just like my nephew, he works at a bank.",
    "The traffic on the way back from the shops was terrible.",
    "We're redoing the kitchen, so everything is covered in dust.",
    "My grandson just started learning the trumpet, you can imagine.",
    "I almost missed the bus getting here, the driver waited for me though.",
    "The weather has been so strange lately, hasn't it?",
)


def tangents(text: str, severity: float, rng: np.random.Generator) -> str:
    """Off-topic story sentences: one with probability ``severity``, a second with probability
    ``severity**2``, each told before the answer (then ``Anyway...``) or after it."""
    n = int(rng.random() < severity) + int(rng.random() < severity**2)
    before: list[str] = []
    after: list[str] = []
    for k in rng.permutation(len(TANGENTS))[:n]:
        (before if rng.random() < 0.5 else after).append(TANGENTS[int(k)])
    if n == 0:
        return text
    if not text.strip():
        return " ".join(before + after)
    head = " ".join([*before, "Anyway..."]) + " " if before else ""
    tail = " " + " ".join(after) if after else ""
    return f"{head}{text}{tail}"


SPANISH = {
    "yes": "sí",
    "and": "y",
    "but": "pero",
    "very": "muy",
    "with": "con",
    "since": "desde",
    "of": "de",
    "the": "el",
    "my": "mi",
    "i": "yo",
    "have": "tengo",
    "pain": "dolor",
    "chest": "pecho",
    "head": "cabeza",
    "stomach": "estómago",
    "day": "día",
    "days": "días",
    "week": "semana",
    "weeks": "semanas",
    "morning": "mañana",
    "night": "noche",
    "bad": "mal",
    "allergic": "alérgico",
    "medicine": "medicina",
    "march": "marzo",
    "one": "uno",
    "two": "dos",
    "three": "tres",
    "four": "cuatro",
    "five": "cinco",
    "six": "seis",
    "seven": "siete",
    "eight": "ocho",
    "nine": "nueve",
    "ten": "diez",
}
"""Common words a bilingual caller switches; a translation keeps a value, never adds one."""


def codeswitch(text: str, severity: float, rng: np.random.Generator) -> str:
    """Each word with a Spanish entry is switched with probability ``severity`` (``my chest`` ->
    ``mi pecho``); other words are kept."""

    def one(word: str) -> str:
        es = SPANISH[word.lower()]
        return es if word == "I" else match_case(word, es)

    return replace_listed(text, SPANISH, severity, rng, one)
