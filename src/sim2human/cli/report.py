"""``sim2human report RUN_DIR``: write report.html, report.md and report.json into a run."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

RunDirArg = Annotated[Path, typer.Argument(help="A study directory or one sub-run directory.")]
ConditionOpt = Annotated[
    str | None, typer.Option("--condition", help="Only this condition (all its seeds).")
]


def report(run_dir: RunDirArg, condition: ConditionOpt = None) -> None:
    """Diagnose a run and write its self-contained HTML report (plus markdown and JSON)."""
    from sim2human.report.html import write_report

    out, err = Console(), Console(stderr=True)
    written = write_report(run_dir, condition=condition, console=err)
    d = written.diagnosis
    for c in [*d.conditions, *d.reference]:
        colour = "red" if c.verdict.collapse else ("green" if c.verdict.checked else "yellow")
        out.print(f"[{colour}]{c.verdict.headline}[/]", highlight=False)
    if d.problems:
        err.print(
            f"[yellow]partial report[/]: {len(d.problems)} problem(s) in {run_dir}, "
            "listed in the report"
        )
    out.print(f"report: {written.html}", highlight=False)
