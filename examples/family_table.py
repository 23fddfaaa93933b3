"""Held-out gold of every condition of a study run, per held-out family, with CIs.

    .venv/bin/python examples/family_table.py RUN_DIR [--boot 2000]

``report.md`` lists held-out gold by family as plain means; a claim about one family (does
perturbation training help on ``noisy-line``?) needs its n and a confidence interval. This reads
each sub-run's stored evaluation episodes (nothing is played or changed) and bootstraps over
seeds, then episodes within a seed, as the study's own tables do.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from sim2human.metrics.outcomes import cluster_bootstrap, fmt_estimate
from sim2human.store.layout import EPISODES
from sim2human.store.rundir import read_episodes


def family_gold(condition_dir: Path) -> dict[str, tuple[list[float], list[str]]]:
    """Family -> (gold success of each held-out evaluation episode, its seed's folder name)."""
    out: dict[str, tuple[list[float], list[str]]] = {}
    for sub in sorted(p for p in condition_dir.iterdir() if p.is_dir()):
        for e in read_episodes(sub / EPISODES):
            if e.phase == "eval" and e.split == "heldout":
                gold, seeds = out.setdefault(e.family, ([], []))
                gold.append(float(e.gold.success))
                seeds.append(sub.name)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--boot", type=int, default=2000, help="bootstrap resamples")
    args = parser.parse_args()
    conditions = sorted(p for p in (args.run_dir / "conditions").iterdir() if p.is_dir())
    rows = {c.name: family_gold(c) for c in conditions}
    families = sorted({f for by_family in rows.values() for f in by_family})
    print("| condition | " + " | ".join(families) + " |")
    print("|---|" + "---:|" * len(families))
    for name, by_family in rows.items():
        cells = []
        for f in families:
            gold, seeds = by_family.get(f, ([], []))
            estimate = cluster_bootstrap(gold, seeds, n_boot=args.boot)
            cells.append(f"{fmt_estimate(estimate)} (n={len(gold)})" if gold else "-")
        print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
