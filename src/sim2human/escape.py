"""Text from a run directory, escaped for Markdown: ``md`` and ``md_code``.

Names, phrasings, quirks, reasons and paths in a report come from a run directory, which may be
shared or downloaded, so every Markdown file sim2human writes escapes such text: ``<``, ``>``
and ``&`` as HTML entities (a Markdown viewer renders raw HTML, so ``<script>`` must not reach
it), ``|`` so a table cell stays one cell, ``](`` so no inline link is made, and line breaks as
spaces (a table row is one line). HTML pages escape with jinja2's autoescape instead. It sits at
the bottom layer so that ``human.md`` (experiments) and the reports (``report.format``
re-exports it) share the one escape.
"""

from __future__ import annotations

import re

_MD = {"&": "&amp;", "<": "&lt;", ">": "&gt;", "|": "\\|", "\n": " ", "\r": " ", "](": "]\\("}
_SPECIAL = re.compile(r"[&<>|\n\r]|\]\(")
_PLAIN = re.compile(r"[^`&<>|\n\r]*")


def md(text: object) -> str:
    """``text`` as Markdown text or a table cell: no raw HTML, no extra cell, no link."""
    return _SPECIAL.sub(lambda m: _MD[m.group()], str(text))


def md_code(text: object) -> str:
    """``text`` as inline code (in backticks) when it holds nothing to escape, else escaped
    (``md``) without backticks: inside a code span an entity would show as typed."""
    s = str(text)
    return f"`{s}`" if _PLAIN.fullmatch(s) else md(s)
