"""Tiny shared fixtures."""

from __future__ import annotations

import os

import numpy as np
import pytest

from sim2human.scenarios.intake.scenario import IntakeScenario
from sim2human.simulators.base import QuirkPool

# Reports in tests embed lexically (loading MiniLM costs ~10 s a process, and study workers are
# fresh processes); the tests of MiniLM and of "auto" itself clear this.
os.environ.setdefault("SIM2HUMAN_EMBEDDER", "lexical")


@pytest.fixture(scope="session")
def scenario() -> IntakeScenario:
    return IntakeScenario()


@pytest.fixture(scope="session")
def pool(scenario: IntakeScenario) -> QuirkPool:
    return QuirkPool.from_acts(scenario.acts)


@pytest.fixture()
def rng() -> np.random.Generator:
    return np.random.default_rng(0)
