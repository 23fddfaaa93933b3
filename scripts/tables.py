#!/usr/bin/env python3
"""Write a run directory's measured tables into Markdown files, between marker comments.

    .venv/bin/python scripts/tables.py RUN_DIR --commit 6f35b7b [--into FILE ...]

Each file holds pairs of markers, ``<!-- tables:NAME -->`` and ``<!-- /tables:NAME -->``; the
script replaces what lies between them with the table NAME computed from RUN_DIR's
``study.json`` (read through ``StudyResult``, the model the command's own table reads), and
leaves everything else as it is. Hand-copied numbers go stale; these are regenerated from the
run they came from. Names: ``provenance`` (command, commit, machine, wall time), ``demo`` (the
table ``sim2human study`` prints), ``real-patients`` (each condition on the replayed visits)
and ``families`` (held-out gold per family). A run directory does not record the commit it
was measured at, hence ``--commit``.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Callable
from importlib import metadata
from pathlib import Path

from sim2human.errors import Sim2HumanError, UsageError
from sim2human.experiments.results import ConditionRow, StudyResult, load_study_result
from sim2human.metrics.outcomes import Estimate
from sim2human.outputs import write_text
from sim2human.report.format import est, md, pct

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_INTO = tuple(
    ROOT / p for p in ("README.md", "docs/results/collapse.md", "docs/results/real-patients.md")
)
MARKER = re.compile(r"(<!-- tables:([a-z-]+) -->\n)(.*?)(<!-- /tables:\2 -->)", re.DOTALL)


def _e(e: Estimate | None) -> str:
    return est(e, missing="-", sep=", ")


def _name(row: ConditionRow) -> str:
    return md(row.name) if row.episodes_trained else f"{md(row.name)} (reference)"


def _table(head: list[str], rows: list[list[str]]) -> str:
    align = ["---"] + ["---:"] * (len(head) - 1)
    lines = [head, align, *rows]
    return "".join("| " + " | ".join(cells) + " |\n" for cells in lines)


def demo_table(study: StudyResult) -> str:
    """The table ``sim2human study`` prints, same columns, as Markdown."""
    real = any(r.heldout_gold_real is not None for r in study.conditions)
    head = ["condition", "train proxy", "train gold", "held-out gold", "member std", "exploit"]
    head += ["real patients"] if real else []
    rows = []
    for r in study.all_rows:
        cells = [_name(r), _e(r.train_proxy), _e(r.train_gold), _e(r.heldout_gold)]
        cells += [pct(r.heldout_member_std), f"{pct(r.exploit_rate)}%"]
        cells += [_e(r.heldout_gold_real)] if real else []
        rows.append(cells)
    return _table(head, rows)


def _n(e: Estimate | None) -> str:
    return est(e, n=True, missing="-")


def real_patients_table(study: StudyResult) -> str:
    """Programmatic held-out gold beside gold, fields right and proxy on the replayed visits."""
    head = ["condition", "held-out gold, programmatic", "real patients: gold"]
    head += ["real patients: fields right", "real patients: proxy"]
    rows = [
        [
            _name(r),
            _n(r.heldout_gold_programmatic),
            _n(r.heldout_gold_real),
            _n(r.heldout_fields_real),
            _n(r.heldout_proxy_real),
        ]
        for r in study.all_rows
    ]
    return _table(head, rows)


def families_table(study: StudyResult) -> str:
    """Mean held-out gold per held-out family (%), one column a family."""
    families = sorted({f for r in study.all_rows for f in r.heldout_gold_by_family})
    rows = [
        [_name(r)] + [pct(r.heldout_gold_by_family.get(f)) for f in families]
        for r in study.all_rows
    ]
    return _table(["condition", *families], rows)


def machine() -> str:
    """This machine in words: CPU model, cores and torch version."""
    model = "unknown CPU"
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    try:
        torch = f", torch {metadata.version('torch')}"
    except metadata.PackageNotFoundError:
        torch = ""
    return f"{model}, {os.cpu_count()} cores{torch}"


def provenance(study: StudyResult, command: str, commit: str, where: str) -> str:
    seeds = len(study.seeds)
    trained = max((r.episodes_trained for r in study.conditions), default=0)
    return (
        f"Measured with `{command}` at commit `{commit}` on {where}: {seeds} seeds, "
        f"{trained} training episodes per agent, {study.wall_seconds:.0f} s wall; "
        "%, 95% cluster-bootstrap CIs.\n"
    )


def fill(text: str, tables: dict[str, str], where: str) -> str:
    """``text`` with every marked region replaced; an unknown name is an error."""

    def one(m: re.Match[str]) -> str:
        if m.group(2) not in tables:
            known = ", ".join(sorted(tables))
            raise UsageError(f"{where}: unknown table {m.group(2)!r} (known: {known})")
        return m.group(1) + tables[m.group(2)] + m.group(4)

    return MARKER.sub(one, text)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("run_dir", type=Path)
    p.add_argument("--commit", required=True, help="the commit the run was measured at")
    p.add_argument("--command", default="sim2human demo", help="the command that made the run")
    p.add_argument("--machine", default=None, help="where it ran (default: this machine)")
    p.add_argument("--into", type=Path, action="append", help="files to fill (repeatable)")
    args = p.parse_args(argv)
    try:
        study = load_study_result(args.run_dir)
        makers: dict[str, Callable[[StudyResult], str]] = {
            "demo": demo_table,
            "real-patients": real_patients_table,
            "families": families_table,
        }
        tables = {name: make(study) for name, make in makers.items()}
        tables["provenance"] = provenance(
            study, args.command, args.commit, args.machine or machine()
        )
        for path in args.into or DEFAULT_INTO:
            text = path.read_text(encoding="utf-8")
            if not MARKER.search(text):
                raise UsageError(f"{path}: no <!-- tables:NAME --> markers")
            write_text(path, fill(text, tables, str(path)))
            print(f"filled {path}")
    except OSError as err:
        print(f"error: {err.filename}: {err.strerror}", file=sys.stderr)
        return 2
    except Sim2HumanError as err:
        print(f"error: {err}", file=sys.stderr)
        return err.exit_code
    return 0


if __name__ == "__main__":
    sys.exit(main())
