"""``sim2human scenario check FILE`` and ``sim2human scenario new NAME``: scenario files.

``check`` loads the file (every problem is one ``FILE:LINE: key.path: what`` line, exit 2), then
runs the contract checks on what it builds: the scenario's own (``checks.check_scenario``), a
persona member of every built-in persona family talking to it, the reference agent playing it,
and whether that agent solves it against cooperative callers. Exit 1 on a violation.

``new`` writes a commented skeleton (a restaurant booking) and its vocabulary file: it passes
``check`` and runs a study as it is, to be edited into one's own task.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from sim2human.agents.scripted import ScriptedAgent
from sim2human.checks import CheckReport, check_agent, check_scenario, check_simulator
from sim2human.errors import UsageError
from sim2human.inputs import output_dir
from sim2human.outputs import write_all
from sim2human.rollout.checks import solvable
from sim2human.scenarios.base import Scenario
from sim2human.scenarios.file_load import load_scenario_file
from sim2human.simulators import build_simulator
from sim2human.simulators.base import QuirkPool, Simulator, SimulatorSpec
from sim2human.simulators.families import HELDOUT_FAMILIES, TRAIN_FAMILIES, get_family

scenario_app = typer.Typer(
    no_args_is_help=True, help="Write and check scenario files (a task as data)."
)
SOLVE_CALLS = 8
"""Calls the reference agent plays against a cooperative member: it must win half of them."""
SKELETON = ("scenario.yaml", "areas.txt")


def contract_reports(scenario: Scenario, max_turns: int) -> list[CheckReport]:
    """The contract checks a scenario must pass to be played by every piece."""
    pool = QuirkPool.of(scenario)
    specs = [get_family(f).sample(0, pool) for f in (*TRAIN_FAMILIES, *HELDOUT_FAMILIES)]
    reports = [check_scenario(scenario)]
    reports += [check_simulator(_maker(s, scenario), scenario) for s in specs]
    agent = ScriptedAgent(scenario)
    reports.append(check_agent(agent, scenario, specs, max_turns=max_turns))

    def solves() -> str | None:
        ok, wins, played = solvable(specs[0], scenario, SOLVE_CALLS, 0.5, 0, max_turns=max_turns)
        return None if ok else f"it succeeded in {wins} of {played} calls"

    report = CheckReport("scripted", "reference agent")
    report.run(f"succeeds in half of {SOLVE_CALLS} calls with a {specs[0].family} caller", solves)
    return [*reports, report]


def _maker(spec: SimulatorSpec, scenario: Scenario) -> Callable[[], Simulator]:
    return lambda: build_simulator(spec, scenario)


@scenario_app.command("check")
def check(
    file: Annotated[Path, typer.Argument(help="The scenario file (YAML).")],
    max_turns: Annotated[int, typer.Option(min=4, max=200, help="Turns per checked call.")] = 30,
) -> None:
    """Validate a scenario file and run the contract checks on the scenario it makes."""
    scenario = load_scenario_file(file)
    console = Console()
    console.print(f"{file}: valid ({len(scenario.fields)} fields, {len(scenario.acts)} acts)")
    reports = contract_reports(scenario, max_turns)
    for report in reports:
        for line in report.lines():
            style = "red" if "FAIL" in line or "violation" in line else None
            console.print(line, style=style, highlight=False, soft_wrap=True)
    if not all(r.ok for r in reports):
        raise typer.Exit(1)


@scenario_app.command("new")
def new(
    name: Annotated[str, typer.Argument(help="The scenario's name (its file is NAME.yaml).")],
    out: Annotated[Path, typer.Option("--out", help="Folder to write it in.")] = Path("."),
) -> None:
    """Write a commented scenario skeleton that passes `check` and runs a study."""
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}", name):
        raise UsageError(f"{name!r}: a name is letters, digits, '_', '.', '-' (at most 100)")
    source = resources.files("sim2human.scenarios.data").joinpath("skeleton")
    files = {
        out / f"{name}.yaml": source.joinpath(SKELETON[0]).read_text(encoding="utf-8"),
        out / SKELETON[1]: source.joinpath(SKELETON[1]).read_text(encoding="utf-8"),
    }
    if there := [str(p) for p in files if p.exists() or p.is_symlink()]:
        raise UsageError(f"{there[0]}: already exists; nothing written (choose another --out)")
    output_dir(out, "folder (--out)")
    write_all([(path, text.replace("__NAME__", name)) for path, text in files.items()])
    typer.echo(f"wrote {out / f'{name}.yaml'} and {out / SKELETON[1]}")
    typer.echo(f"next: sim2human scenario check {out / f'{name}.yaml'}")
