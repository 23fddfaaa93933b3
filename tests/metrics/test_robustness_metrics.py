"""Worst-decile held-out gold and episodes-to-target, on hand-built episodes."""

from __future__ import annotations

import pytest

from sim2human.metrics.robustness import (
    curve_mean,
    episodes_to_reach,
    worst_decile,
    worst_decile_estimate,
)
from sim2human.types import Episode, Outcome


def ep(member: str, success: bool) -> Episode:
    gold = Outcome(success=success, fields={}, completed=success, dropped=False)
    return Episode.model_construct(simulator_id=member, split="heldout", gold=gold)


def test_worst_decile_takes_the_lowest_tenth_at_least_one() -> None:
    assert worst_decile([0.9, 0.1, 0.5]) == pytest.approx(0.1)
    assert worst_decile([float(x) / 20 for x in range(20)]) == pytest.approx(0.025)  # 2 of 20


def test_estimate_over_seeds_with_ci() -> None:
    seed0 = [ep("a", True)] * 4 + [ep("b", False)] * 4  # worst member: 0
    seed1 = [ep("a", True)] * 4 + [ep("b", True), ep("b", False)] * 2  # worst member: 0.5
    est = worst_decile_estimate({0: seed0, 1: seed1}, n_boot=200)
    assert est.mean == pytest.approx(0.25) and est.n == 16
    assert est.ci[0] <= est.mean <= est.ci[1] and est.ci[0] >= 0.0


def test_curves_and_episodes_to_reach() -> None:
    a = [{"episodes_seen": 100, "heldout_gold": 0.1}, {"episodes_seen": 200, "heldout_gold": 0.3}]
    b = [{"episodes_seen": 100, "heldout_gold": 0.3}, {"episodes_seen": 200, "heldout_gold": 0.5}]
    curve = curve_mean([a, b])
    assert curve == [(100, pytest.approx(0.2)), (200, pytest.approx(0.4))]
    assert episodes_to_reach(curve, 0.4) == 200
    assert episodes_to_reach(curve, 0.2) == 100
    assert episodes_to_reach(curve, 0.41) is None
