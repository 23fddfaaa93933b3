"""MultiWOZ 2.1 as a replay corpus: real users booking a restaurant, a hotel or a train, for the
``support`` scenario.

A member is one dialogue and one domain: the first of restaurant, hotel, train whose goal has
every slot ``support`` takes for it (``SLOTS``), whose constraints never change (no
``fail_info``: the user's first constraints are the goal's) and whose booking either goes
through as first asked (``task: new booking``) or fails on a slot ``support`` changes
(``CHANGES``: a restaurant's time, a hotel's stay; ``fail_book`` is the booking as first asked,
``old_time`` / ``old_stay``, and ``book`` the value it was changed to). Its turns are the
call's part for that domain: the wizard's turns whose acts are the domain's, booking or general
ones are the agent's; the user's such turns are the member's words; the rest of a multi-domain
call is an aside. The card is the domain and the goal's slots, read with the scenario's own
extractor (``"19:30"`` is the value ``19 30``; a station as the field asked, so the goal's
``departure`` reads as the departure), tagged ``from-goal``.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Mapping, Sequence
from functools import lru_cache, partial
from typing import Final

import numpy as np

from sim2human.corpora import multiwoz
from sim2human.errors import UsageError
from sim2human.scenarios import capabilities
from sim2human.scenarios.catalog import get_scenario
from sim2human.scenarios.slots import SlotScenario, applicable_fields
from sim2human.simulators.replay_corpus import (
    Card,
    Corpus,
    CorpusFamily,
    Member,
    Source,
    Speaker,
    build_member,
)

SLOTS: Final[dict[str, dict[str, str]]] = {
    "restaurant": {
        "area": "area",
        "pricerange": "pricerange",
        "food": "food",
        "day": "day",
        "people": "people",
        "time": "time",
    },
    "hotel": {
        "area": "area",
        "pricerange": "pricerange",
        "day": "day",
        "people": "people",
        "stay": "stay",
    },
    "train": {
        "destination": "destination",
        "departure": "departure",
        "day": "day",
        "time": "leaveAt",
        "people": "people",
    },
}
"""Per domain, ``support``'s fields and the goal's slot each one is (``info`` and ``book``
merged); the ``domain`` field is the domain itself. ``scripts/multiwoz_support.py``, which
writes the file's profile rows from these goals, reads this table too."""
CHANGES: Final[dict[str, tuple[str, str, str]]] = {
    "time": ("restaurant", "time change", "old_time"),
    "stay": ("hotel", "stay change", "old_stay"),
}
"""A goal's ``fail_book`` slot -> (its domain, ``support``'s ``task``, the field holding the
booking as first asked) (``scripts/multiwoz_support.py``'s table)."""
NEW: Final = "new booking"
FIELDS: Final = (
    "domain",
    "task",
    *dict.fromkeys(f for slots in SLOTS.values() for f in slots),
    *(field for _, _, field in CHANGES.values()),
)
MIN_USER_TURNS: Final = 3
_CLOCK = re.compile(r"0(\d:\d\d)")


def _split(name: str) -> multiwoz.Split:
    if name not in multiwoz.SPLITS:
        raise UsageError(f"MultiWOZ corpus: unknown split {name!r} (known: val, test)")
    return "val" if name == "val" else "test"


def goal_domain(d: multiwoz.Dialogue) -> str | None:
    """The first domain whose goal has every slot ``support`` takes, keeps its constraints and
    books as first asked or changes what ``support`` changes."""
    for dom, slots in SLOTS.items():
        g = d.goals.get(dom)
        if (
            g is not None
            and not g.fail_info
            and change_fields(dom, g.fail_book) is not None
            and all(s in {**g.info, **g.book} for s in slots.values())
        ):
            return dom
    return None


def change_fields(dom: str, fail: Mapping[str, str]) -> dict[str, str] | None:
    """The goal's ``task`` and the booking as first asked, as fields, or None when what failed
    is no change ``support`` has (a hotel's day)."""
    if not fail:
        return {"task": NEW}
    if len(fail) != 1 or (slot := next(iter(fail))) not in CHANGES or CHANGES[slot][0] != dom:
        return None
    _, task, field = CHANGES[slot]
    return {"task": task, field: fail[slot]}


def goal_values(d: multiwoz.Dialogue) -> dict[str, str] | None:
    """The call's domain and its goal's slots as ``support``'s fields (a clock time without
    its leading zero, as the vocabulary holds it), or None when no domain's goal fits."""
    dom = goal_domain(d)
    if dom is None:
        return None
    g = d.goals[dom]
    values = {**g.info, **g.book}
    changed = change_fields(dom, g.fail_book)
    assert changed is not None  # goal_domain took it
    out = {**changed, **{f: values[s] for f, s in SLOTS[dom].items()}}
    for f in ("time", "old_time"):
        if f in out:
            out[f] = _CLOCK.sub(r"\1", out[f])
    return {"domain": dom, **out}


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
        raise UsageError(f"MultiWOZ corpus: no booking in split(s) {', '.join(splits)}")
    return found


def _holds(values: Mapping[str, str]) -> bool:
    """Whether ``support`` (the packaged file) reads every one of the goal's values: a cuisine
    the file leaves out ("north american", which would read as the area north) is no member."""
    support = capabilities.need_slot_kit(get_scenario("support"), "MultiWOZ's members")
    return all(support.extract(values[f], support.empty_record(), f)[f] is not None for f in values)


def wrong_task(scenario: object) -> str | None:
    """Why MultiWOZ's bookings are not ``scenario``'s task (it needs ``support``'s fields), or
    None."""
    fields = capabilities.fields(scenario)  # a scenario off the slot kit has none
    if missing_fields := [s for s in FIELDS if s not in fields]:
        return (
            "MultiWOZ replay members play a restaurant, hotel or train booking with the fields "
            f"{', '.join(FIELDS)} (the support scenario); "
            f"this one lacks {', '.join(missing_fields)}"
        )
    return None


def unplayable(scenario: object) -> str | None:
    """Why MultiWOZ members cannot play ``scenario`` (they need its fields), or None."""
    return wrong_task(scenario) or multiwoz.missing()


def human_turns(data: str | None) -> list[tuple[str, tuple[str, ...]]]:
    """The held-out (test) bookings' user turns, their booked domain's part only (what a
    member says), from ``data``."""
    return [
        (d.dialogue_id, tuple(text for who, text in _turns(d) if who == "user"))
        for d in multiwoz.load("test", data)
        if goal_domain(d) is not None
    ]


def member(dialogue_id: str, scenario: SlotScenario) -> Member:
    if (why := unplayable(scenario)) is not None:
        raise UsageError(f"replay member {dialogue_id!r}: {why}")
    key = (dialogue_id, id(scenario))
    if key not in _MEMBERS:  # keeps the scenario, so its id is not reused while cached
        if len(_MEMBERS) >= 512:
            _MEMBERS.clear()
        _MEMBERS[key] = (scenario, _member(dialogue_id, scenario))
    return _MEMBERS[key][1]


_MEMBERS: dict[tuple[str, int], tuple[SlotScenario, Member]] = {}
"""Members by (dialogue, scenario): a scenario (a protocol) need not be hashable."""


@lru_cache(maxsize=1)
def _by_id() -> dict[str, multiwoz.Dialogue]:
    return {d.dialogue_id: d for s in multiwoz.SPLITS for d in multiwoz.load(s)}


def _member(dialogue_id: str, scenario: SlotScenario) -> Member:
    d = _by_id().get(dialogue_id)
    values = goal_values(d) if d is not None else None
    if d is None or values is None:
        raise UsageError(f"replay member: {dialogue_id!r} is not a booking of the MultiWOZ corpus")
    return build_member(_turns(d), scenario, partial(_card, dialogue_id, values, scenario))


def _turns(d: multiwoz.Dialogue) -> list[tuple[Speaker, str]]:
    """The call's turns: its booked domain's (with booking and general acts) the two sides',
    the rest asides."""
    ours = frozenset({goal_domain(d) or "restaurant", "booking", "general"})
    return [
        (
            (("agent" if t.speaker == "system" else "user") if t.domains <= ours else "aside"),
            t.text,
        )
        for t in d.turns
    ]


def _card(
    dialogue_id: str,
    values: Mapping[str, str],
    scenario: SlotScenario,
    _: Mapping[str, Sequence[str]],
) -> Card:
    rng = np.random.default_rng(zlib.crc32(dialogue_id.encode()))
    read = dict(scenario.sample_profile(rng))  # fields the goal does not name: one draw per id
    for f in values:
        heard = scenario.extract(values[f], scenario.empty_record(), f)[f]
        if heard is None:
            raise UsageError(
                f"replay member {dialogue_id!r}: the goal's {f} {values[f]!r} is not a value of "
                f"the scenario's {f}"
            )
        read[f] = heard
    kept = applicable_fields(scenario, read)  # the booked domain's fields
    values_in_order = {f: read[f] for f in kept}
    sources: dict[str, Source] = {f: "from-goal" if f in values else "sampled" for f in kept}
    return Card(dialogue_id, values_in_order, sources)


MULTIWOZ: Final = Corpus(
    name="multiwoz",
    families=(
        CorpusFamily(
            "multiwoz-val", ("val",), "real callers' words: MultiWOZ 2.1 val bookings (support)"
        ),
        CorpusFamily(
            "multiwoz-heldout",
            ("test",),
            "real callers' words: MultiWOZ 2.1 test bookings (support)",
        ),
    ),
    ids=dialogue_ids,
    member=member,
    unplayable=unplayable,
    missing=multiwoz.missing,
    title="held-out MultiWOZ 2.1 callers' turns (test restaurant, hotel and train bookings)",
    wrong_task=wrong_task,
    human_turns=human_turns,
)
