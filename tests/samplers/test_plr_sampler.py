"""PLR: rank prioritisation with temperature, staleness mixing, replay, buffer, and gold gating."""

from __future__ import annotations

import numpy as np
import pytest

from sim2human.errors import UsageError
from sim2human.samplers.feedback import BatchInfo
from sim2human.samplers.plr import PLRArgs, PLRSampler, plr_distribution
from sim2human.simulators.base import SimulatorSpec
from sim2human.types import Episode, Outcome

OUTCOME = Outcome(success=False, fields={}, completed=False, dropped=False)


def episode(member: str, seed: int, proxy: float = 0.5, success: bool = False) -> Episode:
    gold = OUTCOME.model_copy(update={"success": success})
    return Episode.model_construct(simulator_id=member, seed=seed, proxy=proxy, gold=gold)


def test_rank_prioritisation_and_temperature() -> None:
    scores = np.asarray([0.3, 0.9, 0.1, 0.5])  # ranks 3, 1, 4, 2
    never = np.zeros(4)
    p = plr_distribution(scores, never, now=0, beta=1.0, rho=0.0)
    h = np.asarray([1 / 3, 1, 1 / 4, 1 / 2])
    assert p == pytest.approx(h / h.sum())
    p_cold = plr_distribution(scores, never, now=0, beta=0.5, rho=0.0)
    assert p_cold == pytest.approx(h**2 / (h**2).sum())  # 1/beta = 2: sharper
    assert p_cold[1] > p[1]
    p_hot = plr_distribution(scores, never, now=0, beta=100.0, rho=0.0)
    assert p_hot == pytest.approx(np.full(4, 0.25), abs=0.01)  # high temperature: near uniform


def test_staleness_mixing() -> None:
    scores = np.asarray([0.9, 0.1, 0.5])
    last = np.asarray([10, 2, 6])
    p_c = np.asarray([0, 8, 4]) / 12  # (c - C_i) / sum, c = 10
    h = np.asarray([1, 1 / 3, 1 / 2]) ** 10
    p_s = h / h.sum()
    for rho in (0.0, 0.3, 1.0):
        p = plr_distribution(scores, last, now=10, beta=0.1, rho=rho)
        assert p == pytest.approx((1 - rho) * p_s + rho * p_c)
        assert p.sum() == pytest.approx(1.0)


def test_replays_high_scoring_levels_and_keeps_the_best_in_a_full_buffer(
    easy_members: list[SimulatorSpec],
) -> None:
    ids = [m.id for m in easy_members]
    plr = PLRSampler(easy_members, PLRArgs(buffer=3, min_levels=3, replay_prob=1.0, rho=0.0))
    rng = np.random.default_rng(0)
    levels = [plr.next_level(rng) for _ in range(4)]  # new levels until the buffer has 3
    eps = [episode(spec.id, seed) for spec, seed in levels]
    plr.update(eps, BatchInfo(0, 4, (0.2, 0.8, 0.1, 0.5), None))
    assert sorted(plr.scores) == [0.2, 0.5, 0.8]  # the 0.1 level did not displace anything
    top = (levels[1][0].id, levels[1][1])
    drawn = [plr.next_level(rng) for _ in range(200)]
    share_top = np.mean([(s.id, seed) == top for s, seed in drawn])
    assert share_top > 0.95  # beta = 0.1, no staleness: nearly always the top-ranked level
    assert sum(plr.shares().values()) == pytest.approx(1.0)
    assert set(plr.shares()) == set(ids)


def test_gap_score_needs_oracle_gold(easy_members: list[SimulatorSpec]) -> None:
    with pytest.raises(UsageError, match="oracle_gold"):
        PLRSampler(easy_members, PLRArgs(score="gap"))
    plr = PLRSampler(easy_members, PLRArgs(score="gap"), oracle_gold=True)
    rng = np.random.default_rng(1)
    (spec, seed), (spec2, seed2) = plr.next_level(rng), plr.next_level(rng)
    plr.update([episode(spec.id, seed, 0.9, False), episode(spec2.id, seed2, 0.9, True)])
    assert plr.scores == pytest.approx([0.9, -0.1])


def test_gae_score_needs_the_trainers_advantages(easy_members: list[SimulatorSpec]) -> None:
    plr = PLRSampler(easy_members, PLRArgs())
    with pytest.raises(UsageError, match="advantages"):
        plr.update([episode(easy_members[0].id, 1)])
