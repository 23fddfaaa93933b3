"""``sim2human fidelity RUN_DIR``: every simulator family of a run against real patients' speech.

Writes ``fidelity.json`` and ``fidelity.md`` into the run (``sim2human report`` then includes
this measurement instead of its cheaper lexical one) and prints the table.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from sim2human.errors import RunDirError

RunDirArg = Annotated[Path, typer.Argument(help="A study directory or one sub-run directory.")]
DataOpt = Annotated[
    Path | None,
    typer.Option("--data", help="ACI-Bench folder (default: $SIM2HUMAN_DATA, ../shared/data)."),
]
EmbedderOpt = Annotated[
    str, typer.Option("--embedder", help="auto | minilm | lexical (auto: MiniLM if installed).")
]
CapOpt = Annotated[
    int, typer.Option("--cap", min=20, max=1_000_000, help="User turns sampled per family.")
]


def fidelity(
    run_dir: RunDirArg, data: DataOpt = None, embedder: EmbedderOpt = "auto", cap: CapOpt = 300
) -> None:
    """Measure how far each simulator family's user turns are from human patients' turns."""
    from sim2human.diagnostics.rundir import load_run_dir
    from sim2human.errors import UsageError
    from sim2human.report import fidelity as fid

    if embedder not in ("auto", "minilm", "lexical"):
        raise UsageError(f"--embedder {embedder!r}: use auto, minilm or lexical")
    run = load_run_dir(run_dir, None)
    episodes = fid.run_episodes(run)
    if not episodes:
        raise RunDirError(f"{run_dir}: no evaluation episodes to measure")
    err = Console(stderr=True)
    with err.status(f"embedding up to {cap} user turns per family"):
        result = fid.measure(
            episodes,
            cap=cap,
            embedder=embedder,  # type: ignore[arg-type]
            data=str(data) if data is not None else None,
        )
    (run_dir / fid.FIDELITY_JSON).write_text(result.model_dump_json(indent=1), encoding="utf-8")
    (run_dir / "fidelity.md").write_text("\n".join(fid.markdown(result)), encoding="utf-8")
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
    out.print(f"written: {run_dir / fid.FIDELITY_JSON} (sim2human report includes it)")
