"""A progress bar over the named steps of reading, diagnosing and reporting a run.

``report`` (and the report a study writes when it finishes) spends tens of seconds reading
episodes, replaying conversations per condition and drawing plots, and showed only a spinner,
which a pipe or a CI log never sees. ``Steps`` keeps the ``update(text)`` call of rich's
``Status`` that the diagnosis already reports its steps through, and draws the rich progress
bar the study and ``eval-agent`` use: one tick per step, with its name and the elapsed time.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from sim2human.store.layout import CONDITIONS

FIXED_STEPS = 4
"""Reading the run, diagnosing, measuring diversity, writing the report; plus one per
condition (its replayed conversations)."""


def expected_steps(run_dir: Path) -> int:
    """The steps a report of ``run_dir`` takes: the fixed ones and one per condition."""
    conditions = run_dir / CONDITIONS
    n = sum(1 for p in conditions.iterdir() if p.is_dir()) if conditions.is_dir() else 1
    return FIXED_STEPS + n


class Steps:
    """``update(what)`` starts the step ``what``: the bar ticks once per new step."""

    def __init__(self, progress: Progress, total: int) -> None:
        self._progress = progress
        self._task = progress.add_task("reading the run", total=total)
        self._seen = 0

    def update(self, what: str) -> None:
        total = self._progress.tasks[0].total or 0
        if self._seen >= total:  # more steps than expected: the bar grows, never overflows
            self._progress.update(self._task, total=self._seen + 1)
        if self._seen:
            self._progress.advance(self._task)
        self._seen += 1
        self._progress.update(self._task, description=what)

    def finish(self) -> None:
        task = self._progress.tasks[0]
        self._progress.update(self._task, completed=task.total, description="done")


@contextmanager
def steps(console: Console, run_dir: Path, first: str, label: str = "report") -> Iterator[Steps]:
    """A step bar on ``console`` (stderr; silent when the console is quiet)."""
    bar = Progress(
        TextColumn(f"[bold]{label}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.description}"),
        TimeElapsedColumn(),
        console=console,
        transient=False,
    )
    with bar:
        s = Steps(bar, expected_steps(run_dir))
        s.update(first)
        try:
            yield s
        except BaseException:
            bar.live.transient = True  # an error stays one line: no half-done bar above it
            raise
        s.finish()
