"""``train.turn_cost`` weighs handle time in the proxy trained on (issue 37, item 2): each agent
turn costs that much reward; 0, the default, leaves every return as it was."""

from __future__ import annotations

import numpy as np

from sim2human.experiments.study.config import parse_study
from sim2human.train.config import PPOConfig
from sim2human.train.ppo import _Batch, _gae


def _batch() -> _Batch:
    # one call of three agent turns; satisfaction 0.2, 0.5, 0.9 after each
    return _Batch(
        obs=[np.zeros(1)] * 3,
        actions=[0, 0, 0],
        logps=[0.0] * 3,
        values=[0.0] * 3,
        owner=[0, 0, 0],
        satisfaction=[[0.2, 0.5, 0.9]],
    )


def test_each_agent_turn_costs_the_turn_cost() -> None:
    plain = PPOConfig(gamma=1.0, gae_lambda=1.0)
    _, returns = _gae(_batch(), 1, plain)
    assert np.allclose(returns, [0.9, 0.7, 0.4])
    _, costly = _gae(_batch(), 1, plain.model_copy(update={"turn_cost": 0.1}))
    assert np.allclose(costly, [0.6, 0.5, 0.3])  # three, two and one turns still to pay


def test_a_study_file_sets_it_and_it_is_off_by_default() -> None:
    base = {"name": "s", "seeds": [0], "conditions": [{"name": "u", "sampler": "uniform"}]}
    assert parse_study(base, "here").train.turn_cost == 0.0
    cfg = parse_study({**base, "train": {"turn_cost": 0.01}}, "here")
    assert cfg.train.turn_cost == 0.01
