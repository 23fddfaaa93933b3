"""The summary a run's outputs share: its tables (``report.tables``) and each condition's
verdict line (``report.verdicts``), computed once per report, stored in ``report.json``
(``summary``) and rendered by the terminal, ``report.md`` and ``report.html``; with the rule gold
was scored under (``metrics.record_rule``), read from the run's evaluation episodes."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sim2human.diagnostics.analyse import Diagnosis
from sim2human.diagnostics.rundir import RunDir
from sim2human.experiments.study.results import StudyResult
from sim2human.metrics.record_rule import record_rule_line
from sim2human.report.tables import Table, numbers, summary_tables
from sim2human.report.verdicts import POOLED, VerdictLine, verdict_lines

KEY = "summary"
"""Its key in report.json."""


@dataclass(frozen=True)
class Summary:
    tables: tuple[Table, ...]
    verdicts: tuple[VerdictLine, ...] = ()
    verdict_note: str = ""
    record_rule: str = ""
    """Which record gold graded (``metrics.record_rule``); empty when no episodes were read."""

    def table(self, key: str) -> Table | None:
        return next((t for t in self.tables if t.key == key), None)

    def dump(self) -> dict[str, Any]:
        return {
            "tables": [t.dump() for t in self.tables],
            "verdicts": [v.dump() for v in self.verdicts],
            "verdict_note": self.verdict_note,
            "record_rule": self.record_rule,
        }

    @classmethod
    def load(cls, raw: dict[str, Any]) -> Summary:
        return cls(
            tuple(Table.load(t) for t in raw.get("tables", [])),
            tuple(VerdictLine.load(v) for v in raw.get("verdicts", [])),
            str(raw.get("verdict_note", "")),
            str(raw.get("record_rule", "")),
        )


def summarise(d: Diagnosis | None, run: RunDir | None, study: StudyResult | None = None) -> Summary:
    """The summary of a diagnosed run (``d``), or of a study alone (``study``: no verdicts)."""
    study = study if d is None else d.study
    rows = numbers(study, run)
    lines = tuple(verdict_lines(d)) if d is not None else ()
    pooled = bool(lines) and any(r.real_gold is not None for r in rows)
    evals = [] if run is None else [e for sub in run.sub_runs for e in sub.evals]
    rule = record_rule_line(evals)
    return Summary(tuple(summary_tables(rows)), lines, POOLED if pooled else "", rule)


def stored_summary(report_json: Path) -> Summary | None:
    """The summary a written report stored; None when it stored none (an older report)."""
    try:
        raw = json.loads(report_json.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    found = raw.get(KEY) if isinstance(raw, dict) else None
    return Summary.load(found) if isinstance(found, dict) else None
