"""Accent and speech-recogniser confusions.

The confusions are a small hand-picked table rather than the output of a phonetic algorithm
(Soundex/Metaphone via ``jellyfish``): a phonetic code finds words that sound alike only given a
large lexicon to search, and would still propose substitutions no recogniser makes. Forty lines
of table are smaller than the dependency and easier to audit for the rule below.

Rule: a confusion may garble a value the user said (``fifteen`` -> ``fifty``, ``metformin`` ->
``met for men``, ``no`` -> ``know``) but never produce one from an ordinary word (no ``for`` ->
``four``, no ``to`` -> ``two``, no ``not`` -> ``no``): ``tests/perturb/test_perturb.py`` checks
the table.
"""

from __future__ import annotations

import numpy as np

from ._words import invents_value, match_case, pick, replace_some, say_digits

_TEEN_TY = {
    "thirteen": "thirty",
    "fourteen": "forty",
    "fifteen": "fifty",
    "sixteen": "sixty",
    "seventeen": "seventy",
    "eighteen": "eighty",
    "nineteen": "ninety",
}

CONFUSIONS: dict[str, tuple[str, ...]] = {
    # the classic recogniser mistake on numbers: teens and tens, both ways
    **{teen: (ty,) for teen, ty in _TEEN_TY.items()},
    **{ty: (teen,) for teen, ty in _TEEN_TY.items()},
    # homophones, only in the direction that loses a value, never the one that makes one
    "two": ("to", "too"),
    "four": ("for",),
    "eight": ("ate",),
    "one": ("won",),
    "ten": ("then",),
    "fourth": ("forth",),
    # accent: "th" heard as "t", "d" or "f"
    "three": ("tree", "free"),
    "think": ("tink",),
    "thought": ("taught",),
    "with": ("wit",),
    "no": ("know",),
    "yes": ("guess",),
    "march": ("much",),
    "may": ("make",),
    "hear": ("here",),
    "here": ("hear",),
    "their": ("there",),
    "there": ("their",),
    "week": ("weak",),
    "weeks": ("weaks",),
    "right": ("write",),
    "knew": ("new",),
    "sore": ("soar",),
    "pain": ("pane", "paint"),
    "days": ("daze",),
    "night": ("knight",),
    "morning": ("mourning",),
    "born": ("borne",),
    "birth": ("berth",),
    # near-misses on the words an intake call is about
    "chest": ("chess",),
    "breath": ("bread",),
    "cough": ("cuff",),
    "fever": ("feather",),
    "dizzy": ("busy",),
    "headache": ("head egg",),
    "severe": ("several",),
    "sharp": ("shark",),
    "worse": ("purse",),
    "medication": ("meditation",),
    "medications": ("meditations",),
    "allergic": ("a lurgic",),
    "allergies": ("energies",),
    "allergy": ("a luggy",),
    "asthma": ("as ma",),
    "diabetes": ("dye a beet is",),
    "penicillin": ("penny sillin",),
    "metformin": ("met for men",),
    "insulin": ("in sullen",),
    "aspirin": ("as prin",),
    "ibuprofen": ("i be profen",),
    "lisinopril": ("listen a pill",),
    "pills": ("bills",),
}

ASR_RATE = 0.6
"""Chance per word of a recogniser error at severity 1."""


def _drop_ending(word: str) -> str:
    """A swallowed ending: ``hurting`` -> ``hurtin``, ``started`` -> ``start``, ``days`` ->
    ``day``; short words are kept."""
    low = word.lower()
    if len(word) < 5:
        return word
    if low.endswith("ing"):
        return word[:-1]
    if low.endswith("ed"):
        return word[:-2]
    if low.endswith("s") and not low.endswith("ss"):
        return word[:-1]
    return word


def asr(text: str, severity: float, rng: np.random.Generator) -> str:
    """Mis-recognise words with probability ``ASR_RATE * severity`` each: digits are spoken out
    (``1960`` -> ``nineteen sixty``) and may then be misheard (``nineteen sixteen``), listed
    words become their confusion (``fifteen`` -> ``fifty``, ``pain`` -> ``pane``), others lose
    their ending (``days`` -> ``day``)."""

    def one(word: str) -> str:
        spoken = say_digits(word)
        if spoken is not None:
            words = spoken.split()
            for k, w in enumerate(words):
                if w in CONFUSIONS and rng.random() < 0.5:
                    words[k] = pick(rng, CONFUSIONS[w])
            return " ".join(words)
        options = CONFUSIONS.get(word.lower())
        if options is not None:
            return match_case(word, pick(rng, options))
        new = _drop_ending(word)
        return word if invents_value(word, new) else new

    return replace_some(text, ASR_RATE * severity, rng, one)
