"""Readers for number-like values in what a user says: durations, 0-10 ratings, dates of
birth, yes/no. Any scenario's (the intake's fields, a scenario file's ``kind: date`` and
``yes_no`` fields, a replayed patient's card).

Plain regular expressions over a normalised text: the surface forms are few (digits, number
words, month names) and a parser library (dateparser, say) would be a large dependency that still
guesses wrongly on "seven" or "3/4".
"""

from __future__ import annotations

import re
from datetime import date
from functools import lru_cache

NUMBER_WORDS = {
    "zero": 0,
    "no": 0,
    "one": 1,
    "a": 1,
    "an": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "couple": 2,
    "few": 3,
}
MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
UNITS = ("day", "week", "month", "year")

_NUM = r"(\d{1,2}|" + "|".join(sorted(NUMBER_WORDS, key=len, reverse=True)) + r")"
_ONSET = re.compile(rf"\b{_NUM}\s+(?:of\s+)?({'|'.join(UNITS)})s?\b")
_RATING = re.compile(rf"\b{_NUM}\s*(?:out of|/|of)\s*(?:10|ten)\b")
_LONE_NUMBER = re.compile(rf"\b{_NUM}\b")
_MONTH = "|".join(MONTHS)
_DATE_MDY = re.compile(rf"\b({_MONTH})\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b")
_DATE_DMY = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_MONTH}),?\s+(\d{{4}})\b")
_DATE_NUM = re.compile(r"\b(\d{1,2})/(\d{1,2})/(\d{4})\b")  # US order, as the simulators say it
_DATE_ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_YES = re.compile(r"\b(yes|yeah|yep|i have|i do|some|a bit|actually)\b")
_NO = re.compile(
    r"\b(no|nope|not|none|never|nothing"
    r"|(?:do|does|did|have|has)(?:n't| not)(?: (?:take|have|use|get|had|notice|noticed))?"
    r" any(?:thing)?)\b"
)
"""Plain noes, and the way real callers often say one: "i don't take anything", "i haven't any"."""


_SPACES = re.compile(r"\s+")


_ALNUM = re.compile(r"[^\W_]")
"""A letter or digit: exactly the characters ``str.isalnum`` accepts (checked over all of
Unicode when written)."""


def silent(text: str) -> bool:
    """Whether ``text`` says nothing: no letter or digit ("no" is an answer, "..." is silence).
    One regex search, not a loop over the characters: every scenario asks it on every user
    turn."""
    return _ALNUM.search(text) is None


@lru_cache(maxsize=65_536)
def normalise(text: str) -> str:
    """Lower case, hyphens as spaces, runs of white space as one (memoised: one reading of a
    line normalises the same clause for the onset, the rating, the date and yes/no)."""
    return _SPACES.sub(" ", text.lower().replace("-", " ")).strip()


def number(token: str) -> int:
    return int(token) if token.isdigit() else NUMBER_WORDS[token]


def onset(text: str) -> str | None:
    """'for three weeks', '3 weeks ago' -> '3 weeks' (canonical: digits, plural unit)."""
    m = _ONSET.search(normalise(text))
    if not m:
        return None
    n = number(m.group(1))
    return format_onset(n, m.group(2)) if n > 0 else None


def format_onset(n: int, unit: str) -> str:
    return f"{n} {unit}{'s' if n != 1 else ''}"


def rating(text: str, expecting: bool) -> int | None:
    """'7 out of 10', or a lone number 0-10 when the agent just asked for one."""
    t = normalise(text)
    m = _RATING.search(t)
    if m is None and expecting:
        m = _LONE_NUMBER.search(re.sub(r"\b(a|an|no)\b", " ", t))
    if m is None:
        return None
    n = number(m.group(1))
    return n if 0 <= n <= 10 else None


def birth_date(text: str) -> str | None:
    """A date in any of the spoken or written forms, as ISO 'YYYY-MM-DD'."""
    t = normalise(text.replace("-", "/")) if _DATE_ISO.search(text) is None else text.lower()
    try:
        if m := _DATE_ISO.search(t):
            return date(int(m[1]), int(m[2]), int(m[3])).isoformat()
        if m := _DATE_MDY.search(t):
            return date(int(m[3]), MONTHS.index(m[1]) + 1, int(m[2])).isoformat()
        if m := _DATE_DMY.search(t):
            return date(int(m[3]), MONTHS.index(m[2]) + 1, int(m[1])).isoformat()
        if m := _DATE_NUM.search(t):
            return date(int(m[3]), int(m[1]), int(m[2])).isoformat()
    except ValueError:
        return None
    return None


_UNSURE = re.compile(r"not sure|don't know|rather not|why do you")


def yes_no(text: str) -> bool | None:
    t = normalise(text)
    if _UNSURE.search(t):
        return None
    yes, no = _YES.search(t), _NO.search(t)
    if yes and (not no or yes.start() < no.start()):
        return True
    if no:
        return False
    return None
