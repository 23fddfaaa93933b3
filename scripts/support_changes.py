#!/usr/bin/env python3
"""Held-out gold of a `support` study by request: new bookings against changes of a booking.

    PYTHONPATH=src python scripts/support_changes.py RUN_DIR

Reads every stored evaluation episode of RUN_DIR (a `sim2human study` on `support`) and prints,
per condition (and reference agent), the held-out gold success on the programmatic families and
on the real callers (`multiwoz-heldout`), split by the caller's `task` (`new booking`, or a
`time change` / `stay change`): n calls, the mean in %, and a 95% cluster-bootstrap CI that
resamples the members (a real caller is one member).
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path

from sim2human.metrics.outcomes import cluster_bootstrap
from sim2human.store.rundir import read_episodes
from sim2human.types import Episode

REAL = "multiwoz-heldout"


def cell(episodes: list[Episode]) -> str:
    if not episodes:
        return "-"
    est = cluster_bootstrap(
        [float(e.gold.success) for e in episodes], [e.simulator_id for e in episodes]
    )
    lo, hi = est.ci
    return f"{100 * est.mean:.0f} [{100 * lo:.0f}, {100 * hi:.0f}] (n={len(episodes)})"


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__.split("\n\n")[1].strip(), file=sys.stderr)
        return 2
    groups: dict[tuple[str, bool, bool], list[Episode]] = defaultdict(list)
    for path in sorted(Path(argv[0]).rglob("episodes.jsonl")):
        for e in read_episodes(path):
            if e.split != "heldout" or e.phase != "eval" or "task" not in e.profile:
                continue
            change = e.profile["task"] != "new booking"
            groups[(e.condition, e.family == REAL, change)].append(e)
    heads = [f"{who}: {what}" for who in ("families", "real") for what in ("new booking", "change")]
    print("| condition | " + " | ".join(heads) + " |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for condition in dict.fromkeys(c for c, _, _ in groups):
        cells = [
            cell(groups[(condition, real, ch)]) for real in (False, True) for ch in (False, True)
        ]
        print(f"| {condition} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
