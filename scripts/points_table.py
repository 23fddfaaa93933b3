#!/usr/bin/env python3
"""Mean gold score per condition with the points of both sides (``gold.detail``), as Markdown.

    .venv/bin/python scripts/points_table.py RUN_DIR

The study tables (and ``scripts/score_table.py``) show the score with 95% CIs; for negotiation
this adds what the score is made of: the agent's and the camper's mean points under the
held-out calls. Held-out members who speak real people's words (``replay``: CaSiNo campers) are a
column of their own, as in the study tables. Reads the final evaluation episodes
(``phase == "eval"``) of every ``episodes.jsonl``.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

from sim2human.simulators.kinds import speaks_real_words
from sim2human.store.rundir import read_episodes


def main(run: Path) -> None:
    rows: dict[str, dict[str, list[tuple[float, float, float]]]] = defaultdict(
        lambda: defaultdict(list)
    )
    for path in sorted(run.rglob("episodes.jsonl")):
        for e in read_episodes(path):
            if e.phase != "eval":
                continue
            d = e.gold.detail
            point = (e.gold.score, d.get("agent_points", 0.0), d.get("camper_points", 0.0))
            split = "real" if e.split == "heldout" and speaks_real_words(e) else e.split
            rows[e.condition or "scripted"][split].append(point)
    real = any(splits["real"] for splits in rows.values())
    head = "| condition | train score | held-out score | held-out points (agent / camper) |"
    print(head + (" real people score | real people points (agent / camper) |" if real else ""))
    print("| --- | ---: | ---: | ---: |" + (" ---: | ---: |" if real else ""))
    for name, splits in rows.items():
        tr, ho = np.array(splits["train"]), np.array(splits["heldout"])
        line = (
            f"| {name} | {100 * tr[:, 0].mean():.0f} | {100 * ho[:, 0].mean():.0f} "
            f"| {ho[:, 1].mean():.1f} / {ho[:, 2].mean():.1f} |"
        )
        if real and splits["real"]:
            rp = np.array(splits["real"])
            points = f"{rp[:, 1].mean():.1f} / {rp[:, 2].mean():.1f}"
            line += f" {100 * rp[:, 0].mean():.0f} | {points} |"
        elif real:
            line += " | |"
        print(line)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
