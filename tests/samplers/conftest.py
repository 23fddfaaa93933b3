"""Constructed ensembles for the adaptive samplers: easy members and a hard one."""

from __future__ import annotations

import pytest
from adaptive_helpers import with_traits

from sim2human.simulators.base import QuirkPool, SimulatorSpec
from sim2human.simulators.families import get_family


@pytest.fixture(scope="session")
def easy_members(pool: QuirkPool) -> list[SimulatorSpec]:
    base = get_family("cooperative")
    return [
        with_traits(
            base.sample(k, pool),
            f"easy-{k}",
            cooperativeness=1.0,
            jargon_confusion=0.0,
            silence_rate=0.0,
            noise={},
        )
        for k in range(3)
    ]


@pytest.fixture(scope="session")
def hard_member(pool: QuirkPool) -> SimulatorSpec:
    """Guarded, impatient and easily confused: the scripted agent mostly fails with it."""
    spec = get_family("anxious").sample(9, pool)
    return with_traits(
        spec,
        "hard",
        cooperativeness=0.4,
        patience=9,
        tolerance=1,
        jargon_confusion=0.9,
        silence_rate=0.3,
    )
