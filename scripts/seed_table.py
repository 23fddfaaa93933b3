#!/usr/bin/env python3
"""Each seed of each condition: held-out gold / real-people gold / median held-out agent turns.

    python3 scripts/seed_table.py RUN_DIR [REAL_FAMILY ...]

Reads every sub-run's ``episodes.jsonl`` (its final evaluation calls on held-out members) and
prints one Markdown row per condition, one cell per seed, with the median agent turns over all
its seeds' programmatic held-out calls at the end: the per-seed table of issue 37 ("does every
seed transfer, in the reference's turns?"). ``REAL_FAMILY``: the held-out families that replay
real people (`aci-heldout`, `multiwoz-heldout`); the rest are the programmatic families. The
pooled golds with their CIs are the run's own report (``report.md``), not repeated here.
Standard library only.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path


def seed_cell(episodes: Path, real: set[str]) -> tuple[str, list[int]]:
    """One sub-run's cell and its programmatic held-out calls' agent turns."""
    programmatic: list[bool] = []
    people: list[bool] = []
    turns: list[int] = []
    with episodes.open(encoding="utf-8") as lines:
        for line in lines:
            e = json.loads(line)
            if e.get("phase") != "eval" or e.get("split") != "heldout":
                continue
            success = bool(e["gold"]["success"])
            if e["family"] in real:
                people.append(success)
            else:
                programmatic.append(success)
                turns.append(sum(t["speaker"] == "agent" for t in e["turns"]))

    def pct(xs: list[bool]) -> str:
        return f"{100 * sum(xs) / len(xs):.0f}" if xs else "-"

    median = f"{statistics.median(turns):g}" if turns else "-"
    return f"{pct(programmatic)} / {pct(people)} / {median}", turns


def main(run: Path, real: set[str]) -> None:
    def by_seed(p: Path) -> tuple[str, int]:
        return p.parent.parent.name, int(p.parent.name.removeprefix("seed-"))

    found = sorted(run.glob("conditions/*/seed-*/episodes.jsonl"), key=by_seed)
    if not found:
        sys.exit(f"{run}: no sub-run's episodes.jsonl under conditions/")
    rows: dict[str, list[tuple[str, str, list[int]]]] = {}
    for path in found:
        cell, turns = seed_cell(path, real)
        rows.setdefault(path.parent.parent.name, []).append((path.parent.name, cell, turns))
    for path in sorted(run.glob("reference/*/episodes.jsonl")):  # one untrained agent each
        cell, turns = seed_cell(path, real)
        rows[f"{path.parent.name} (reference)"] = [("", cell, turns)]
    seeds = max(([s for s, *_ in r] for r in rows.values()), key=len)
    width = len(seeds)
    print("| condition | " + " | ".join(s.replace("-", " ") for s in seeds) + " | median turns |")
    print("|---|" + "---|" * width + "---:|")
    for condition, cells in rows.items():
        pooled = [t for *_, turns in cells for t in turns]
        median = f"{statistics.median(pooled):g}" if pooled else "-"
        padded = [c for _, c, _ in cells] + [""] * (width - len(cells))
        print(f"| {condition} | " + " | ".join(padded) + f" | {median} |")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(Path(sys.argv[1]), set(sys.argv[2:]))
