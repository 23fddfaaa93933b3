#!/usr/bin/env python3
"""How often a study's agents say a line: the share of agent turns that contain it, per
condition and seed, in training (the calls logged in the first and the second half of the
logged steps) and in evaluation (training members, held-out families), with Wilson's 95%
interval, and the calls that say it at least once.

    python scripts/line_share.py RUN "I'm here to make this as easy as possible for you."
    python scripts/line_share.py RUN "..." --outcomes   # what the calls that say it came to

What ``docs/results/lm-agents.md`` reads a learned trigger from: a line GRPO takes up is said
more in the late steps than the early ones, and in evaluation. Case is ignored. ``--outcomes``
sets the calls that say it beside those that do not, in each part: complete calls (gold
success, Wilson's interval; the difference by Newcombe's), fields right and proxy, means. It
shows what a line costs or buys on the callers it was said to; a call that says it is not a
random call, so it is an association, not an effect (``sim2human diagnose``'s replays are).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from sim2human.stress.adversarial import newcombe, wilson


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


def says(call: dict[str, Any], line: str) -> bool:
    """Whether the call's agent says ``line`` at least once."""
    return any(line in t["text"].lower() for t in call["turns"] if t["speaker"] == "agent")


def outcomes(calls: list[dict[str, Any]], line: str) -> str:
    """Complete calls, fields right and proxy of the calls that say ``line`` and of the rest,
    and the difference in complete calls (Newcombe's hybrid score interval)."""
    saying = [says(c, line) for c in calls]
    said = [c for c, yes in zip(calls, saying, strict=True) if yes]
    rest = [c for c, yes in zip(calls, saying, strict=True) if not yes]
    cells, counts = [], []
    for group in (said, rest):
        n, k = len(group), sum(bool(c["gold"]["success"]) for c in group)
        lo, hi = wilson(k, n, 1.96)
        fields = sum(c["gold"]["detail"].get("fields_right", 0.0) for c in group) / max(1, n)
        proxy = sum(c["proxy"] for c in group) / max(1, n)
        cells.append(
            f"{k}/{n} = {k / max(1, n):.0%} [{lo:.0%}, {hi:.0%}] | {fields:.0%} | {proxy:.2f}"
        )
        counts.append((k, n))
    d, low, high = newcombe(*counts[1], *counts[0])  # saying it minus the rest
    return f"{cells[0]} | {cells[1]} | {100 * d:+.1f} [{100 * low:+.1f}, {100 * high:+.1f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("run", type=Path, help="a study's run directory")
    parser.add_argument("line", help="the line to look for (case ignored)")
    parser.add_argument(
        "--outcomes",
        action="store_true",
        help="what the calls that say it came to, beside the rest",
    )
    args = parser.parse_args()
    line = args.line.lower()
    subs = sorted(args.run.glob("conditions/*/seed-*/episodes.jsonl"))
    if not subs:
        raise SystemExit(f"{args.run}: no conditions/*/seed-*/episodes.jsonl (not a study run)")
    if args.outcomes:
        print(
            "| condition | seed | calls | saying it: complete [95% CI] | fields right | proxy "
            "| the rest: complete [95% CI] | fields right | proxy | complete, difference [95% CI] |"
        )
        print("|---|---|---|---|---:|---:|---|---:|---:|---:|")
    else:
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
                cells = outcomes(calls, line) if args.outcomes else share(calls, line)
                print(f"| {name} | {seed} | {part} | {cells} |")


if __name__ == "__main__":
    main()
