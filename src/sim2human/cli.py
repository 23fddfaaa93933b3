"""The ``sim2human`` command."""

from __future__ import annotations

import sys
from collections.abc import Sequence

import typer

from sim2human import __version__

app = typer.Typer(add_completion=False, no_args_is_help=True, help=__doc__)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"sim2human {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True),
) -> None:
    """Train and test conversational agents against populations of simulated users."""


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code (tests call it in-process)."""
    try:
        app(args=list(argv) if argv is not None else sys.argv[1:], standalone_mode=False)
    except typer.Exit as done:
        return done.exit_code
    return 0
