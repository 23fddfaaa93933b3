"""Word-level helpers shared by the perturbations: tokens, case, and the value guard.

The value guard encodes the one rule every perturbation obeys: a slip may garble or drop a value
the user stated, but it may never turn an ordinary word into a field value (a number, a month, a
yes/no answer) that an extractor would then read as something the user said.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar

import numpy as np

T = TypeVar("T")

WORD_RE = re.compile(r"[^\W_]+(?:'[^\W_]+)*")
"""A word: letters and digits, with inner apostrophes (``I've``, ``don't``)."""

# fmt: off
ONES = (
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
    "nineteen",
)
TENS = (
    "_", "_", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety",
)
ORDINALS = (
    "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth",
    "eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth", "sixteenth", "seventeenth",
    "eighteenth", "nineteenth", "twentieth", "thirtieth",
)
MONTHS = (
    "january", "february", "march", "april", "may", "june", "july", "august", "september",
    "october", "november", "december", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep",
    "sept", "oct", "nov", "dec",
)
ANSWERS = (
    "yes", "yeah", "yep", "yup", "no", "nope", "nah",
)
# fmt: on

VALUE_WORDS = frozenset([*ONES, *TENS[2:], *ORDINALS, "hundred", "thousand", *MONTHS, *ANSWERS])


def is_value(word: str) -> bool:
    """True for a token an extractor could read as a value: digits, numbers, months, yes/no."""
    return any(ch.isdigit() for ch in word) or any(w in VALUE_WORDS for w in word.lower().split())


def invents_value(old: str, new: str) -> bool:
    """True when ``new`` reads as a value that ``old`` did not."""
    return new.lower() != old.lower() and is_value(new) and not is_value(old)


def replace_some(text: str, rate: float, rng: np.random.Generator, fn: Callable[[str], str]) -> str:
    """Replace each word, with probability ``rate``, by ``fn(word)``: one draw for the whole
    turn, then ``fn`` only on the chosen words (a draw and a callback per word was most of the
    cost of a noisy user)."""
    words = list(WORD_RE.finditer(text))
    if not words:
        return text
    chosen = np.flatnonzero(rng.random(len(words)) < rate).tolist()
    return _splice(text, [words[k] for k in chosen], fn)


def _splice(text: str, words: Sequence[re.Match[str]], fn: Callable[[str], str]) -> str:
    out: list[str] = []
    end = 0
    for m in words:
        out += [text[end : m.start()], fn(m.group(0))]
        end = m.end()
    return "".join([*out, text[end:]]) if out else text


def replace_listed(
    text: str,
    table: Mapping[str, str],
    rate: float,
    rng: np.random.Generator,
    fn: Callable[[str], str],
) -> str:
    """Replace each word whose lower case is in ``table``, with probability ``rate``, by
    ``fn(word)`` (one draw per listed word, none for the others)."""
    words = [m for m in WORD_RE.finditer(text) if m.group(0).lower() in table]
    if not words:
        return text
    chosen = np.flatnonzero(rng.random(len(words)) < rate).tolist()
    return _splice(text, [words[k] for k in chosen], fn)


def match_case(src: str, new: str) -> str:
    """Give ``new`` the capitalisation pattern of ``src`` (all caps, capitalised, or as is)."""
    if not new:
        return new
    if len(src) > 1 and src.isupper():
        return new.upper()
    if src[:1].isupper():
        return new[:1].upper() + new[1:]
    return new


def pick(rng: np.random.Generator, options: Sequence[T]) -> T:
    """One element of ``options``, uniformly (``rng.choice`` would return numpy scalars)."""
    return options[int(rng.integers(len(options)))]


def say_number(n: int) -> str:
    """0-99 in words, the way a recogniser writes them out."""
    if n < 20:
        return ONES[n]
    tens, ones = divmod(n, 10)
    return TENS[tens] + (f" {ONES[ones]}" if ones else "")


def say_ordinal(n: int) -> str:
    """1-31 as an ordinal in words (``4th`` -> ``fourth``, ``21st`` -> ``twenty first``)."""
    if n <= 20:
        return ORDINALS[n - 1]
    tens, ones = divmod(n, 10)
    return ORDINALS[19 if tens == 2 else 20] if not ones else f"{TENS[tens]} {ORDINALS[ones - 1]}"


def say_year(n: int) -> str:
    """A year 1900-2099 as it is spoken: ``1960`` -> ``nineteen sixty``, ``2005`` -> ``two
    thousand five``."""
    century, rest = divmod(n, 100)
    if century == 20 and rest < 10:
        return "two thousand" + (f" {ONES[rest]}" if rest else "")
    head = say_number(century)
    if rest == 0:
        return f"{head} hundred"
    return f"{head} {'oh ' if rest < 10 else ''}{say_number(rest)}"


_ORDINAL_RE = re.compile(r"(\d{1,2})(st|nd|rd|th)", re.IGNORECASE)


def say_digits(token: str) -> str | None:
    """Speak a digit token (``7``, ``15``, ``4th``, ``1960``); None when it is not one we speak."""
    if m := _ORDINAL_RE.fullmatch(token):
        n = int(m.group(1))
        return say_ordinal(n) if 1 <= n <= 31 else None
    if not token.isdigit():
        return None
    n = int(token)
    if n < 100 and len(token) <= 2:
        return say_number(n)
    if len(token) == 4 and 1900 <= n <= 2099:
        return say_year(n)
    return None
