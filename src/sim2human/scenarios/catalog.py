"""The scenarios, by name: a study's ``scenario:`` is looked up here.

Adding a scenario is its own module (or folder) plus one row in ``SCENARIOS``.
"""

from __future__ import annotations

from collections.abc import Callable

from sim2human.errors import UsageError
from sim2human.scenarios.base import Scenario
from sim2human.scenarios.intake.scenario import IntakeScenario

SCENARIOS: dict[str, Callable[[], Scenario]] = {
    "intake": IntakeScenario,
}


def get_scenario(name: str) -> Scenario:
    """A fresh instance of the scenario called ``name``."""
    try:
        factory = SCENARIOS[name]
    except KeyError:
        raise UsageError(
            f"unknown scenario {name!r} (known: {', '.join(sorted(SCENARIOS))})"
        ) from None
    return factory()
