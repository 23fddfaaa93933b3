"""Task pay: the proxy GRPO's groups give the calls that did the task better than the rest,
read from the calls a run logged; cases that fail when the grouping or the sides are wrong."""

from __future__ import annotations

import pytest

from sim2human.metrics.task_pay import task_pay
from sim2human.types import Episode, Outcome

OUTCOME = Outcome(success=False, fields={}, completed=False, dropped=False)


def call(
    proxy: float,
    success: bool,
    *,
    member: str = "m",
    seed: int = 1,
    step: int = 0,
    phase: str = "train",
    points: float | None = None,
) -> Episode:
    """One logged call; ``points``: its gold score (else 1 for a success, 0 otherwise)."""
    value = points if points is not None else float(success)
    outcome = OUTCOME.model_copy(update={"success": success, "score": value})
    return Episode.model_construct(
        simulator_id=member, seed=seed, step=step, phase=phase, proxy=proxy, gold=outcome
    )


def test_the_lift_is_the_better_calls_proxy_minus_the_worse_ones_mean_over_groups() -> None:
    calls = [
        # group (m, 1, 0): better 0.9, worse (0.5 + 0.3) / 2 = 0.4: +0.5
        call(0.9, True),
        call(0.5, False),
        call(0.3, False),
        # group (m, 2, 0): the same member, another profile: +0.1
        call(0.6, True, seed=2),
        call(0.5, False, seed=2),
    ]
    pay = task_pay({"seed-0": calls}, n_boot=200)
    assert pay is not None
    assert pay.lift.mean == pytest.approx((0.5 + 0.1) / 2)
    assert (pay.groups, pay.flat, pay.calls) == (2, 0, 5)


def test_a_reward_blind_to_the_task_pays_nothing_and_one_that_punishes_it_pays_less() -> None:
    blind = [call(0.9, s, seed=k) for k in range(6) for s in (True, False)]
    pay = task_pay({"r": blind}, n_boot=200)
    assert pay is not None and pay.lift.mean == pytest.approx(0.0)
    punishing = [call(0.2 if s else 0.8, s, seed=k) for k in range(6) for s in (True, False)]
    pay = task_pay({"r": punishing}, n_boot=200)
    assert pay is not None and pay.lift.mean == pytest.approx(-0.6)
    assert pay.lift.ci[1] < 0


def test_groups_are_one_member_one_profile_one_step_in_one_run() -> None:
    """Calls that share a profile seed across members, steps or runs are not one group: each
    is alone, so nothing is read."""
    apart = [
        call(0.9, True, member="a"),
        call(0.1, False, member="b"),
        call(0.9, True, step=5),
    ]
    assert task_pay({"r": apart, "s": [call(0.1, False)]}) is None


def test_evaluations_and_flat_groups_are_left_out() -> None:
    calls = [
        call(0.9, True, phase="eval"),
        call(0.1, False, phase="eval"),  # an evaluation: not GRPO's
        call(0.7, True, seed=3),
        call(0.7, True, seed=3),  # a group whose calls all succeeded: flat
        call(0.8, True, seed=4),
        call(0.6, False, seed=4),
    ]
    pay = task_pay({"r": calls}, n_boot=200)
    assert pay is not None
    assert (pay.groups, pay.flat, pay.calls) == (1, 1, 4)
    assert pay.lift.mean == pytest.approx(0.2)


def test_a_gold_score_splits_each_group_at_its_mean() -> None:
    """A score with partial credit (a negotiation's points): above the group's mean against
    below it."""
    calls = [
        call(0.9, False, points=0.8),
        call(0.7, False, points=0.6),  # the mean is 0.5: these two are better
        call(0.2, False, points=0.1),
        call(0.4, False, points=0.5),  # exactly at the mean: on neither side
    ]
    pay = task_pay({"r": calls}, n_boot=200)
    assert pay is not None
    assert pay.lift.mean == pytest.approx((0.9 + 0.7) / 2 - 0.2)


def test_ppo_calls_each_their_own_profile_give_no_estimate() -> None:
    assert task_pay({"r": [call(0.5, k % 2 == 0, seed=k) for k in range(20)]}) is None
    assert task_pay({}) is None
