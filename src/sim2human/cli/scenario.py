"""``sim2human scenario check FILE`` and ``sim2human scenario new NAME``: scenario files.

``check`` loads the file (every problem is one ``FILE:LINE: key.path: what`` line, exit 2), then
runs the contract checks on what it builds (``checks.crossing.check_everything``): the
scenario's own, every persona family and simulator kind on it, and the reference agent playing
and solving it. Exit 1 on a violation.

``new`` writes a commented skeleton (a restaurant booking) and its vocabulary file: it passes
``check`` and runs a study as it is, to be edited into one's own task.
"""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from sim2human.checks.crossing import check_everything
from sim2human.errors import UsageError
from sim2human.outputs import write_all
from sim2human.scenarios.files.load import load_scenario_file
from sim2human.store.loading import output_dir

scenario_app = typer.Typer(
    no_args_is_help=True, help="Write and check scenario files (a task as data)."
)
SKELETON = ("scenario.yaml", "areas.txt")


@scenario_app.command("check")
def check(
    file: Annotated[Path, typer.Argument(help="The scenario file (YAML).")],
    max_turns: Annotated[int, typer.Option(min=4, max=200, help="Turns per checked call.")] = 30,
) -> None:
    """Validate a scenario file and run the contract checks on the scenario it makes."""
    scenario = load_scenario_file(file)
    console = Console()
    console.print(f"{file}: valid ({len(scenario.fields)} fields, {len(scenario.acts)} acts)")
    reports = check_everything(scenario, max_turns=max_turns)
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
    source = resources.files("sim2human.scenarios").joinpath("skeleton")
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
