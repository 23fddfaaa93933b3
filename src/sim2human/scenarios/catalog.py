"""The scenarios, by name: a study's ``scenario:`` is looked up here.

Adding a scenario is its own module (or folder) plus one row in ``SCENARIOS``; a study may also
name a scenario file, a Python class or a packaged scenario (``scenarios.refs``).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from importlib import resources

from sim2human.scenarios import refs
from sim2human.scenarios.core import AnyScenario
from sim2human.scenarios.files.load import load_scenario_file
from sim2human.scenarios.intake.scenario import IntakeScenario
from sim2human.scenarios.negotiation.scenario import NegotiationScenario
from sim2human.scenarios.pizza.scenario import PizzaScenario


def packaged_file(folder: str, name: str) -> Callable[[], AnyScenario]:
    """A scenario file shipped in ``scenarios/<folder>/scenario.yaml``, known as ``name``
    (loaded once: a loaded file is immutable, as ``refs`` keeps a file's too)."""

    @lru_cache(maxsize=1)
    def build() -> AnyScenario:
        path = resources.files("sim2human.scenarios").joinpath(folder, "scenario.yaml")
        with resources.as_file(path) as real:
            return load_scenario_file(real, name=name)

    return build


DEFAULT_SCENARIO = "intake"
"""The scenario of a study file, run directory or export that names none (the clinic intake,
the first task sim2human was built on): written here once, read wherever a name is missing."""

SCENARIOS: dict[str, Callable[[], AnyScenario]] = {
    "intake": IntakeScenario,
    "pizza": PizzaScenario,
    "support": packaged_file("support", "support"),  # MultiWOZ 2.1 bookings
    "negotiation": NegotiationScenario,
}


def known_scenario(name: str) -> str:
    """``name`` as studies store it, if it names a scenario: registered here, a scenario file,
    ``module:Name`` or a packaged one (``scenarios.refs``); else a UsageError naming the known."""
    return refs.canonical(name, SCENARIOS)


def get_scenario(name: str) -> AnyScenario:
    """A fresh instance of the scenario called ``name``."""
    return refs.build(name, SCENARIOS)
