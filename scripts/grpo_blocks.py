#!/usr/bin/env python3
"""GRPO's own calls, step block by step block: what a study's language-model agents' training
did to the proxy and to the task, per condition and seed.

    python scripts/grpo_blocks.py RUN                     # blocks of 20 steps
    python scripts/grpo_blocks.py RUN --block 10 --after "here's everything"

From ``metrics.jsonl`` (every call of every step): per block the mean proxy, the gold (the calls'
gold scores summed, of the block's calls: the complete calls where gold is success or failure, as
on intake and the booking desk; Wilson's 95% interval), the agent's turns a call and the KL to
the warm start at the block's last step; then the last block minus the first (Newcombe's
interval). ``--after TEXT`` reads the logged calls (``episodes.jsonl``, every fifth step, and the
evaluation on training members): of the calls where the caller said TEXT (case ignored), how
many the agent submitted on its very next turn, and how many of those were complete. How
``docs/results/lm-agents.md`` found the frozen agent closing the call after its caller said
everything in one turn, without recording what that turn said.

Calls sampled in training are at the condition's training temperature, so their complete calls
are not the evaluation's (``eval_temperature``).
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from sim2human.stress.adversarial import newcombe, wilson


def blocks(rows: list[dict[str, Any]], size: int) -> list[str]:
    """One line per block of ``size`` GRPO steps, and the last block minus the first."""
    steps = [r for r in rows if "update" in r and "train_gold" in r]
    out, counts = [], []
    for start in range(0, len(steps), size):
        block = steps[start : start + size]
        calls = [int(r["episodes_seen"] / (r["update"] + 1)) for r in block]
        n = sum(calls)
        k = round(sum(r["train_gold"] * c for r, c in zip(block, calls, strict=True)))
        lo, hi = wilson(k, n, 1.96)
        counts.append((k, n))
        proxy = sum(r["train_proxy"] for r in block) / len(block)
        turns = sum(r["agent_turns"] for r in block) / len(block)
        out.append(
            f"  steps {block[0]['update']}-{block[-1]['update']}: proxy {proxy:.3f}, gold "
            f"{k}/{n} = {k / n:.0%} [{lo:.0%}, {hi:.0%}], agent turns {turns:.1f}, "
            f"KL {block[-1]['kl_init']:.4f}"
        )
    if len(counts) > 1:
        d, lo, hi = newcombe(*counts[0], *counts[-1])
        out.append(f"  last block minus first: {d:+.1%} [{lo:+.1%}, {hi:+.1%}]")
    return out


def after(calls: list[dict[str, Any]], text: str, size: int) -> list[str]:
    """Per block of logged training calls (and the evaluation on training members): the calls
    where the caller said ``text``, those the agent submitted on its next turn, and of those the
    complete ones."""
    parts: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for c in calls:
        if c.get("phase") == "train":
            first = size * (int(c["step"]) // size)
            key = f"GRPO steps {first}-{first + size - 1}"
        elif c.get("split") == "train":
            key = "evaluation, training members"
        else:
            continue
        part = parts[key]
        part[0] += 1
        turns = c["turns"]
        said = next(
            (
                i
                for i, t in enumerate(turns)
                if t["speaker"] == "user" and text.lower() in t["text"].lower()
            ),
            None,
        )
        if said is None:
            continue
        part[1] += 1
        following = turns[said + 1] if said + 1 < len(turns) else {}
        if any(tc["name"] == "submit" for tc in following.get("tool_calls") or []):
            part[2] += 1
            part[3] += bool(c["gold"]["success"])
    return [
        f"  {key}: {n} calls, the caller said it in {said}; the agent submitted on its next "
        f"turn in {closed} of them ({done} complete)"
        for key, (n, said, closed, done) in sorted(parts.items(), key=lambda kv: _order(kv[0]))
    ]


def _order(key: str) -> tuple[int, int]:
    return (1, 0) if key.startswith("evaluation") else (0, int(key.split()[2].split("-")[0]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("run", type=Path)
    parser.add_argument("--block", type=int, default=20, help="GRPO steps a block")
    parser.add_argument("--after", help="a caller's words: does the agent submit right after?")
    args = parser.parse_args()
    subs = sorted(args.run.glob("conditions/*/seed-*/metrics.jsonl"))
    if not subs:
        parser.error(f"{args.run}: no conditions/*/seed-*/metrics.jsonl")
    for path in subs:
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        print(f"{path.parent.parent.name}/{path.parent.name}")
        print("\n".join(blocks(rows, args.block)))
        episodes = path.parent / "episodes.jsonl"
        if args.after and episodes.exists():
            calls = [json.loads(line) for line in episodes.read_text(encoding="utf-8").splitlines()]
            print("\n".join(after(calls, args.after, args.block)))


if __name__ == "__main__":
    main()
