#!/usr/bin/env python3
"""Does validation gold tell a good seed from a bad one? Per sub-run that selected (``select``).

    python3 scripts/validation_seeds.py RUN_DIR [RUN_DIR ...] [--family aci-heldout]

For every sub-run whose ``summary.json`` holds ``validation_gold`` (a condition with ``select``),
its validation gold at the chosen point beside its gold on ``--family`` (the replayed real
patients by default); then, over all of them, Pearson's r with a 95% CI (Fisher's z), the mean
of both, and per condition and run directory the gold of the seed validation would have picked
against the seeds' mean (issue 37, docs/results/real-patients.md). Standard library only.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
from pathlib import Path


def sub_runs(run: Path, family: str) -> list[tuple[str, str, float, float]]:
    """(condition, seed folder, validation gold, gold on ``family``) of each selecting sub-run."""
    found = []
    for path in sorted(run.glob("conditions/*/seed-*/summary.json")):
        summary = json.loads(path.read_text(encoding="utf-8"))
        held = summary.get("heldout_by_family", {}).get(family)
        if "validation_gold" in summary and held is not None:
            condition, seed = path.parent.parent.name, path.parent.name
            found.append((condition, seed, summary["validation_gold"], held["gold_success"]))
    return found


def pearson(xs: list[float], ys: list[float]) -> tuple[float, float, float]:
    """r and its 95% CI by Fisher's z (needs four points or more, and spread in both)."""
    r = statistics.correlation(xs, ys)
    z, half = math.atanh(max(-0.999999, min(0.999999, r))), 1.96 / math.sqrt(len(xs) - 3)
    return r, math.tanh(z - half), math.tanh(z + half)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("runs", type=Path, nargs="+")
    parser.add_argument("--family", default="aci-heldout")
    args = parser.parse_args()
    rows = [(run, *row) for run in args.runs for row in sub_runs(run, args.family)]
    if not rows:
        raise SystemExit("no sub-run with validation_gold (a condition with select) found")
    print(f"| run | condition | seed | validation gold | gold, {args.family} |")
    print("|---|---|---|---:|---:|")
    for run, condition, seed, val, gold in rows:
        print(f"| {run.name} | {condition} | {seed} | {100 * val:.0f} | {100 * gold:.0f} |")
    vals, golds = [r[3] for r in rows], [r[4] for r in rows]
    if len(rows) >= 4:
        r, lo, hi = pearson(vals, golds)
        print(f"\n{len(rows)} sub-runs: Pearson r = {r:.2f} [{lo:.2f}, {hi:.2f}] (Fisher z)")
    print(
        f"mean validation gold {100 * statistics.mean(vals):.0f}, "
        f"mean gold on {args.family} {100 * statistics.mean(golds):.0f}"
    )
    groups: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for run, condition, _, val, gold in rows:
        groups.setdefault((run.name, condition), []).append((val, gold))
    for (run_name, condition), pairs in groups.items():
        picked = max(pairs, key=lambda p: p[0])  # the first of equal validation golds
        mean = statistics.mean(g for _, g in pairs)
        print(
            f"{run_name} {condition}: the seed validation picks {100 * picked[1]:.0f} on "
            f"{args.family} (validation {100 * picked[0]:.0f}); the {len(pairs)} seeds' mean "
            f"{100 * mean:.0f}"
        )


if __name__ == "__main__":
    main()
