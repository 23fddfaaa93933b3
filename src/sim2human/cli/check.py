"""``sim2human check MODULE:Class``: the contract checks (``sim2human.checks``) on your own
scenario, simulator or agent, with a readable report; exit 1 on a violation.

A scenario class is built with no arguments; a simulator class as ``Class(spec, scenario)`` (as
the built-in kinds are) on a ``cooperative`` member of the intake scenario; an agent class as
``Class(scenario)``, against ``persona`` members.
"""

from __future__ import annotations

import importlib
from typing import Annotated, Any

import typer
from rich.console import Console

from sim2human.checks import check_agent, check_scenario, check_simulator, describe
from sim2human.errors import UsageError
from sim2human.scenarios.catalog import get_scenario
from sim2human.simulators import build_simulator
from sim2human.simulators.base import QuirkPool, Simulator
from sim2human.simulators.families import get_family


def load_target(target: str) -> Any:
    """``package.module:Class`` -> the class (one clear error naming what is wrong)."""
    module_name, sep, name = target.partition(":")
    if not sep or not module_name or not name:
        raise UsageError(f"{target!r}: expected MODULE:Class, e.g. mypkg.users:MyUser")
    try:
        module = importlib.import_module(module_name)
    except ImportError as err:
        raise UsageError(f"{target!r}: cannot import {module_name!r} ({err})") from None
    if not hasattr(module, name):
        raise UsageError(f"{target!r}: module {module_name!r} has no {name!r}")
    return getattr(module, name)


def run_checks(target: str, scenario_name: str) -> tuple[str, list[str]]:
    cls = load_target(target)
    kind = describe(cls)
    scenario = get_scenario(scenario_name)
    spec = get_family("cooperative").sample(0, QuirkPool.from_acts(scenario.acts))
    if kind == "scenario":
        return kind, check_scenario(cls())
    if kind == "simulator":

        def make() -> Simulator:
            built: Simulator = cls(spec, scenario)
            return built

        return kind, check_simulator(make, scenario)
    if kind == "agent":
        return kind, check_agent(cls(scenario), scenario, lambda: build_simulator(spec, scenario))
    raise UsageError(f"{target!r}: neither a scenario, a simulator nor an agent")


def check(
    target: Annotated[
        str, typer.Argument(help="MODULE:Class of your scenario, simulator or agent.")
    ],
    scenario: Annotated[
        str, typer.Option("--scenario", help="Scenario to check a simulator or agent on.")
    ] = "intake",
) -> None:
    """Check your own scenario, simulator or agent against its contract (exit 1 on a violation)."""
    console = Console()
    kind, problems = run_checks(target, scenario)
    if not problems:
        console.print(f"ok: {target} keeps the {kind} contract", highlight=False)
        return
    console.print(f"{target} breaks the {kind} contract:", highlight=False)
    for p in problems:
        console.print(f"  - {p}", highlight=False)
    raise typer.Exit(1)
