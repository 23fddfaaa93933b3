"""PPO on a trivial case: one frozen simulator with a trigger phrase is learned quickly."""

from __future__ import annotations

import numpy as np

from sim2human.agents.policy import PolicyAgent
from sim2human.samplers.build import FixedSampler
from sim2human.scenarios.intake.scenario import IntakeScenario
from sim2human.simulators.base import QuirkPool
from sim2human.simulators.families import get_family
from sim2human.train.config import PPOConfig
from sim2human.train.phases import PLAY, POLICY, UPDATE, Phases
from sim2human.train.ppo import _Batch, _gae, _normalised, train
from sim2human.types import Episode


def test_ppo_learns_a_frozen_simulator(scenario: IntakeScenario, pool: QuirkPool) -> None:
    spec = get_family("standard").sample(1, pool, capacity=0.1, temperature=0.0)
    agent = PolicyAgent(scenario, seed=0)
    cfg = PPOConfig(episodes=960, batch_episodes=32, epochs=8, minibatch=256)
    history = train(agent, FixedSampler(spec), scenario, cfg, seed=0)
    first = np.mean([h.train_proxy for h in history[:3]])
    last = np.mean([h.train_proxy for h in history[-3:]])
    assert last > first + 0.25 and last > 0.85
    assert history[-1].kl_init > history[0].kl_init  # it moved away from the initial policy
    assert history[-1].entropy < history[0].entropy


def test_advantages_credit_the_turn_that_raised_satisfaction() -> None:
    from sim2human.types import Episode

    batch = _Batch(
        obs=[np.zeros(1)] * 3,
        actions=[0, 0, 0],
        logps=[0.0] * 3,
        values=[0.0] * 3,
        owner=[0, 0, 0],
        satisfaction=[[0.1, 0.9, 0.9]],
    )
    ep = Episode.model_construct(simulator_id="m", family="f")
    cfg = PPOConfig(gamma=1.0, gae_lambda=0.0, per_family_norm=False)
    raw, returns = _gae(batch, 1, cfg)
    kept = raw.copy()
    adv = _normalised(raw, batch, [ep], cfg)
    assert np.allclose(returns, [0.1, 0.8, 0.0])
    assert adv[1] > adv[0] > adv[2]
    assert abs(adv.mean()) < 1e-6 and abs(adv.std() - 1.0) < 1e-3
    assert np.array_equal(raw, kept)  # the caller reads the raw advantages too (the sampler's)


def test_training_counts_the_work_of_its_phases(scenario: IntakeScenario, pool: QuirkPool) -> None:
    """``Phases.work``: every turn of every training call, one decision per agent turn, and
    ``epochs`` passes of ``ceil(decisions / minibatch)`` steps per update (what
    ``summary.json``'s ``phase_work`` holds, and ``bench_demo.py --floors`` sets against)."""
    spec = get_family("standard").sample(1, pool, capacity=0.1, temperature=0.0)
    cfg = PPOConfig(episodes=40, batch_episodes=16, epochs=3, minibatch=32)
    played: list[list[Episode]] = []
    phases = Phases()
    train(
        PolicyAgent(scenario, seed=0),
        FixedSampler(spec),
        scenario,
        cfg,
        seed=0,
        on_update=lambda _, episodes: played.append(list(episodes)),
        phases=phases,
    )
    assert [len(b) for b in played] == [16, 16, 8]
    decisions = [sum(t.speaker == "agent" for e in b for t in e.turns) for b in played]
    assert phases.work[PLAY] == sum(len(e.turns) for b in played for e in b)
    assert phases.work[POLICY] == sum(decisions)
    assert phases.work[UPDATE] == sum(3 * -(-d // 32) for d in decisions)
