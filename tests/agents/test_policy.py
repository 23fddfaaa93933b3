"""The built-in policy agent: its sampler follows its own probabilities."""

from __future__ import annotations

import numpy as np

from sim2human.scenarios.intake.scenario import IntakeScenario


def test_policy_samples_follow_its_probabilities() -> None:
    import torch

    from sim2human.agents.policy import PolicyAgent

    agent = PolicyAgent(IntakeScenario(), seed=1)
    x = np.zeros((4000, agent.featurise.size), dtype=np.float32)
    x[:, 0] = 1
    actions, logps = agent.decide(x)
    with torch.no_grad():
        p = torch.softmax(agent.net.logits(torch.from_numpy(x[:1])), -1).numpy()[0]
    counts = np.bincount(actions, minlength=len(p)) / len(actions)
    assert np.abs(counts - p).max() < 0.03
    np.testing.assert_allclose(logps, np.log(p[actions]), rtol=1e-5)
