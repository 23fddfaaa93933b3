"""``sim2human report RUN_DIR``: write report.html, report.md and report.json into a run, from
what it stores; and what ``sim2human study`` does once ``study.json`` is written.

``--out DIR`` writes them (and a diagnosis it had to take) into DIR and only reads the run: an
archived run this user cannot write, or a study still running, which is diagnosed afresh from
the sub-runs that have finished (``cli/reading.py``). Without ``--out`` such a run is refused in
one line that says to give it."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

from sim2human.cli.options import ScenarioPathOpt
from sim2human.cli.output import Output, QuietOpt
from sim2human.cli.progress import Steps, steps

if TYPE_CHECKING:
    from sim2human.experiments.study.results import StudyResult
    from sim2human.report.html import Written

RunDirArg = Annotated[Path, typer.Argument(help="A study directory or one sub-run directory.")]
ConditionOpt = Annotated[
    str | None, typer.Option("--condition", help="Only this condition (all its seeds).")
]
OutOpt = Annotated[
    Path | None,
    typer.Option(
        "--out", help="Write the report into this folder, not the run (read-only or running)."
    ),
]


def finish_study(
    study: StudyResult, out: Path, console: Console, *, workers: int | None = None
) -> None:
    """Diagnose the finished study once (``diagnosis.json``, replaying conversations for the
    exploit finder; its conditions side by side in up to ``workers`` processes, default every
    core, as the study's sub-runs), then render its reports from the stored files
    (``runner.run_study``'s ``finish``: the run is still locked)."""
    from sim2human.store.lock import run_lock

    with run_lock(out, "study"), steps(console, out, "reading the run") as bar:
        _diagnose_and_write(out, None, console, bar, diagnose=True, workers=workers)


def report(
    run_dir: RunDirArg,
    condition: ConditionOpt = None,
    out_dir: OutOpt = None,
    quiet: QuietOpt = False,
    scenario_path: ScenarioPathOpt = None,
) -> None:
    """Write a run's self-contained HTML report (plus markdown and JSON) from its stored files.

    A run that was never diagnosed (no diagnosis.json) is diagnosed once first and the result
    stored; `sim2human diagnose RUN_DIR` diagnoses again (say, with other thresholds). With
    --out DIR the files go into DIR and the run is only read: a read-only run, or a study still
    running (diagnosed afresh from what has finished)."""
    from sim2human.cli.reading import noter, reading
    from sim2human.diagnostics.stored import diagnosis_path

    output = Output(quiet=quiet)
    out, err = output.table_console(Console()), output.progress_console()
    with reading(run_dir, out_dir, "report", noter(err, run_dir)) as r:
        if r.store is None:
            raise r.refusal("--out DIR")
        folders = {run_dir, r.store}
        stored = any(diagnosis_path(f, c).exists() for f in folders for c in {None, condition})
        fresh = not stored or r.access.writer is not None
        first = "reporting"
        if fresh:
            first = (
                "diagnosing what has finished" if stored else "not diagnosed yet; diagnosing once"
            )
            first = f"{run_dir}: {first}"
        with steps(err, run_dir, first) as bar:
            into = None if r.store == run_dir else r.store
            written = _diagnose_and_write(
                run_dir, condition, err, bar, diagnose=fresh, out_dir=into
            )
    from sim2human.report.terminal import print_summary

    d = written.diagnosis
    print_summary(out, written.summary)
    if d.problems:
        err.print(
            f"[yellow]partial report[/]: {len(d.problems)} problem(s) in {run_dir}, "
            "listed in the report"
        )
    out.print(f"report: {written.html}", highlight=False)


def _diagnose_and_write(
    run_dir: Path,
    condition: str | None,
    console: Console,
    status: Steps,
    *,
    diagnose: bool,
    out_dir: Path | None = None,
    workers: int | None = None,
) -> Written:
    """Diagnose (when asked; in up to ``workers`` processes, at most this machine's cores) and
    write the reports (into ``out_dir``, default the run), from one read of the run directory:
    reading its episodes is most of what either costs. The caller holds the run's lock (its read
    lock, with ``out_dir``)."""
    from sim2human.diagnostics.rundir import load_run_dir
    from sim2human.diagnostics.stored import diagnose_run
    from sim2human.report.html import write_report

    cores = min(workers or os.cpu_count() or 1, os.cpu_count() or 1)  # this machine's, not Ray's
    run = None
    if diagnose:
        run = load_run_dir(run_dir, condition)
        status.update("diagnosing")
        diagnose_run(
            run_dir,
            condition,
            on_step=status.update,
            run=run,
            out_dir=out_dir,
            workers=cores,
        )
    status.update("writing the report")
    return write_report(
        run_dir, condition=condition, console=console, run=run, out_dir=out_dir, workers=cores
    )
