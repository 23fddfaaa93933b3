"""Tiny shared fixtures."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator

import numpy as np
import pytest
from hypothesis import settings

from sim2human.scenarios.intake.scenario import IntakeScenario
from sim2human.simulators.base import QuirkPool

# Reports in tests embed lexically (loading MiniLM costs ~10 s a process, and study workers are
# fresh processes); the tests of MiniLM and of "auto" itself clear this.
os.environ.setdefault("SIM2HUMAN_EMBEDDER", "lexical")

# Property tests draw the same examples on every run by default, so main stays green on a new
# machine: a run that finds a new counterexample must be one where someone went looking.
# `SIM2HUMAN_HYPOTHESIS=explore scripts/test tests/reliability` draws fresh ones.
settings.register_profile("repeatable", derandomize=True, database=None)
settings.register_profile("explore", derandomize=False, database=None)
settings.load_profile(os.environ.get("SIM2HUMAN_HYPOTHESIS", "repeatable"))


@pytest.fixture(scope="session")
def scenario() -> IntakeScenario:
    return IntakeScenario()


@pytest.fixture(scope="session")
def pool(scenario: IntakeScenario) -> QuirkPool:
    return QuirkPool.from_acts(scenario.acts)


@pytest.fixture()
def rng() -> np.random.Generator:
    return np.random.default_rng(0)


@pytest.fixture(autouse=True)
def _worlds_built_afresh() -> Iterator[None]:
    """Each test builds its studies' worlds afresh (``StudyWorld.build`` keeps them per
    process): some tests swap a family registry or a scenario under the same study."""
    yield
    if (world := sys.modules.get("sim2human.experiments.study.world")) is not None:
        world.StudyWorld.forget()
