#!/usr/bin/env python3
"""The proxy-vs-gold table of a run, as Markdown: ``score_table.py RUN_DIR``.

A thin caller of the shared tables (``report.tables``): for a scenario that leads with its
score (``gold_metric: score``, negotiation) the gold columns are the mean ``Outcome.score`` with
95% CIs and success beside them, as the terminal, report.md and report.html show them.
"""

from __future__ import annotations

import sys
from pathlib import Path

from sim2human.diagnostics.rundir import load_run_dir
from sim2human.experiments.study.results import load_study_result
from sim2human.report.markdown import md_table
from sim2human.report.tables import gold_table, numbers
from sim2human.store.layout import STUDY_JSON


def main(run: Path) -> None:
    study = load_study_result(run) if (run / STUDY_JSON).is_file() else None
    print("\n".join(md_table(gold_table(numbers(study, load_run_dir(run))))))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
