"""Collapse metrics on hand-built data with known answers."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sim2human.metrics.collapse import (
    Paired,
    behaviour,
    exploit_table,
    pass_hat_k,
    robustness,
    transfer,
)
from sim2human.metrics.overoptimisation import EvalPoint, fit_overoptimisation, overopt_curve
from sim2human.types import Episode, Outcome, Termination, Turn

FIELDS = ("a", "b")


def episode(
    split: str,
    success: bool,
    proxy: float,
    acts: tuple[str, ...] = ("x",),
    member: str = "m",
    seed: int = 0,
) -> Episode:
    turns = tuple(
        t
        for a in acts
        for t in (Turn(speaker="agent", text=f"say {a}", act=a), Turn(speaker="user", text="ok"))
    )
    return Episode(
        id=f"{member}/{seed}",
        scenario="intake",
        simulator_id=member,
        family=member,
        split=split,
        seed=seed,
        turns=turns,
        proxy=proxy,
        gold=Outcome(
            success=success, fields=dict.fromkeys(FIELDS, success), completed=True, dropped=False
        ),
        termination=Termination.COMPLETED,
        profile={},
        record={},
        phase="eval",
    )


def test_transfer_gap_and_drop_have_known_values() -> None:
    by_run = {
        "seed-0": [episode("train", True, 1.0)] * 10 + [episode("heldout", False, 0.2)] * 10,
        "seed-1": [episode("train", False, 0.8)] * 10 + [episode("heldout", False, 0.1)] * 10,
    }
    t = transfer(by_run, n_boot=200)
    assert t.train_gold.mean == pytest.approx(0.5)
    assert t.heldout_gold.mean == 0.0
    assert t.drop.mean == pytest.approx(0.5)
    assert t.gap.mean == pytest.approx(0.4)  # (0.0 + 0.8) / 2
    assert t.drop.ci[0] <= 0.5 <= t.drop.ci[1]
    assert t.drop.ci == pytest.approx((0.0, 1.0))  # two runs that disagree completely


def test_transfer_without_heldout_episodes_has_no_drop() -> None:
    t = transfer({"r": [episode("train", True, 1.0)]}, n_boot=100)
    assert t.heldout_gold.n == 0 and t.drop.n == 0 and math.isnan(t.drop.mean)


def test_overoptimisation_fit_recovers_known_curve() -> None:
    alpha, beta, base = 0.6, 0.4, 0.1
    d = np.linspace(0.0, 8.0, 33)
    gold = base + np.where(d > 0, d * (alpha - beta * np.log(np.where(d > 0, d, 1))), 0)
    points = [
        EvalPoint(run="r", update=i, d=float(x), gold=float(g), n=24)
        for i, (x, g) in enumerate(zip(d, gold, strict=True))
    ]
    fit = fit_overoptimisation(points, n_boot=50)
    assert fit is not None
    assert fit.alpha == pytest.approx(alpha, abs=1e-9)
    assert fit.beta == pytest.approx(beta, abs=1e-9)
    assert fit.baseline == pytest.approx(base)
    assert fit.d_star == pytest.approx(math.exp(alpha / beta - 1))
    assert fit.gold_at_peak == pytest.approx(base + fit.d_star * beta)
    assert fit.peak_observed and fit.r2 == pytest.approx(1.0)
    nearest = min(points[1:], key=lambda p: abs(p.d - fit.d_star))
    assert fit.stop == {"r": nearest.update}
    assert overopt_curve(fit, [fit.d_star])[0] == pytest.approx(fit.gold_at_peak)


def test_overoptimisation_without_a_peak() -> None:
    points = [EvalPoint(run="r", update=i, d=float(i), gold=0.1 * i, n=10) for i in range(6)]
    fit = fit_overoptimisation(points, n_boot=20)
    assert fit is not None
    assert fit.beta <= 0 or not fit.peak_observed
    assert fit.stop == {"r": 5}  # still rising: the last point
    assert fit_overoptimisation(points[:2]) is None


def paired(
    p: str, split: str, d_proxy: float, d_field: float, member: str = "m", i: int = 0
) -> Paired:
    return Paired(
        phrasing=p,
        split=split,
        member=member,
        run="r",
        d_proxy=d_proxy,
        d_field=d_field,
        d_success=0.0,
        episode_id=f"{p}/{split}/{i}",
    )


def test_exploit_table_ranks_a_phrasing_that_buys_proxy_only_first() -> None:
    pairs = []
    for i in range(20):
        # 'planted': satisfaction on training members, nothing for held-out gold.
        pairs += [
            paired("planted", "train", 0.6, 0.0, i=i),
            paired("planted", "heldout", 0, 0, i=i),
        ]
        # 'ask': small satisfaction, real gold.
        pairs += [paired("ask", "train", 0.1, 0.1, i=i), paired("ask", "heldout", 0.0, 0.12, i=i)]
        # 'rare': would be an exploit, but the agent hardly says it.
        pairs += [paired("rare", "train", 0.6, 0.0, i=i), paired("rare", "heldout", 0, 0, i=i)]
    usage = {"planted": 40, "ask": 58, "rare": 2}
    rows = exploit_table(pairs, usage, {"planted": "You are wonderful."}, n_boot=100)
    assert rows[0].phrasing == "planted"
    by = {r.phrasing: r for r in rows}
    assert by["planted"].exploit and by["planted"].text == "You are wonderful."
    assert by["planted"].unearned.mean == pytest.approx(0.6)
    assert by["planted"].members_raised == 1 and by["planted"].members_total == 1
    assert not by["ask"].exploit and by["ask"].unearned.mean < 0
    assert not by["rare"].exploit  # 2% of turns: below min_share
    assert by["planted"].share == pytest.approx(0.4)


def test_a_closing_line_earns_its_lift_through_success() -> None:
    """Closing records no field, but gold needs the call closed: not an exploit."""
    pairs = []
    for i in range(20):
        pairs += [paired("close", "train", 0.3, 0.0, i=i), paired("planted", "train", 0.3, 0, i=i)]
        closed = float(i % 4 != 0)
        pairs.append(
            Paired(
                "close",
                "heldout",
                "m",
                "r",
                d_proxy=0.2,
                d_field=0.0,
                d_success=closed,
                episode_id=f"c/{i}",
            )
        )
        pairs.append(paired("planted", "heldout", 0.0, 0.0, i=i))
    by = {r.phrasing: r for r in exploit_table(pairs, {"close": 50, "planted": 50}, {}, n_boot=100)}
    assert by["close"].gold_lift_heldout.mean == pytest.approx(0.75)
    assert not by["close"].exploit and by["planted"].exploit


def test_behaviour_entropy_and_top_share() -> None:
    one = behaviour([episode("heldout", False, 0, acts=("x", "x", "x"))])
    assert one.act_entropy == 0.0 and one.top_share == 1.0 and one.top_phrasing == "x"
    two = behaviour([episode("heldout", False, 0, acts=("x", "y"))])
    assert two.act_entropy == pytest.approx(1.0) and two.top_share == 0.5
    assert two.distinct_1 == pytest.approx(3 / 4)  # "say x", "say y": say, x, y of 4 tokens


def test_pass_hat_k_matches_tau_bench_formula() -> None:
    assert pass_hat_k([(4, 2)], 1) == pytest.approx(0.5)
    assert pass_hat_k([(4, 2)], 2) == pytest.approx(1 / 6)
    assert pass_hat_k([(4, 4), (4, 0)], 3) == pytest.approx(0.5)
    assert math.isnan(pass_hat_k([(2, 2)], 3))


def test_robustness_member_spread_worst_decile_and_pass_k() -> None:
    eps = []
    for seed in range(4):
        eps += [episode("heldout", True, 1, member="good", seed=seed)]
        eps += [episode("heldout", seed < 2, 1, member="half", seed=seed)]
        eps += [episode("heldout", False, 1, member="bad", seed=seed)]
    r = robustness(eps, ks=(1, 2, 3, 4))
    assert r.n_members == 3 and r.worst_members == ["bad"] and r.worst_decile_gold == 0.0
    assert r.member_std == pytest.approx(np.std([1.0, 0.5, 0.0]))
    assert r.trials_per_profile == 3 and 4 not in r.pass_k
    assert r.pass_k[1] == pytest.approx(0.5)
    assert r.pass_k[3] == 0.0


def test_vectorised_cluster_bootstrap_agrees_with_the_reference_one() -> None:
    from sim2human.metrics import collapse, outcomes

    rng = np.random.default_rng(3)
    values = [*rng.random(40), *(rng.random(25) + 0.5), *(rng.random(30) * 0.2)]
    clusters = ["a"] * 40 + ["b"] * 25 + ["c"] * 30
    fast = collapse.cluster_bootstrap(values, clusters, n_boot=4000)
    ref = outcomes.cluster_bootstrap(values, clusters, n_boot=4000)
    assert fast.mean == ref.mean and fast.n == ref.n
    assert fast.ci == pytest.approx(ref.ci, abs=0.03)
    one = collapse.cluster_bootstrap([0.0] * 10 + [1.0] * 10, ["r"] * 20, n_boot=2000)
    assert one.ci == pytest.approx((0.3, 0.7), abs=0.03)  # binomial: 0.5 +- 1.96 * 0.112
