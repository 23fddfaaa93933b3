"""Simulator kinds are one table: an unknown kind is one error naming the known ones."""

from __future__ import annotations

import pytest

from sim2human.errors import UsageError
from sim2human.scenarios.intake.scenario import IntakeScenario
from sim2human.simulators.base import QuirkPool
from sim2human.simulators.families import get_family
from sim2human.simulators.kinds import KINDS, build_simulator, needs_endpoint


def test_an_unknown_kind_is_one_clear_error() -> None:
    scenario = IntakeScenario()
    spec = get_family("cooperative").sample(0, QuirkPool.from_acts(scenario.acts))
    odd = spec.model_copy(update={"kind": "hologram"})
    with pytest.raises(UsageError, match="unknown kind 'hologram' \\(known: persona, replay"):
        build_simulator(odd, scenario)
    with pytest.raises(UsageError, match="unknown kind 'hologram'"):
        needs_endpoint(odd)
    assert set(KINDS) >= {"persona", "llm", "replay", "human", "human-replay"}
