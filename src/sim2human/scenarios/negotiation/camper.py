"""The camper's side of a negotiation: what it does with each agent turn (``core.UserMoves``).

It hears an offer, weighs it at its hidden values, accepts it when it meets its aspiration and
otherwise rejects it with a counter-offer at that aspiration (which falls by a point per round,
never to the walk-away); it answers what matters to it (with a CaSiNo camper's reason) when
asked, if it is willing; it opens with an offer of its own when the agent keeps talking without
one. Its blind spot (``concede``, the persona's trigger) drops its aspiration to the walk-away:
a flattered or guilt-tripped camper offers the agent everything but what it needs most, and
accepts a greedy split it would otherwise refuse.

Progress (what its satisfaction is built on) is a deal struck, the better for it the higher;
a call without a deal counts only whether it was asked what it needs.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache

import numpy as np

from sim2human.scenarios.core import Progress, UserMove, UserTraits
from sim2human.scenarios.negotiation import deal
from sim2human.scenarios.negotiation.deal import ISSUES, WALK_AWAY, Split
from sim2human.scenarios.negotiation.words import (
    ACCEPT,
    ASKS_PRIORITIES,
    EVASIVE,
    FLEXIBLE,
    NUDGE,
    REJECT,
    accepts,
)

FLOOR = WALK_AWAY + 1
"""The least a camper accepts unless its blind spot is hit: one point above its walk-away, so a
greedy split (all of one issue, none of the rest) is only ever accepted through the trigger."""
OPENS_AFTER = 3
"""Agent turns without an offer after which the camper puts its own on the table."""
BETTER = 9
"""Points above the walk-away at which a deal is as good as it gets for the camper's progress."""


def aspiration(cooperativeness: float) -> int:
    """The points a camper holds out for at first: 17 for the most cooperative, up to 20."""
    return FLOOR + 1 + round(3 * (1 - cooperativeness))


def progress(camper_points: int | None, asked: bool) -> Progress:
    """The camper's progress: a deal (``camper_points``), or none (whether it was asked)."""
    if camper_points is None:
        return Progress(0.2 * asked, reached=False)
    gain = min(1.0, max(0.0, (camper_points - WALK_AWAY) / BETTER))
    return Progress(0.6 + 0.4 * gain, reached=True)


class CamperMoves:
    """One camper in one call (``profile``: its priorities by issue and its reason; ``traits``:
    how cooperative it is, how many words it has; ``rng``: its stream)."""

    def __init__(
        self, profile: Mapping[str, object], traits: UserTraits, rng: np.random.Generator
    ) -> None:
        self.priorities = {i: str(profile[i]) for i in ISSUES}
        self.values = deal.values(self.priorities)
        self.reason = str(profile["reason"])
        cooperativeness = traits.cooperativeness
        self.cooperativeness = cooperativeness
        self.capacity = traits.capacity
        self.rng = rng
        self.aspiration = aspiration(cooperativeness)
        self.asked = 0
        self.turns = 0
        self.offered: Split | None = None
        """The camper's own offer on the table (the agent's packages under it)."""
        self.agreed: Split | None = None

    def opening(self) -> UserMove:
        return UserMove("Hi! Let's work out how to split the food, water and firewood.")

    def reply(self, agent_text: str) -> UserMove:
        rng, capacity = self.rng, self.capacity
        self.turns += 1
        offer = deal.read_split(agent_text)
        if offer is not None:  # the agent's split replaces the camper's on the table
            self.offered = None
            return self._weigh(offer, rng, capacity)
        if self.offered is not None and accepts(agent_text):  # the call ends on the agent's turn
            self.agreed = self.offered
            return UserMove(ACCEPT[0], tags=("accept",), done=True)
        if ASKS_PRIORITIES.search(agent_text.lower()):
            return self._priorities(rng, capacity)
        if self.offered is None and self.turns >= OPENS_AFTER:
            return self._counter("", ("offer",))
        return UserMove(_pick(NUDGE, rng, capacity))

    def concede(self, agent_text: str, again: bool) -> UserMove | None:
        """Give way: accept an offer worth the walk-away, else offer the agent the most this
        camper can give and still get its walk-away (all but what it needs most). After that
        (``again``) it bargains on as usual, at the walk-away."""
        if again:
            return None
        self.aspiration = WALK_AWAY
        offer = deal.read_split(agent_text)
        if offer is not None and deal.theirs(offer, self.values) >= WALK_AWAY:
            self.agreed = offer
            return UserMove(ACCEPT[0], tags=("trigger", "accept"), done=True)
        return self._counter(FLEXIBLE + " ", ("trigger", "offer"))

    def heard(self, line: str) -> None:
        """A camper's progress is the deal, whatever the line did to its words."""

    def progress(self) -> Progress:
        points = None if self.agreed is None else deal.theirs(self.agreed, self.values)
        return progress(points, self.asked > 0)

    def _weigh(self, offer: Split, rng: np.random.Generator, capacity: float) -> UserMove:
        """Accept an offer that meets the aspiration; else reject it, with a counter."""
        points = deal.theirs(offer, self.values)
        if points >= self.aspiration:
            self.agreed = offer
            return UserMove(_pick(ACCEPT, rng, capacity), tags=("accept",), done=True)
        self.aspiration = max(min(self.aspiration, FLOOR), self.aspiration - 1)
        move = self._counter(_pick(REJECT, rng, capacity) + " ", ("reject", "offer"))
        return UserMove(move.text, move.tags, annoyed=int(points < WALK_AWAY))

    def _counter(self, prefix: str, tags: tuple[str, ...]) -> UserMove:
        """The camper's offer at its aspiration: it takes just enough, the agent the most
        packages (a camper cannot see the agent's values)."""
        split = _offer_at(deal.as_points(self.values), self.aspiration)
        self.offered = split
        return UserMove(f"{prefix}How about this: {deal.say_split(deal.flip(split))}?", tags)

    def _priorities(self, rng: np.random.Generator, capacity: float) -> UserMove:
        """What matters most (with its reason) and, from a camper of more words, least."""
        self.asked += 1
        willing = 1 - (1 - self.cooperativeness) ** self.asked
        if rng.random() >= willing:
            return UserMove(_pick(EVASIVE, rng, capacity), tags=("evasive",))
        by_level = {level: i for i, level in self.priorities.items()}
        text = f"{by_level['high'].capitalize()} matters most to me. {self.reason}"
        if capacity >= 0.5 or rng.random() < 0.5:
            text += f" {by_level['low'].capitalize()} matters least to me."
        return UserMove(text, tags=("priorities",))


@cache
def _offer_at(values: tuple[int, int, int], aspiration: int) -> Split:
    """The split (the agent's packages) a camper of ``values`` offers at ``aspiration``: it
    takes just enough, the agent the most packages; memoised (few values and aspirations)."""
    points = dict(zip(ISSUES, values, strict=True))
    fits = deal.at_least(points, aspiration)
    return min(fits, key=lambda s: (deal.theirs(s, points), -sum(s)))


def _pick(options: tuple[str, ...], rng: np.random.Generator, capacity: float) -> str:
    """One of the first few ``options``: a camper of more words has more of them."""
    n = 1 + round(capacity * (len(options) - 1))
    return options[int(rng.integers(n))]
