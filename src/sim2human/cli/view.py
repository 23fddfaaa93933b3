"""``sim2human view RUN_DIR`` and ``sim2human compare RUN_A [RUN_B]``: the run viewer, written as
one self-contained HTML file (no server, no network: open it in any browser).

The file goes into the run (``view.html``, ``compare.html``) when this user may write the run,
else ``--out FILE.html`` is required; a run is only read (``cli/reading.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.table import Table

from sim2human import outputs
from sim2human.cli.options import ScenarioPathOpt
from sim2human.store.layout import COMPARE_HTML, VIEW_HTML

if TYPE_CHECKING:
    from sim2human.viewer.compare import Comparison

Note = Callable[[str], None]


RunDirArg = Annotated[Path, typer.Argument(help="A study directory or one sub-run directory.")]
OutOpt = Annotated[
    Path | None,
    typer.Option(
        "--out", help=f"The HTML file to write (default: RUN_DIR/{VIEW_HTML} when writable)."
    ),
]
ConditionOpt = Annotated[
    str | None, typer.Option("--condition", help="Only this condition's episodes (all seeds).")
]
FailedOpt = Annotated[
    bool, typer.Option("--only-failed", help="Only episodes whose gold was not achieved.")
]


def _write(run_dir: Path, out: Path | None, default: str, build: Callable[[Note], str]) -> Path:
    """Write the page ``build(note)`` returns where the module docstring says."""
    from sim2human.cli.reading import noter, reading

    note = noter(Console(stderr=True), run_dir)
    if out is not None:
        outputs.check_target(out)
    with reading(run_dir, out, "view", note, out_is_dir=False) as r:
        if r.store is None:
            raise r.refusal("--out FILE.html")
        target = out if out is not None else r.store / default
        outputs.check_target(target, inside=run_dir if r.into_run else None)
        html = build(note)
        outputs.write_text(target, html, inside=run_dir if r.into_run else None)
    return target


def view(
    run_dir: RunDirArg,
    out: OutOpt = None,
    condition: ConditionOpt = None,
    only_failed: FailedOpt = False,
    scenario_path: ScenarioPathOpt = None,
) -> None:
    """Write a run's viewer: its conversations in one self-contained HTML file.

    Every evaluation episode with the grader's reasons, filters (failures, exploits), the
    transcripts (the exploit finder's turns highlighted) and a generalisation matrix.

    Example: sim2human view runs/demo --only-failed --out failed.html"""
    from sim2human.viewer.build import build_view

    target = _write(
        run_dir,
        out,
        VIEW_HTML,
        lambda note: build_view(run_dir, note, condition=condition, only_failed=only_failed),
    )
    Console().print(f"viewer: {target}", highlight=False, soft_wrap=True)


def compare(
    run_a: RunDirArg,
    run_b: Annotated[
        Path | None, typer.Argument(help="A second run directory (or use --conditions).")
    ] = None,
    conditions: Annotated[
        tuple[str, str] | None,
        typer.Option(
            "--conditions",
            metavar="A B",
            help="Compare condition A (of RUN_A) with condition B (of RUN_B, else RUN_A).",
        ),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help=f"The HTML file to write (default: RUN_A/{COMPARE_HTML} when writable).",
        ),
    ] = None,
    scenario_path: ScenarioPathOpt = None,
) -> None:
    """Put two runs, or two conditions of one run, side by side (an HTML file).

    Proxy and gold with CIs, and the episodes (same member, same seed) whose outcome differs.

    Example: sim2human compare runs/demo --conditions frozen-small ensemble-uniform"""
    from sim2human.cli.reading import noter
    from sim2human.store.loading import existing_dir
    from sim2human.store.lock import read_lock
    from sim2human.viewer.build import build_compare

    names = list(conditions or ())
    if run_b is not None:
        existing_dir(run_b, "run directory")
    found: list[Table] = []

    def make(note: Note) -> str:
        if run_b is None or run_b.resolve() == run_a.resolve():
            html, comparisons = build_compare(run_a, None if run_b is None else run_a, names, note)
        else:
            with read_lock(run_b, note=noter(Console(stderr=True), run_b)):
                html, comparisons = build_compare(run_a, run_b, names, note)
        found.extend(_table(c) for c in comparisons)
        return html

    target = _write(run_a, out, COMPARE_HTML, make)
    console = Console()
    for table in found:
        console.print(table)
    console.print(f"compare: {target}", highlight=False, soft_wrap=True)


def _table(c: Comparison) -> Table:
    """Both sides' estimates, the difference of their means and the paired difference with its
    CI (``viewer.compare``), the populations' hashes beside them."""
    from sim2human.viewer.page import METRICS, delta, est, signed

    table = Table(
        title=f"{c.a.label} vs {c.b.label}: {c.differing} of {c.paired} pairs differ",
        caption=f"population {c.a.population or 'unknown'} vs {c.b.population or 'unknown'}; "
        "paired: B − A over the same member and seed [95% CI over members]",
    )
    for head in ("", c.a.label, c.b.label, "B − A", "paired B − A"):
        table.add_column(head, overflow="fold")
    for name, key in METRICS:
        ea, eb = getattr(c.ta, key), getattr(c.tb, key)
        paired = signed(c.diff[key]) if key in c.diff else "-"
        table.add_row(name, est(ea), est(eb), delta(ea, eb), paired)
    return table
