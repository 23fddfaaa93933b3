"""``sim2human fidelity RUN_DIR``: every simulator family of a run against real people's speech
(the scenario's human corpus: ACI-Bench patients for intake, MultiWOZ callers for support; a
scenario without one is a usage error naming it).

Writes ``fidelity.json`` and ``fidelity.md`` into the run (``sim2human report`` then includes
this measurement instead of its cheaper lexical one) and prints the table. A run it may not
write (read-only to this user, or a study still running) is measured all the same: the table
is printed and stored only with ``--out DIR`` (``cli/reading.py``).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.table import Table

from sim2human.cli.options import ScenarioPathOpt
from sim2human.errors import RunDirError
from sim2human.store.layout import FIDELITY_JSON, FIDELITY_MD

if TYPE_CHECKING:
    from sim2human.report.fidelity import Fidelity

RunDirArg = Annotated[Path, typer.Argument(help="A study directory or one sub-run directory.")]
DataOpt = Annotated[
    Path | None,
    typer.Option(
        "--data",
        help="The scenario's human corpus folder: ACI-Bench for intake, MultiWOZ 2.1 for support "
        "(default: $SIM2HUMAN_DATA, ../shared/data).",
    ),
]
EmbedderOpt = Annotated[
    str, typer.Option("--embedder", help="auto | minilm | lexical (auto: MiniLM if installed).")
]
CapOpt = Annotated[
    int, typer.Option("--cap", min=20, max=1_000_000, help="User turns sampled per family.")
]
OutOpt = Annotated[
    Path | None,
    typer.Option(
        "--out", help="Store the measurement in this folder, not the run (read-only or running)."
    ),
]


def fidelity(
    run_dir: RunDirArg,
    data: DataOpt = None,
    embedder: EmbedderOpt = "auto",
    cap: CapOpt = 300,
    out_dir: OutOpt = None,
    scenario_path: ScenarioPathOpt = None,
) -> None:
    """Measure how far each simulator family's user turns are from real people's turns.

    Stores fidelity.json and fidelity.md in the run (in --out DIR instead when given); a run
    this user cannot write, or a study still running, is measured and printed, not stored."""
    from sim2human.cli.reading import noter, reading
    from sim2human.errors import UsageError

    if embedder not in ("auto", "minilm", "lexical"):
        raise UsageError(f"--embedder {embedder!r}: use auto, minilm or lexical")
    err = Console(stderr=True)
    with reading(run_dir, out_dir, "fidelity", noter(err, run_dir)) as r:
        if r.store is None:
            err.print(f"note: {r.unstored('the table')}", highlight=False, soft_wrap=True)
        result = _measure(run_dir, err, cap=cap, embedder=embedder, data=data)
        stored = _store(result, r.store, run_dir if r.into_run else None)
    _print(result, stored)


def _measure(
    run_dir: Path, err: Console, *, cap: int, embedder: str, data: Path | None
) -> Fidelity:
    from sim2human.diagnostics.rundir import load_run_dir
    from sim2human.report import fidelity as fid

    run = load_run_dir(run_dir, None)
    for problem in run.all_problems():  # a torn sub-run is left out, and said so, as diagnose
        err.print(f"warning: {problem}", highlight=False, soft_wrap=True, markup=False)
    episodes = fid.run_episodes(run)
    if not episodes:
        raise RunDirError(f"{run_dir}: no evaluation episodes to measure")
    with err.status(f"embedding up to {cap} user turns per family"):
        return fid.measure(
            episodes,
            run.scenario,
            cap=cap,
            embedder=embedder,  # type: ignore[arg-type]
            data=str(data) if data is not None else None,
        )


def _store(result: Fidelity, folder: Path | None, run: Path | None) -> Path | None:
    """fidelity.json and fidelity.md in ``folder`` (none: nothing stored); ``run`` when the
    folder lies in the run directory."""
    from sim2human.outputs import check_target, write_text
    from sim2human.report import fidelity as fid

    if folder is None:
        return None
    js, md = folder / FIDELITY_JSON, folder / FIDELITY_MD
    for target in (js, md):  # both checked before either is written
        check_target(target, inside=run)
    write_text(js, result.model_dump_json(indent=1), inside=run)
    write_text(md, "\n".join(fid.markdown(result)), inside=run)
    return js


def _print(result: Fidelity, stored: Path | None) -> None:
    from sim2human.report import fidelity as fid

    table = Table(title=f"fidelity to human speech ({result.embedder})", title_justify="left")
    for name, _ in fid.COLUMNS:
        table.add_column(name, justify="left" if name == "family" else "right")
    for row in result.rows:
        table.add_row(*fid.cells(row))
    out = Console()
    out.print(table)
    for family, shares in result.replay_shares.items():
        out.print(
            f"{family} replies: " + ", ".join(f"{k} {100 * v:.0f}%" for k, v in shares.items())
        )
    if stored is not None:
        out.print(f"written: {stored} (sim2human report includes it)", highlight=False)
