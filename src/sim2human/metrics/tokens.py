"""The one tokenisation every text metric here shares.

Lowercase; apostrophes are dropped so contractions stay one token (``don't`` -> ``dont``); every
other punctuation or symbol character (and ``_``) becomes a space; split on whitespace. Unicode
letters and digits are kept, so ``café`` and ``555`` are tokens. ``555-0134`` is two tokens.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

__all__ = ["ngrams", "normalise", "tokenize"]

_APOSTROPHES = re.compile(r"['\u2019]")
_NON_WORD = re.compile(r"[^\w\s]|_")


def tokenize(text: str) -> list[str]:
    """Lowercased, punctuation-stripped whitespace tokens of ``text``."""
    return _NON_WORD.sub(" ", _APOSTROPHES.sub("", text.lower())).split()


def normalise(text: str) -> str:
    """``text``'s tokens joined by single spaces."""
    return " ".join(tokenize(text))


def ngrams(tokens: list[str], n: int) -> Iterator[tuple[str, ...]]:
    """The contiguous ``n``-grams of one token list (none when it has fewer than ``n`` tokens)."""
    return (tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))
