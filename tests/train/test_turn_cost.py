"""``train.turn_cost`` weighs handle time in the proxy trained on (issue 37, item 2): each agent
turn costs that much reward; 0, the default, leaves every return as it was. ``turn_cost_ramp``
grows it from nothing over a share of training."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from sim2human.agents.policy import PolicyAgent
from sim2human.errors import ConfigError
from sim2human.experiments.study.config import load_study, parse_study
from sim2human.samplers.build import FixedSampler
from sim2human.scenarios.intake.scenario import IntakeScenario
from sim2human.simulators.base import QuirkPool
from sim2human.simulators.families import get_family
from sim2human.train import ppo
from sim2human.train.config import PPOConfig
from sim2human.train.ppo import _Batch, _gae

ROOT = Path(__file__).resolve().parents[2]


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


def test_the_ramp_grows_the_cost_from_nothing_to_its_full_value() -> None:
    cfg = PPOConfig(episodes=1000, turn_cost=0.02, turn_cost_ramp=0.5)
    costs = [cfg.turn_cost_after(seen) for seen in (0, 250, 500, 900)]
    assert np.allclose(costs, [0.0, 0.01, 0.02, 0.02])
    assert cfg.model_copy(update={"turn_cost_ramp": 0.0}).turn_cost_after(0) == 0.02


def test_training_charges_each_batch_the_cost_of_its_place_in_the_ramp(
    scenario: IntakeScenario, pool: QuirkPool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each update's returns are computed at the cost for the episodes played before its batch
    (the satisfaction the reports show is never charged)."""
    charged: list[float] = []

    def spy(batch: _Batch, n_episodes: int, cfg: PPOConfig) -> tuple[np.ndarray, np.ndarray]:
        charged.append(cfg.turn_cost)
        return _gae(batch, n_episodes, cfg)

    monkeypatch.setattr(ppo, "_gae", spy)
    spec = get_family("standard").sample(1, pool, capacity=0.1, temperature=0.0)
    cfg = PPOConfig(
        episodes=64, batch_episodes=16, epochs=1, minibatch=64, turn_cost=0.04, turn_cost_ramp=0.5
    )
    history = ppo.train(PolicyAgent(scenario, seed=0), FixedSampler(spec), scenario, cfg, seed=0)
    # _gae runs once an update: the sampler's raw advantages and the update read the same
    assert np.allclose(charged, [0.0, 0.02, 0.04, 0.04])
    assert all(0 <= h.train_proxy <= 1 for h in history)


def test_a_ramp_without_a_cost_is_refused_in_one_line() -> None:
    base = {"name": "s", "seeds": [0], "conditions": [{"name": "u", "sampler": "uniform"}]}
    with pytest.raises(ConfigError, match="turn_cost_ramp ramps turn_cost, which is 0"):
        parse_study({**base, "train": {"turn_cost_ramp": 0.5}}, "here")


def test_an_lm_agent_study_refuses_it_since_grpo_would_not_take_it() -> None:
    raw = yaml.safe_load((ROOT / "examples" / "lm-collapse.yaml").read_text())
    raw["train"] = {**raw.get("train", {}), "turn_cost": 0.01}
    with pytest.raises(ConfigError, match="an lm agent's GRPO trains on the proxy alone"):
        parse_study(raw, "lm-collapse.yaml")


def test_the_design_study_plays_no_heldout_family_and_sets_what_the_demos_train_with() -> None:
    """``examples/design/handle-time.yaml`` chose the demos' handle time on the train split: it
    never plays a held-out family of the demo, and trains the demo's recommended condition as the
    demo does (the same name, so the same draws), at the cost the demos use."""
    design = load_study(ROOT / "examples" / "design" / "handle-time.yaml", quick=True)
    collapse = load_study(ROOT / "examples" / "collapse.yaml", quick=True)
    support = load_study(ROOT / "examples" / "support.yaml", quick=True)
    assert not set(design.ensemble.heldout) & set(collapse.ensemble.heldout)
    assert design.ensemble.train == collapse.ensemble.train
    (chosen,) = design.conditions
    (demo,) = (c for c in collapse.conditions if c.name == chosen.name)
    assert chosen.model_dump(exclude={"compare_to"}) == demo.model_dump(exclude={"compare_to"})
    for study in (collapse, support):
        assert study.train.turn_cost == design.train.turn_cost > 0
        assert study.train.turn_cost_ramp == design.train.turn_cost_ramp > 0
