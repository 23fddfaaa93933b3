"""The parts of ``report.html`` that ``report.md`` also holds, rendered from the same source:
the shared tables (``report.tables``) from their cells, and the study's prose sections
(findings, LLM members, real patients, adaptive ensembles, stress) from their Markdown lines.

The Markdown is turned into HTML by ``markdown-it-py`` (already installed: rich depends on it)
with raw HTML off, so text from a run directory stays text; images it links under the report's
folder are embedded as data URIs, so the page stays self-contained.
"""

from __future__ import annotations

import base64
import html
import re
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import unquote

from markdown_it import MarkdownIt

from sim2human.report.tables import Table

_IMG = re.compile(r'src="([A-Za-z0-9_./+%-]+\.png)"')


def html_table(t: Table, level: int = 2) -> str:
    """``t`` as an HTML section: a heading, the table (first column left-aligned), its note."""
    e = html.escape
    head = "".join(
        f'<th class="l">{e(c)}</th>' if i == 0 else f"<th>{e(c)}</th>"
        for i, c in enumerate(t.columns)
    )
    body = "".join(
        "<tr>"
        + "".join(
            f'<td class="l">{e(c)}</td>' if i == 0 else f"<td>{e(c)}</td>"
            for i, c in enumerate(row)
        )
        + "</tr>\n"
        for row in t.rows
    )
    note = f'<p class="note">{e(t.note)}</p>' if t.note else ""
    return (
        f'<section class="summary" id="table-{e(t.key)}"><h{level}>{e(t.title)}</h{level}>\n'
        f"<table>\n<tr>{head}</tr>\n{body}</table>\n{note}</section>\n"
    )


def md_to_html(lines: Sequence[str], folder: Path) -> str:
    """Markdown ``lines`` as HTML, PNGs they link inside ``folder`` embedded."""
    parser = MarkdownIt("commonmark", {"html": False}).enable("table")
    page = parser.render("\n".join(lines) + "\n")
    return _IMG.sub(lambda m: _embedded(m, folder), page)


def _embedded(m: re.Match[str], folder: Path) -> str:
    path = (folder / unquote(m.group(1))).resolve()
    inside = folder.resolve() in path.parents
    if not inside or not path.is_file():
        return 'src=""'
    return f'src="data:image/png;base64,{base64.b64encode(path.read_bytes()).decode("ascii")}"'
