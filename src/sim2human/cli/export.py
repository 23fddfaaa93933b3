"""``sim2human export RUN_DIR``: stored episodes as OpenAI chats, ART trajectories or an SB3
replay buffer (see ``sim2human.integrations.export``).

The run is only read (``cli/reading.py``): a study still running is exported as far as it has
got, with a warning; a file written into the run (the default target) needs the writer's lock,
so a read-only or running run is refused in one line that says to give ``--out FILE``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from sim2human.cli.options import ScenarioPathOpt, finite
from sim2human.store.layout import export_name


def export(
    run_dir: Annotated[Path, typer.Argument(help="A study directory or one sub-run directory.")],
    format: Annotated[
        str, typer.Option("--format", help="openai-chat, art or sb3-buffer.")
    ] = "openai-chat",
    split: Annotated[str, typer.Option(help="all, train or heldout members.")] = "all",
    min_gold: Annotated[
        float | None,
        typer.Option(
            "--min-gold",
            parser=finite(0.0, 1.0),
            metavar="FLOAT",
            help="Keep episodes with gold >= this.",
        ),
    ] = None,
    out: Annotated[Path | None, typer.Option(help="Output file (default: in RUN_DIR).")] = None,
    scenario_path: ScenarioPathOpt = None,
) -> None:
    """Write every stored episode in a format other trainers read (SFT/DPO, ART, SB3)."""
    from sim2human.cli.reading import noter, reading
    from sim2human.errors import UsageError
    from sim2human.integrations.export import FORMATS, SUFFIX
    from sim2human.integrations.export import export as write
    from sim2human.outputs import check_target

    if format not in FORMATS:
        raise UsageError(f"--format must be one of {', '.join(FORMATS)}, not {format!r}")
    err = Console(stderr=True)
    warn = noter(err, run_dir, "[yellow]warning[/]")
    with reading(run_dir, out, "export", warn, out_is_dir=False) as r:
        if r.store is None:
            raise r.refusal("--out FILE")
        target = out or run_dir / export_name(format, SUFFIX[format])
        check_target(target, inside=run_dir if r.into_run else None)
        path, n = write(run_dir, format, target, split=split, min_gold=min_gold, warn=warn)
    Console().print(
        f"{n} {'transitions' if format == 'sb3-buffer' else 'episodes'}: {path}", highlight=False
    )
