"""Whole numbers as callers say them, up to the thousands: "five hundred", "two thousand and
twelve", "a dozen", "twenty-five", "a couple". ``with_digits`` rewrites each such phrase as its
digits, so a number field reads one pattern (``files.reading``); ``spoken`` says a number the
same way back. Hand-written rather than a library: the few packages that do this (num2words,
word2number) are not dependencies, and the grammar here is twenty lines.
"""

from __future__ import annotations

import re

_UNITS = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
]
_TENS = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
WORDS: dict[str, int] = {
    **{w: i for i, w in enumerate(_UNITS)},
    **{w: 20 + 10 * i for i, w in enumerate(_TENS)},
}
_SCALES = {"hundred": 100, "thousand": 1000}
_GROUPS = {"dozen": 12, "couple": 2, "few": 3}
"""Said with "a" ("a dozen", "a couple of"): a count on their own."""
_WORD = "|".join(sorted([*WORDS, *_SCALES, *_GROUPS], key=len, reverse=True))
_PHRASE = re.compile(
    rf"\b(?:an?\s+(?=(?:hundred|thousand|dozen|couple|few)\b))?(?:{_WORD})"
    rf"(?:(?:\s+|-|\s+and\s+)(?:{_WORD}))*\b"
)


def value_of(phrase: str) -> int | None:
    """The number a spoken ``phrase`` (one ``_PHRASE`` match) says, or None when its words do
    not make one number ("one two": two numbers, left as they are)."""
    total, current, last = 0, 0, None
    for w in re.findall(r"[a-z]+", phrase.lower()):
        if w in ("a", "an", "and"):
            continue
        if w in _GROUPS:
            current = (current or 1) * _GROUPS[w] if w == "dozen" else current + _GROUPS[w]
        elif w == "hundred":
            current = (current or 1) * 100
        elif w == "thousand":
            total, current = total + (current or 1) * 1000, 0
        else:
            n = WORDS[w]
            if last is not None and last not in _SCALES and not (last in _TENS and n < 10):
                return None  # "one two", "twenty thirty": not one number
            current += n
        last = w
    return total + current


def with_digits(text: str) -> str:
    """``text`` (lower case) with every spoken number written as digits ("five hundred
    people" -> "500 people"); a phrase that is no one number is left as it was."""

    def one(m: re.Match[str]) -> str:
        n = value_of(m[0])
        return m[0] if n is None else str(n)

    return _PHRASE.sub(one, text)


def spoken(n: int) -> str:
    """``n`` (0 to 999,999) in words, as ``with_digits`` reads it back."""
    if n < 20:
        return _UNITS[n]
    if n < 100:
        tens, unit = divmod(n, 10)
        return _TENS[tens - 2] + (f"-{_UNITS[unit]}" if unit else "")
    if n < 1000:
        hundreds, rest = divmod(n, 100)
        return f"{_UNITS[hundreds]} hundred" + (f" and {spoken(rest)}" if rest else "")
    thousands, rest = divmod(n, 1000)
    head = f"{spoken(thousands)} thousand"
    if not rest:
        return head
    return head + (f" and {spoken(rest)}" if rest < 100 else f" {spoken(rest)}")
