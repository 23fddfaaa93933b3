"""``sim2human report RUN_DIR``: write report.html, report.md and report.json into a run, from
what it stores; and what ``sim2human study`` does once ``study.json`` is written."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

if TYPE_CHECKING:
    from rich.status import Status

    from sim2human.experiments.results import StudyResult
    from sim2human.report.html import Written

RunDirArg = Annotated[Path, typer.Argument(help="A study directory or one sub-run directory.")]
ConditionOpt = Annotated[
    str | None, typer.Option("--condition", help="Only this condition (all its seeds).")
]


def finish_study(study: StudyResult, out: Path, console: Console) -> None:
    """Diagnose the finished study once (``diagnosis.json``, replaying conversations for the
    exploit finder), then render its reports from the stored files (``runner.run_study``'s
    ``finish``: the run is still locked)."""
    from sim2human.lock import run_lock

    with run_lock(out, "study"), console.status("reading the run") as status:
        _diagnose_and_write(out, None, console, status, diagnose=True)


def report(run_dir: RunDirArg, condition: ConditionOpt = None) -> None:
    """Write a run's self-contained HTML report (plus markdown and JSON) from its stored files.

    A run that was never diagnosed (no diagnosis.json) is diagnosed once first and the result
    stored; `sim2human diagnose RUN_DIR` diagnoses again (say, with other thresholds)."""
    from sim2human.diagnostics.stored import diagnosis_path
    from sim2human.inputs import existing_dir
    from sim2human.lock import run_lock

    out, err = Console(), Console(stderr=True)
    existing_dir(run_dir, "run directory")
    note = lambda msg: err.print(f"note: {run_dir}: {msg}", soft_wrap=True)  # noqa: E731
    with run_lock(run_dir, "report", note=note):
        undiagnosed = not any(diagnosis_path(run_dir, c).exists() for c in {None, condition})
        first = f"{run_dir}: not diagnosed yet; diagnosing once" if undiagnosed else "reporting"
        with err.status(first) as status:
            written = _diagnose_and_write(run_dir, condition, err, status, diagnose=undiagnosed)
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


def _diagnose_and_write(
    run_dir: Path, condition: str | None, console: Console, status: Status, *, diagnose: bool
) -> Written:
    """Diagnose (when asked) and write the reports, from one read of the run directory: reading
    its episodes is most of what either costs. The caller holds the run's lock."""
    from sim2human.diagnostics.rundir import load_run_dir
    from sim2human.diagnostics.stored import diagnose_run
    from sim2human.report.html import write_report

    run = None
    if diagnose:
        run = load_run_dir(run_dir, condition)
        status.update("diagnosing")
        diagnose_run(run_dir, condition, on_step=status.update, run=run)
    status.update("writing the report")
    return write_report(run_dir, condition=condition, console=console, run=run)
