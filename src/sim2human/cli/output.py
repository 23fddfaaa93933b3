"""``--json`` and ``--quiet``: what a long verb prints, and where.

With ``--json`` stdout carries one JSON document and nothing else (the numbers the table would
show, from the same table model: ``report.tables``), so ``sim2human study X --json | jq`` works;
progress and notes stay on stderr. With ``--quiet`` there is no progress, no note and no table;
errors are still printed (``cli.app.main`` prints them). Both together: the JSON document only.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console

from sim2human.store.layout import REPORT_HTML, REPORT_JSON, REPORT_MD, STUDY_JSON

if TYPE_CHECKING:
    from sim2human.report.summary import Summary

JsonOpt = Annotated[
    bool,
    typer.Option(
        "--json",
        help="Print one JSON document on stdout (the numbers the table shows) and nothing "
        "else there; progress goes to stderr.",
    ),
]
QuietOpt = Annotated[
    bool,
    typer.Option(
        "--quiet", "-q", help="No progress bar, notes or table; errors are still printed."
    ),
]


@dataclass(frozen=True)
class Output:
    """How one command prints: a table console, a progress console and the JSON document."""

    as_json: bool = False
    quiet: bool = False

    def table_console(self, console: Console | None = None) -> Console:
        """Where tables and result lines go: ``console`` (default: stdout, 120 columns when
        it is not a terminal), or a silent one under ``--json`` or ``--quiet``."""
        if self.as_json or self.quiet:
            return Console(quiet=True)
        if console is not None:
            return console
        out = Console()
        return out if out.is_terminal else Console(width=120)

    def progress_console(self, console: Console | None = None) -> Console:
        """Where progress bars, spinners and notes go: stderr, silent under ``--quiet``."""
        if self.quiet:
            return Console(stderr=True, quiet=True)
        return console if console is not None else Console(stderr=True)

    def emit(self, document: dict[str, Any]) -> None:
        """The JSON document on stdout, under ``--json``; nothing otherwise."""
        if self.as_json:
            sys.stdout.write(json.dumps(document, indent=2, default=_plain) + "\n")
            sys.stdout.flush()


def _plain(value: object) -> object:
    """Paths as text; anything else JSON cannot hold as its ``str``."""
    return str(value) if isinstance(value, Path) else repr(value)


def study_document(summary: Summary, run_dir: Path) -> dict[str, Any]:
    """A finished study under ``--json``: its summary tables and verdicts (as ``report.json``
    stores them) and where its files are."""
    return {
        "run_dir": str(run_dir),
        "files": {
            "study": str(run_dir / STUDY_JSON),
            "report_html": str(run_dir / REPORT_HTML),
            "report_md": str(run_dir / REPORT_MD),
            "report_json": str(run_dir / REPORT_JSON),
        },
        **summary.dump(),
    }
