"""The summary in the terminal: the shared tables (``report.tables``) drawn to fit 80 columns
and one verdict line per condition.

Compact rather than cut: a cell's confidence interval goes under its mean (``71`` over
``[60, 81]``) and headers wrap between words, so no cell is ever cropped to ``…``. The cell
text is the one ``report.md`` and ``report.html`` show; only the line break differs.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table as RichTable

from sim2human.report.summary import Summary
from sim2human.report.tables import Table
from sim2human.report.verdicts import CLEAN, COLLAPSED

SHOWN = ("gold", "handle_time", "spread")
"""The tables the terminal shows (report.md and report.html show them all)."""
COLOURS = {COLLAPSED: "red", CLEAN: "green"}


def stacked(cell: str) -> str:
    """``71 [60, 81]`` as ``71`` over ``[60, 81]``: the width of its interval, not of both."""
    mean, bracket, rest = cell.partition(" [")
    return f"{mean}\n[{rest}" if bracket else cell


def rich_table(t: Table) -> RichTable:
    out = RichTable(
        title=f"{t.title}", title_justify="left", box=box.MINIMAL, pad_edge=False, expand=False
    )
    for i, label in enumerate(t.columns):
        width = max((len(stacked(r[i]).split("\n")[-1]) for r in t.rows), default=1)
        if i == 0:
            out.add_column(label, justify="left", no_wrap=True, min_width=width)
        else:
            out.add_column(label, justify="right", min_width=min(width, 12))
    for row in t.rows:
        out.add_row(escape(row[0]), *(escape(stacked(c)) for c in row[1:]))
    return out


def verdict_table(s: Summary) -> RichTable:
    out = RichTable(title="Verdicts", title_justify="left", box=box.MINIMAL, pad_edge=False)
    out.add_column("condition", no_wrap=True)
    out.add_column("verdict")
    for v in s.verdicts:
        colour = COLOURS.get(v.word, "yellow")
        out.add_row(escape(v.condition), f"[{colour}]{v.word}[/]: {escape(v.reason)}")
    return out


def print_summary(console: Console, s: Summary, shown: Sequence[str] = SHOWN) -> None:
    """The shared tables ``shown``, then the verdicts (when the run was diagnosed)."""
    for key in shown:
        t = s.table(key)
        if t is not None and t.rows:
            console.print(rich_table(t))
    if s.record_rule:
        console.print(escape(s.record_rule), highlight=False)
    if s.verdicts:
        console.print(verdict_table(s))
    if s.verdict_note:
        console.print(escape(s.verdict_note), highlight=False)
