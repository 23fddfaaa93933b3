"""``sim2human export RUN_DIR``: stored episodes as OpenAI chats, ART trajectories or an SB3
replay buffer (see ``sim2human.integrations.export``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from sim2human.cli.options import finite


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
) -> None:
    """Write every stored episode in a format other trainers read (SFT/DPO, ART, SB3)."""
    from sim2human.integrations.export import export as write

    path, n = write(run_dir, format, out, split=split, min_gold=min_gold)
    Console().print(
        f"{n} {'transitions' if format == 'sb3-buffer' else 'episodes'}: {path}", highlight=False
    )
