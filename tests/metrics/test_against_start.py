"""What training changed against the warm start: calls paired by split, member and episode seed
within a study seed; cases that fail when the pairing, the sides or the groups are wrong."""

from __future__ import annotations

import pytest

from sim2human.metrics.against_start import against_start, widening
from sim2human.types import Episode, Outcome

OUTCOME = Outcome(success=False, fields={}, completed=False, dropped=False)


def call(success: bool, member: str, seed: int, split: str = "heldout") -> Episode:
    outcome = OUTCOME.model_copy(update={"success": success})
    return Episode.model_construct(simulator_id=member, seed=seed, split=split, gold=outcome)


def gold(e: Episode) -> float:
    return float(e.gold.success)


def test_each_call_is_read_against_the_same_call_of_the_same_seed_s_start() -> None:
    start = {
        0: [call(True, "a", 1), call(False, "a", 2), call(True, "t", 1, "train")],
        1: [call(False, "a", 1), call(False, "a", 2)],
    }
    trained = {
        # seed 0: a/1 kept (0), a/2 gained (+1); its train call lost (-1)
        0: [call(True, "a", 1), call(True, "a", 2), call(False, "t", 1, "train")],
        # seed 1: a/1 gained (+1); a/3 has no partner and is left out
        1: [call(True, "a", 1), call(True, "a", 3)],
    }
    found = against_start(trained, start, lambda e: e.split, gold, n_boot=200)
    held = found["heldout"]
    assert held.change.n == 3 and held.change.mean == pytest.approx(2 / 3)
    assert held.start == pytest.approx(1 / 3) and held.trained == pytest.approx(1.0)
    assert found["train"].change.mean == -1.0 and found["train"].start == 1.0
    lo, hi = held.change.ci
    assert 0.0 <= lo <= 2 / 3 <= hi <= 1.0


def test_a_seed_is_never_read_against_another_seed_s_start() -> None:
    start = {1: [call(False, "a", 1)]}
    trained = {0: [call(True, "a", 1)]}
    assert against_start(trained, start, lambda e: e.split, gold) == {}


def test_groups_are_the_caller_s_and_a_group_with_no_pair_is_absent() -> None:
    start = {0: [call(True, "a", 1), call(False, "visit-1", 0)]}
    trained = {0: [call(True, "a", 1), call(True, "visit-1", 0)]}
    found = against_start(
        trained, start, lambda e: "real" if e.simulator_id.startswith("visit") else e.split, gold
    )
    assert set(found) == {"heldout", "real"}
    assert found["real"].change.mean == 1.0 and found["heldout"].change.mean == 0.0


def test_widening_is_the_trained_drop_minus_the_start_s_on_the_same_calls() -> None:
    """The start completes both training calls and one of two held out (drop 0.5); the trained
    agent completes both training calls and none held out (drop 1.0): widened by 0.5. A call
    with no partner is left out; a seed without both splits paired adds nothing."""
    train = [call(True, "t", 1, "train"), call(True, "t", 2, "train")]
    start = {0: [*train, call(True, "a", 1), call(False, "a", 2)], 1: [train[0]]}
    trained = {
        0: [*train, call(False, "a", 1), call(False, "a", 2), call(True, "a", 9)],
        1: [call(False, "t", 1, "train")],
    }
    wider = widening(trained, start, gold, n_boot=200)
    assert wider.mean == pytest.approx(0.5) and wider.n == 4
    assert wider.ci[0] <= 0.5 <= wider.ci[1]
    same = widening(start, start, gold, n_boot=200)
    assert same.mean == 0.0 and same.ci == (0.0, 0.0)
