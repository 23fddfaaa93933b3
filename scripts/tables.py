#!/usr/bin/env python3
"""Write a run directory's measured tables into Markdown files, between marker comments.

    .venv/bin/python scripts/tables.py RUN_DIR --commit 6f35b7b [--into FILE ...]

Each file holds pairs of markers, ``<!-- tables:NAME -->`` and ``<!-- /tables:NAME -->``; the
script replaces what lies between them with the table NAME computed from RUN_DIR's
``study.json`` and its episodes through ``report.tables``, the one table model the terminal,
``report.md`` and ``report.html`` also render, and leaves everything else as it is.
Hand-copied numbers go stale; these are regenerated from the run they came from. Names:
``provenance`` (command, commit, machine, wall time), ``demo`` (proxy vs gold, the first table
``sim2human study`` prints), ``handle-time`` (agent turns per call), ``real-patients`` (each
condition on the replayed visits), ``families`` (held-out gold per family) and
``predictivity`` (``sim2human predictivity``'s table over the agents not frozen, from the run's
``predictivity.json``). A run directory does not record the commit it was measured at, hence
``--commit``.

A page that shows two runs names the second run's markers with a set, ``<!-- tables:NAME@SET -->``
(``real-patients@three-seeds``); ``--set SET`` fills only those, and without ``--set`` only the
markers without one are filled.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from importlib import metadata
from pathlib import Path

from sim2human.diagnostics.rundir import load_run_dir
from sim2human.errors import Sim2HumanError, UsageError
from sim2human.experiments.study.results import StudyResult, load_study_result
from sim2human.outputs import write_text
from sim2human.report.format import md
from sim2human.report.predictivity import pool, rows, verdict
from sim2human.report.tables import (
    Table,
    family_table,
    gold_table,
    handle_table,
    numbers,
    real_table,
)
from sim2human.store.loading import read_json_object

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_INTO = tuple(
    ROOT / p for p in ("README.md", "docs/results/collapse.md", "docs/results/real-patients.md")
)
MARKER = re.compile(
    r"(<!-- tables:([a-z-]+(?:@[a-z0-9-]+)?) -->\n)(.*?)(<!-- /tables:\2 -->)", re.DOTALL
)


def markdown(table: Table | None) -> str:
    """A shared table's rows as Markdown, without its title (the page around it has one)."""
    if table is None:
        return "No real patients in this run.\n"
    align = ["---"] + ["---:"] * (len(table.columns) - 1)
    lines = [list(table.columns), align, *(list(r) for r in table.rows)]
    return "".join("| " + " | ".join(md(c) for c in cells) + " |\n" for cells in lines)


def shared_tables(run_dir: Path, study: StudyResult) -> dict[str, str]:
    """The tables the terminal, report.md and report.html show, by marker name."""
    measured = numbers(study, load_run_dir(run_dir))
    return {
        "demo": markdown(gold_table(measured)),
        "handle-time": markdown(handle_table(measured)),
        "real-patients": markdown(real_table(measured)),
        "families": markdown(family_table(measured)),
        "predictivity": predictivity(run_dir),
    }


def predictivity(run_dir: Path) -> str:
    """``sim2human predictivity``'s table over the agents of conditions not frozen (all agents
    if the run has no frozen condition), with its pool and its verdict."""
    path = run_dir / "predictivity.json"
    if not path.is_file():
        return "No predictivity result in this run (`sim2human predictivity RUN_DIR`).\n"
    result = read_json_object(path, "predictivity result")
    table = result.get("not_frozen") or result["all_agents"]
    return "\n".join([f"{pool(table)}:", "", *rows(table), "", verdict(table), ""])


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
    budgets = sorted({r.episodes_trained for r in study.conditions}) or [0]
    trained = f"{budgets[0]}" if len(budgets) == 1 else f"{budgets[0]} to {budgets[-1]}"
    return (
        f"Measured with `{command}` at commit `{commit}` on {where}: {seeds} seeds, "
        f"{trained} training episodes per agent, {study.wall_seconds:.0f} s wall; "
        "%, 95% cluster-bootstrap CIs.\n"
    )


def fill(text: str, tables: dict[str, str], where: str, which: str = "") -> str:
    """``text`` with every region marked for the set ``which`` ("": unmarked) replaced; an
    unknown name is an error."""

    def one(m: re.Match[str]) -> str:
        name, _, label = m.group(2).partition("@")
        if label != which:
            return m.group(0)
        if name not in tables:
            known = ", ".join(sorted(tables))
            raise UsageError(f"{where}: unknown table {name!r} (known: {known})")
        return m.group(1) + tables[name] + m.group(4)

    return MARKER.sub(one, text)


def marked(text: str, which: str) -> bool:
    """Whether ``text`` has a marker of the set ``which``."""
    return any(m.group(2).partition("@")[2] == which for m in MARKER.finditer(text))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("run_dir", type=Path)
    p.add_argument("--commit", required=True, help="the commit the run was measured at")
    p.add_argument("--command", default="sim2human demo", help="the command that made the run")
    p.add_argument("--machine", default=None, help="where it ran (default: this machine)")
    p.add_argument("--into", type=Path, action="append", help="files to fill (repeatable)")
    p.add_argument("--set", default="", help="fill only the markers tables:NAME@SET")
    args = p.parse_args(argv)
    try:
        study = load_study_result(args.run_dir)
        tables = shared_tables(args.run_dir, study)
        tables["provenance"] = provenance(
            study, args.command, args.commit, args.machine or machine()
        )
        for path in args.into or DEFAULT_INTO:
            text = path.read_text(encoding="utf-8")
            if not marked(text, args.set):
                at = f"@{args.set}" if args.set else ""
                raise UsageError(f"{path}: no <!-- tables:NAME{at} --> markers")
            write_text(path, fill(text, tables, str(path), args.set))
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
