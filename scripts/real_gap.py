#!/usr/bin/env python3
"""How far a condition's gold with real people is from its gold on the programmatic held-out
families, with a 95% CI.

    .venv/bin/python scripts/real_gap.py RUN_DIR CONDITION [--people aci-heldout]

From the run's evaluation episodes: per seed, the real people's mean gold minus the held-out
families' mean gold; the point is the mean over seeds. The CI is a percentile bootstrap
(1000 draws) resampling seeds, then within each seed the people's visits (and their calls) and
the families' members (and their calls), the clusters the study's own CIs resample.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

Groups = dict[str, list[float]]


def seed_groups(sub: Path, people: str) -> tuple[Groups, Groups]:
    """One sub-run's held-out evaluation calls: gold by visit (people) and by member."""
    real: Groups = {}
    held: Groups = {}
    with (sub / "episodes.jsonl").open(encoding="utf-8") as lines:
        for line in lines:
            e = json.loads(line)
            if e.get("phase") != "eval" or e["split"] != "heldout":
                continue
            side = real if e["family"] == people else held
            side.setdefault(e["simulator_id"], []).append(float(e["gold"]["success"]))
    return real, held


def resampled_mean(groups: Groups, rng: np.random.Generator) -> float:
    keys = list(groups)
    picked = [groups[keys[i]] for i in rng.choice(len(keys), len(keys))]
    return float(np.mean([v for g in picked for v in rng.choice(g, len(g))]))


def mean(groups: Groups) -> float:
    return float(np.mean([v for g in groups.values() for v in g]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("condition")
    parser.add_argument("--people", default="aci-heldout", help="the real people's family")
    args = parser.parse_args()
    subs = sorted((args.run_dir / "conditions" / args.condition).glob("seed-*"))
    if not subs:
        parser.error(f"{args.run_dir}: no sub-runs of condition {args.condition!r}")
    seeds = [seed_groups(sub, args.people) for sub in subs]
    if not all(real and held for real, held in seeds):
        parser.error(f"{args.run_dir}: a sub-run has no {args.people} or no held-out family calls")
    point = np.mean([mean(real) - mean(held) for real, held in seeds])
    rng = np.random.default_rng(0)
    draws = [
        np.mean(
            [
                resampled_mean(seeds[i][0], rng) - resampled_mean(seeds[i][1], rng)
                for i in rng.choice(len(seeds), len(seeds))
            ]
        )
        for _ in range(1000)
    ]
    lo, hi = np.percentile(draws, [2.5, 97.5])
    print(
        f"{args.condition}: {args.people} minus held-out families = {100 * point:+.0f} "
        f"[{100 * lo:+.0f}, {100 * hi:+.0f}] points ({len(seeds)} seeds)"
    )


if __name__ == "__main__":
    main()
