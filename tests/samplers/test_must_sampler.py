"""MUST: uniform during warm-up, then most episodes go to the member the agent does worst on."""

from __future__ import annotations

import numpy as np
import pytest

from sim2human.agents.scripted import ScriptedAgent
from sim2human.errors import UsageError
from sim2human.rollout.conversation import MAX_TURNS, Job
from sim2human.rollout.play import play
from sim2human.samplers.must import MustArgs, MustSampler
from sim2human.scenarios.intake.scenario import IntakeScenario
from sim2human.simulators.base import SimulatorSpec


def test_shares_concentrate_on_the_hard_member_after_warmup(
    scenario: IntakeScenario, easy_members: list[SimulatorSpec], hard_member: SimulatorSpec
) -> None:
    members = [*easy_members, hard_member]
    sampler = MustSampler(members, MustArgs(warmup_episodes=96, every_episodes=32, window=32))
    agent = ScriptedAgent(scenario)
    rng = np.random.default_rng(0)
    history = []
    for update in range(10):
        jobs = [Job(sampler.next(rng), int(rng.integers(2**31)), step=update) for _ in range(32)]
        sampler.update(play(agent, jobs, scenario, max_turns=MAX_TURNS))
        history.append(sampler.shares())
    for shares in history[:2]:  # warm-up: uniform
        assert all(p == pytest.approx(0.25) for p in shares.values())
    x = dict(zip([m.id for m in members], sampler.success(), strict=True))
    assert x["hard"] < min(x[m.id] for m in easy_members) - 0.2  # it really is the hard one
    final = history[-1]
    assert max(final, key=lambda m: final[m]) == "hard"
    assert final["hard"] > 0.4  # vs 0.25 uniform
    assert all(0 < final[m.id] < final["hard"] for m in easy_members)  # never argmax


def test_formula_on_hand_set_estimates(easy_members: list[SimulatorSpec]) -> None:
    sampler = MustSampler(easy_members, MustArgs(tau=0.5, window=4))
    for member, values in zip(sampler.recent, ([0.9] * 4, [0.5] * 4, [0.2] * 4), strict=True):
        member.extend(values)
    sampler.counts[:] = [100, 100, 100]
    x = np.asarray([0.9, 0.5, 0.2])
    x_hat = x + np.sqrt(2 * np.log(300) / 100)
    z = 1 / (x_hat - 0.5 * 0.2)
    assert sampler.probabilities() == pytest.approx(z / z.sum())


def test_min_share_floor_and_its_bound(easy_members: list[SimulatorSpec]) -> None:
    sampler = MustSampler(easy_members, MustArgs(min_share=0.2))
    sampler.recent[0].extend([1.0] * 10)
    sampler.recent[1].extend([0.0] * 10)
    sampler.recent[2].extend([0.0] * 10)
    sampler.counts[:] = [10, 10, 10]
    p = sampler.probabilities()
    assert p.min() >= 0.2 - 1e-9 and p.sum() == pytest.approx(1.0)
    with pytest.raises(UsageError, match="min_share"):
        MustSampler(easy_members, MustArgs(min_share=0.34))
