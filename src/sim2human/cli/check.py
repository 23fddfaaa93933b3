"""``sim2human check MODULE:NAME``: the contract checks (``sim2human.checks``) on your own piece.

NAME is a class or a function that makes one: called with no arguments, or with the scenario,
or (a simulator) with a spec and the scenario, whichever it takes. A simulator, agent or sampler
is checked on ``--scenario`` (any name a study's ``scenario:`` takes; by default the default
scenario), so a piece written for another task is checked on that task. A scenario gets its own
checks and every persona family, simulator kind and the reference agent on it
(``checks.crossing``), so what would crash a study on it fails here. Exit 0 when every check
passes, 1 on a violation, 2 when NAME cannot be found or made.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from sim2human.checks import CheckReport, check_agent, check_sampler, check_simulator, describe
from sim2human.checks.crossing import check_everything
from sim2human.errors import UsageError
from sim2human.rollout.conversation import MAX_TURNS
from sim2human.scenarios.catalog import DEFAULT_SCENARIO, get_scenario
from sim2human.scenarios.core import AnyScenario
from sim2human.scenarios.refs import allowing, import_module
from sim2human.simulators.base import QuirkPool, SimulatorSpec
from sim2human.simulators.families import TRAIN_FAMILIES, get_family


def load_target(target: str) -> Any:
    """``MODULE:NAME`` imported (the working directory is importable, as for ``python -m``: the
    user names their own code here); whatever the import raises is one line
    (``scenarios.refs.import_module``)."""
    module_name, sep, name = target.partition(":")
    if not sep or not module_name or not name:
        raise UsageError(f"{target!r}: expected MODULE:NAME, e.g. my_sims:PirateSimulator")
    with allowing(Path.cwd()):
        module = import_module(module_name, repr(target))
    obj: Any = module
    for part in name.split("."):
        if not hasattr(obj, part):
            raise UsageError(f"{target!r}: {module_name!r} has no {name!r}")
        obj = getattr(obj, part)
    return obj


def factory(obj: Any, scenario: AnyScenario, spec: SimulatorSpec) -> Callable[[], Any]:
    """A zero-argument maker of fresh instances of ``obj`` (an instance is used as it is)."""
    if not callable(obj) or not (inspect.isclass(obj) or inspect.isfunction(obj)):
        return lambda: obj
    for args in ((), (scenario,), (spec, scenario)):
        try:
            inspect.signature(obj).bind(*args)
        except TypeError:
            continue
        return lambda: obj(*args)
    raise UsageError(f"{obj!r}: cannot be called with (), (scenario) or (spec, scenario)")


def run_checks(obj: Any, scenario: AnyScenario, max_turns: int) -> list[CheckReport]:
    """The checks of ``obj``'s seam; a scenario's are its own and every family, kind and the
    reference agent on it (``checks.crossing``)."""
    pool = QuirkPool.of(scenario)
    spec = get_family(TRAIN_FAMILIES[0]).sample(0, pool)
    make = factory(obj, scenario, spec)
    sample = make()
    kind = describe(sample)
    if kind == "scenario":
        return check_everything(sample, max_turns=max_turns)
    if kind == "simulator":
        on = sample.scenario if hasattr(sample, "scenario") else scenario
        return [check_simulator(make, on)]
    if kind == "agent":
        specs = [get_family(f).sample(0, pool) for f in TRAIN_FAMILIES]
        return [check_agent(sample, scenario, specs, max_turns=max_turns)]
    if kind == "sampler":
        return [check_sampler(make, scenario, max_turns=max_turns)]
    raise UsageError(
        f"{type(sample).__name__}: not a scenario, simulator, agent or sampler "
        "(it has none of their methods)"
    )


def check(
    target: Annotated[str, typer.Argument(help="MODULE:NAME of your scenario, simulator, ...")],
    max_turns: Annotated[
        int, typer.Option(min=1, max=200, help="Turns per checked call.")
    ] = MAX_TURNS,
    scenario: Annotated[
        str,
        typer.Option(
            help="The task a simulator, agent or sampler is checked on: a scenario name, a "
            "scenario file or MODULE:Class, as a study's `scenario:` takes.",
        ),
    ] = DEFAULT_SCENARIO,
) -> None:
    """Run the contract checks on your own scenario, simulator, agent or sampler."""
    obj = load_target(target)
    with allowing(Path.cwd()):
        on = get_scenario(scenario)
    reports = run_checks(obj, on, max_turns)
    console = Console()
    for line in (line for report in reports for line in report.lines()):
        style = "red" if "FAIL" in line or "violation" in line else None
        console.print(line, style=style, highlight=False, soft_wrap=True)
    if not all(report.ok for report in reports):
        raise typer.Exit(1)
