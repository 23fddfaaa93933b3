"""Splits, points and the words of an offer: the arithmetic of the campsite negotiation.

A split is the agent's packages of each issue (``Split``: food, water, firewood, 0 to 3 each);
the other side gets the rest. Priorities are high / medium / low, worth 5 / 4 / 3 points per
package (CaSiNo's values). Offers are said in one fixed form ("I get 2 food, 0 water and 3
firewood, and you get ...") that both sides' readers parse back, whoever says it.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping
from functools import cache

ISSUES = ("food", "water", "firewood")
PACKAGES = 3
"""Packages of each issue on the table."""
LEVELS = ("high", "medium", "low")
POINTS = {"high": 5, "medium": 4, "low": 3}
WALK_AWAY = 5 * len(ISSUES)
"""Points each side gets without a deal (5 per issue)."""

Split = tuple[int, int, int]
"""The agent's packages of food, water and firewood; the camper gets ``PACKAGES`` minus each."""
Values = Mapping[str, int]
"""Points per package, by issue."""

ALL_SPLITS: tuple[Split, ...] = tuple(
    (a, b, c) for a, b, c in itertools.product(range(PACKAGES + 1), repeat=3)
)


def values(priorities: Mapping[str, str]) -> dict[str, int]:
    """Issue -> points per package, from issue -> priority level."""
    return {i: POINTS[priorities[i]] for i in ISSUES}


def mine(split: Split, own: Values) -> int:
    """The agent's points under ``split``, at the agent's values ``own``."""
    return sum(n * own[i] for n, i in zip(split, ISSUES, strict=True))


def theirs(split: Split, other: Values) -> int:
    """The other side's points under ``split`` (it gets what the agent does not)."""
    return sum((PACKAGES - n) * other[i] for n, i in zip(split, ISSUES, strict=True))


def flip(split: Split) -> Split:
    """The same split from the other side's point of view."""
    a, b, c = (PACKAGES - n for n in split)
    return (a, b, c)


def best_rational(own: Values, other: Values) -> int:
    """The most the agent can get under a deal giving the other side at least its walk-away."""
    return _best_rational(as_points(own), as_points(other))


def at_least(other: Values, points: int) -> tuple[Split, ...]:
    """The splits (in ``ALL_SPLITS`` order) that give the other side at least ``points``."""
    return _at_least(as_points(other), points)


def as_points(values: Values) -> tuple[int, int, int]:
    """``values`` as a (food, water, firewood) tuple: a memo key."""
    a, b, c = (values[i] for i in ISSUES)
    return (a, b, c)


# Memoised on the values as a tuple: a study asks these of the same few value tables
# (3! orders of 5/4/3) millions of times (most of a negotiation rollout's time, uncached).
@cache
def _best_rational(own: tuple[int, int, int], other: tuple[int, int, int]) -> int:
    mine_, theirs_ = dict(zip(ISSUES, own, strict=True)), dict(zip(ISSUES, other, strict=True))
    return max(mine(s, mine_) for s in ALL_SPLITS if theirs(s, theirs_) >= WALK_AWAY)


@cache
def _at_least(other: tuple[int, int, int], points: int) -> tuple[Split, ...]:
    values = dict(zip(ISSUES, other, strict=True))
    return tuple(s for s in ALL_SPLITS if theirs(s, values) >= points)


def say_split(speaker_gets: Split) -> str:
    """An offer in the one form both readers parse: what the speaker gets, then the listener."""
    you = flip(speaker_gets)
    return f"I get {_items(speaker_gets)}, and you get {_items(you)}"


def _items(split: Split) -> str:
    a, b, c = (f"{n} {i}" for n, i in zip(split, ISSUES, strict=True))
    return f"{a}, {b} and {c}"


_OFFER = re.compile(
    r"i get (\d) food, (\d) water and (\d) firewood,? and you get (\d) food, (\d) water and (\d)"
    r" firewood"
)


def read_split(text: str) -> Split | None:
    """The speaker's packages in an offer said in ``say_split``'s form, or None (none, or
    garbled: the counts do not add up to the packages on the table)."""
    m = _OFFER.search(text.lower())
    if m is None:
        return None
    got = [int(g) for g in m.groups()]
    own, other = got[:3], got[3:]
    if any(a + b != PACKAGES for a, b in zip(own, other, strict=True)):
        return None
    a, b, c = own
    return (a, b, c)
