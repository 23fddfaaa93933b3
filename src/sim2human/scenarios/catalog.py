"""The scenarios, by name: a study's ``scenario:`` is looked up here.

Adding a scenario is its own module (or folder) plus one row in ``SCENARIOS``.
"""

from __future__ import annotations

from collections.abc import Callable

from sim2human.errors import UsageError
from sim2human.scenarios.base import Scenario
from sim2human.scenarios.intake.scenario import IntakeScenario
from sim2human.scenarios.pizza import PizzaScenario

SCENARIOS: dict[str, Callable[[], Scenario]] = {
    "intake": IntakeScenario,
    "pizza": PizzaScenario,
}


def known_scenario(name: str) -> str:
    """``name`` if it is a registered scenario; else a UsageError naming the known ones."""
    if name not in SCENARIOS:
        raise UsageError(f"unknown scenario {name!r} (known: {', '.join(sorted(SCENARIOS))})")
    return name


def get_scenario(name: str) -> Scenario:
    """A fresh instance of the scenario called ``name``."""
    return SCENARIOS[known_scenario(name)]()
