"""The scenarios' memos (issue #22, speed): what a memo returns is what the plain computation
does, the first time and every time after."""

from __future__ import annotations

import itertools

import numpy as np

from sim2human.scenarios.catalog import get_scenario
from sim2human.scenarios.files.scenario import FileScenario
from sim2human.scenarios.negotiation import deal
from sim2human.scenarios.negotiation.camper import CamperMoves
from sim2human.scenarios.negotiation.deal import ALL_SPLITS, ISSUES, LEVELS, WALK_AWAY
from sim2human.simulators.base import Traits


def _tables() -> list[dict[str, int]]:
    return [deal.values(dict(zip(ISSUES, p, strict=True))) for p in itertools.permutations(LEVELS)]


def test_best_rational_and_at_least_are_the_brute_force_over_every_split() -> None:
    for own, other in itertools.product(_tables(), repeat=2):
        brute = max(deal.mine(s, own) for s in ALL_SPLITS if deal.theirs(s, other) >= WALK_AWAY)
        assert deal.best_rational(own, other) == brute == deal.best_rational(own, other)
    for other in _tables():
        for points in range(0, 3 * 3 * 5 + 2):
            want = tuple(s for s in ALL_SPLITS if deal.theirs(s, other) >= points)
            assert deal.at_least(other, points) == want


def test_a_campers_counter_offer_is_the_cheapest_split_at_its_aspiration() -> None:
    for levels in itertools.permutations(LEVELS):
        profile = {**dict(zip(ISSUES, levels, strict=True)), "reason": "r"}
        for coop in (0.0, 0.5, 1.0):
            traits = Traits(cooperativeness=coop)
            camper = CamperMoves(profile, traits, np.random.default_rng(0))
            fits = [s for s in ALL_SPLITS if deal.theirs(s, camper.values) >= camper.aspiration]
            want = min(fits, key=lambda s: (deal.theirs(s, camper.values), -sum(s)))
            camper._counter("", ("offer",))
            assert camper.offered == want


def test_a_file_scenarios_reading_is_the_same_read_fresh_or_remembered() -> None:
    scenario = get_scenario("support")
    assert isinstance(scenario, FileScenario)
    lines = [
        "I'd like a table for 4 people at an italian place in the centre",
        "book it for saturday at 19:30 please",
        "no, cheap",
        "",
    ]
    first = scenario.fields[0]
    empty = dict.fromkeys(scenario.fields)
    for line, expecting in itertools.product(lines, (None, *scenario.fields)):
        read = {
            n: v
            for n, r in scenario.readers.items()
            if (v := r.read(line, expecting == n, expecting)) is not None
        }
        assert scenario.extract(line, empty, expecting) == {**empty, **read}
        kept = {**empty, first: "kept"}
        assert scenario.extract(line, kept, expecting) == {**kept, **read}  # remembered
    for act in scenario.acts:
        intent = scenario._interpret(act.text)
        assert scenario.interpret(act.text) == intent == scenario.interpret(act.text)
        assert scenario.interpret(act.text.upper()) == intent
