"""MultiWOZ 2.1 as a replay corpus: real users booking a restaurant, for the ``support`` scenario.

A member is one dialogue whose goal books a restaurant with all six of ``support``'s slots and
never changes its mind (no ``fail_info``/``fail_book``: the user's first constraints are the
goal's). Its turns are the call's restaurant part: the wizard's turns whose acts are the
restaurant's, booking or general ones are the agent's; the user's such turns are the member's
words; the rest of a multi-domain call (a hotel, a train) is an aside. The card is the goal, read
with the scenario's own extractor (``"19:30"`` is the value ``19 30``), tagged ``from-goal``.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping, Sequence
from functools import lru_cache, partial
from typing import Final

import numpy as np

from sim2human.corpora import multiwoz
from sim2human.errors import UsageError
from sim2human.scenarios.base import Scenario
from sim2human.scenarios.catalog import get_scenario
from sim2human.simulators.replay_card import Card, Source
from sim2human.simulators.replay_corpus import Corpus, Member, Speaker, build_member

SLOTS: Final = ("area", "pricerange", "food", "day", "people", "time")
"""The goal's slots, named as ``support``'s fields (``info`` then ``book``)."""
DOMAINS: Final = frozenset({"restaurant", "booking", "general"})
MIN_USER_TURNS: Final = 3


def _split(name: str) -> multiwoz.Split:
    if name not in multiwoz.SPLITS:
        raise UsageError(f"MultiWOZ corpus: unknown split {name!r} (known: val, test)")
    return "val" if name == "val" else "test"


def goal_values(d: multiwoz.Dialogue) -> dict[str, str] | None:
    """The restaurant goal's six slots, when the dialogue has them all and never changes them."""
    g = d.goals.get("restaurant")
    if g is None or g.changes:
        return None
    values = {**g.info, **g.book}
    return {s: values[s] for s in SLOTS} if all(s in values for s in SLOTS) else None


@lru_cache(maxsize=4)
def dialogue_ids(splits: tuple[str, ...]) -> tuple[str, ...]:
    found = tuple(
        d.dialogue_id
        for s in splits
        for d in multiwoz.load(_split(s))
        if (values := goal_values(d)) is not None
        and sum(sp == "user" for sp, _ in _turns(d)) >= MIN_USER_TURNS
        and _holds(values)
    )
    if not found:
        raise UsageError(f"MultiWOZ corpus: no restaurant booking in split(s) {', '.join(splits)}")
    return found


def _holds(values: Mapping[str, str]) -> bool:
    """Whether ``support`` (the packaged file) reads every one of the goal's values: a cuisine
    the file leaves out ("north american", which would read as the area north) is no member."""
    support = get_scenario("support")
    return all(support.extract(values[f], support.empty_record(), f)[f] is not None for f in SLOTS)


def wrong_task(scenario: Scenario) -> str | None:
    """Why MultiWOZ's restaurant bookings are not ``scenario``'s task (it needs their six
    slots), or None."""
    fields = getattr(scenario, "fields", ())  # a scenario off the slot kit has none
    if missing_fields := [s for s in SLOTS if s not in fields]:
        return (
            "MultiWOZ replay members play a restaurant booking with the fields "
            f"{', '.join(SLOTS)} (the support scenario); this one lacks {', '.join(missing_fields)}"
        )
    return None


def unplayable(scenario: Scenario) -> str | None:
    """Why MultiWOZ members cannot play ``scenario`` (they need its six slots), or None."""
    return wrong_task(scenario) or multiwoz.missing()


def human_turns(data: str | None) -> list[tuple[str, tuple[str, ...]]]:
    """The held-out (test) restaurant bookings' user turns, their restaurant part only (what a
    member says), from ``data``."""
    return [
        (d.dialogue_id, tuple(text for who, text in _turns(d) if who == "user"))
        for d in multiwoz.load("test", data)
        if goal_values(d) is not None
    ]


def member(dialogue_id: str, scenario: Scenario) -> Member:
    if (why := unplayable(scenario)) is not None:
        raise UsageError(f"replay member {dialogue_id!r}: {why}")
    key = (dialogue_id, id(scenario))
    if key not in _MEMBERS:  # keeps the scenario, so its id is not reused while cached
        if len(_MEMBERS) >= 512:
            _MEMBERS.clear()
        _MEMBERS[key] = (scenario, _member(dialogue_id, scenario))
    return _MEMBERS[key][1]


_MEMBERS: dict[tuple[str, int], tuple[Scenario, Member]] = {}
"""Members by (dialogue, scenario): a scenario (a protocol) need not be hashable."""


@lru_cache(maxsize=1)
def _by_id() -> dict[str, multiwoz.Dialogue]:
    return {d.dialogue_id: d for s in multiwoz.SPLITS for d in multiwoz.load(s)}


def _member(dialogue_id: str, scenario: Scenario) -> Member:
    d = _by_id().get(dialogue_id)
    values = goal_values(d) if d is not None else None
    if d is None or values is None:
        raise UsageError(
            f"replay member: {dialogue_id!r} is not a restaurant booking of the MultiWOZ corpus"
        )
    return build_member(_turns(d), scenario, partial(_card, dialogue_id, values, scenario))


def _turns(d: multiwoz.Dialogue) -> list[tuple[Speaker, str]]:
    return [
        (
            (("agent" if t.speaker == "system" else "user") if t.domains <= DOMAINS else "aside"),
            t.text,
        )
        for t in d.turns
    ]


def _card(
    dialogue_id: str, values: Mapping[str, str], scenario: Scenario, _: Mapping[str, Sequence[str]]
) -> Card:
    rng = np.random.default_rng(zlib.crc32(dialogue_id.encode()))
    read = dict(scenario.sample_profile(rng))  # fields the goal does not name: one draw per id
    for f in SLOTS:
        heard = scenario.extract(values[f], scenario.empty_record(), f)[f]
        if heard is None:
            raise UsageError(
                f"replay member {dialogue_id!r}: the goal's {f} {values[f]!r} is not a value of "
                f"the scenario's {f}"
            )
        read[f] = heard
    values_in_order = {f: read[f] for f in scenario.fields}
    sources: dict[str, Source] = {f: "from-goal" if f in SLOTS else "sampled" for f in read}
    return Card(dialogue_id, values_in_order, {f: sources[f] for f in scenario.fields})


MULTIWOZ: Final = Corpus(
    ids=dialogue_ids,
    member=member,
    unplayable=unplayable,
    missing=multiwoz.missing,
    title="held-out MultiWOZ 2.1 callers' turns (test restaurant bookings)",
    wrong_task=wrong_task,
    human_turns=human_turns,
)
