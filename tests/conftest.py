"""Tiny shared fixtures."""

from __future__ import annotations

import numpy as np
import pytest

from sim2human.scenarios.intake.scenario import IntakeScenario
from sim2human.simulators.base import QuirkPool


@pytest.fixture(scope="session")
def scenario() -> IntakeScenario:
    return IntakeScenario()


@pytest.fixture(scope="session")
def pool(scenario: IntakeScenario) -> QuirkPool:
    return QuirkPool.from_acts(scenario.acts)


@pytest.fixture()
def rng() -> np.random.Generator:
    return np.random.default_rng(0)
