"""The featuriser: one fixed-size row per observation, the same row for the same state."""

from __future__ import annotations

import numpy as np

from sim2human.agents.base import AgentTurn
from sim2human.agents.features import Featuriser
from sim2human.rollout.conversation import Conversation, Job
from sim2human.scenarios.intake.scenario import IntakeScenario
from sim2human.simulators.base import QuirkPool
from sim2human.simulators.families import get_family


def _call(scenario: IntakeScenario, seed: int) -> Conversation:
    spec = get_family("cooperative").sample(0, QuirkPool.from_acts(scenario.acts))
    return Conversation.open(Job(spec=spec, seed=seed), scenario, 12)


def test_a_row_marks_the_field_asked_last_and_the_turn() -> None:
    scenario = IntakeScenario()
    featurise = Featuriser(scenario)
    conv = _call(scenario, 5)
    before = featurise([conv.observe()])
    ask = next(a for a in scenario.acts if a.kind == "ask" and a.field == scenario.fields[0])
    conv.step(AgentTurn(text=ask.text, act=ask.id, field=ask.field))
    after = featurise([conv.observe()])
    nf = len(scenario.fields)
    assert before.shape == after.shape == (1, featurise.size)
    assert before[0, 3 * nf] == 1  # nothing asked yet
    assert after[0, 3 * nf + 1] == 1  # the first field asked last
    assert after[0, nf] == 1  # and asked once
    assert not np.array_equal(before, after)


def test_the_same_state_gives_the_same_row() -> None:
    scenario = IntakeScenario()
    featurise = Featuriser(scenario)
    rows = featurise([_call(scenario, 5).observe(), _call(scenario, 5).observe()])
    np.testing.assert_array_equal(rows[0], rows[1])
    assert rows.dtype == np.float32
