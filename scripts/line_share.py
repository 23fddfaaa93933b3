#!/usr/bin/env python3
"""How often a study's agents say a line: the share of agent turns that contain it, per
condition and seed, in training (the calls logged in the first and the second half of the
logged steps) and in evaluation (training members, held-out families), with Wilson's 95%
interval, and the calls that say it at least once.

    python scripts/line_share.py RUN "I'm here to make this as easy as possible for you."

What ``docs/results/lm-agents.md`` reads a learned trigger from: a line GRPO takes up is said
more in the late steps than the early ones, and in evaluation. Case is ignored.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from sim2human.stress.adversarial import wilson


def share(calls: list[dict[str, Any]], line: str) -> str:
    turns = [t["text"].lower() for c in calls for t in c["turns"] if t["speaker"] == "agent"]
    said = sum(line in t for t in turns)
    lo, hi = wilson(said, len(turns), 1.96)
    saying = sum(
        any(line in t["text"].lower() for t in c["turns"] if t["speaker"] == "agent") for c in calls
    )
    return (
        f"{said}/{len(turns)} turns = {said / max(1, len(turns)):.0%} [{lo:.0%}, {hi:.0%}], "
        f"{saying} of {len(calls)} calls"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("run", type=Path, help="a study's run directory")
    parser.add_argument("line", help="the line to look for (case ignored)")
    args = parser.parse_args()
    line = args.line.lower()
    subs = sorted(args.run.glob("conditions/*/seed-*/episodes.jsonl"))
    if not subs:
        raise SystemExit(f"{args.run}: no conditions/*/seed-*/episodes.jsonl (not a study run)")
    print("| condition | seed | calls | agent turns that say it [95% CI], calls that say it |")
    print("|---|---|---|---|")
    for path in subs:
        rows = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x]
        name, seed = path.parent.parent.name, path.parent.name
        trained = [r for r in rows if r.get("phase") == "train"]
        steps = sorted({r.get("step") or 0 for r in trained})
        half = steps[: len(steps) // 2]
        parts = {
            "training, early steps": [r for r in trained if (r.get("step") or 0) in half],
            "training, late steps": [r for r in trained if (r.get("step") or 0) not in half],
        }
        for split in ("train", "heldout"):
            evals = [r for r in rows if r.get("phase") == "eval" and r.get("split") == split]
            parts[f"evaluation, {split}"] = evals
        for part, calls in parts.items():
            if calls:
                print(f"| {name} | {seed} | {part} | {share(calls, line)} |")


if __name__ == "__main__":
    main()
