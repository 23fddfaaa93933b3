"""A finished study's reports: report.md (with the adaptive section) and report.html."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console

from sim2human.report.adaptive import write_adaptive
from sim2human.report.html import write_report
from sim2human.report.markdown import write_markdown


def write_study_reports(study: dict[str, Any], out: Path, console: Console) -> None:
    """Write ``out``'s reports from its ``study.json`` contents (``runner.run_study``'s finish)."""
    report = write_markdown(study, out)
    if (section := write_adaptive(study, out)) is not None:  # appended to report.md
        report.write_text(report.read_text() + "\n" + section.read_text(), encoding="utf-8")
    write_report(out, console=console)  # report.html; report.md gains the diagnostics
