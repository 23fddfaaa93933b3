#!/usr/bin/env python3
"""Why real people's calls fail, field by field: asked and missed, or never asked.

    python3 scripts/missed_fields.py RUN_DIR [--family aci-heldout]

For every condition (and the reference) of a study run, over its evaluation calls with one
family (default ``aci-heldout``, the replayed real patients), each field that ended missing or
wrong is counted by whether the agent had asked for it (an ``ask.<field>.*`` act) at any point of
the call. "Asked, missing" is an agent that asked once and closed before the answer registered;
"never asked, wrong" is a record filled from something the caller volunteered. Per seed, so a
coin-toss condition shows which seed misses what (issue 37). Standard library only.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path


def count(episodes: Path, family: str) -> tuple[int, Counter[tuple[str, str]]]:
    """Calls of ``family`` in one episodes file, and (missing|wrong, asked|never asked) counts."""
    calls, found = 0, Counter[tuple[str, str]]()
    for line in episodes.read_text(encoding="utf-8").splitlines():
        e = json.loads(line)
        if e.get("phase") != "eval" or e.get("family") != family:
            continue
        calls += 1
        asked = {
            t["act"].split(".")[1]
            for t in e["turns"]
            if t["speaker"] == "agent" and str(t.get("act") or "").startswith("ask.")
        }
        for field, truth in e["profile"].items():
            if field not in e["record"] or e["record"][field] == truth:
                continue
            kind = "missing" if e["record"][field] is None else "wrong"
            found[(kind, "asked" if field in asked else "never asked")] += 1
    return calls, found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("run", type=Path)
    parser.add_argument("--family", default="aci-heldout")
    args = parser.parse_args()
    files = sorted(args.run.glob("conditions/*/*/episodes.jsonl"))
    files += sorted(args.run.glob("reference/*/episodes.jsonl"))
    if not files:
        raise SystemExit(f"{args.run}: no episodes.jsonl under conditions/ or reference/")
    kinds = [(k, a) for k in ("missing", "wrong") for a in ("asked", "never asked")]
    print("| agent | run | calls | " + " | ".join(f"{k}, {a}" for k, a in kinds) + " |")
    print("|---|---|---:|" + "---:|" * len(kinds))
    for path in files:
        calls, found = count(path, args.family)
        if calls:
            reference = path.parent.parent.name == "reference"
            agent = f"{path.parent.name} (reference)" if reference else path.parent.parent.name
            run = "" if reference else path.parent.name
            cells = " | ".join(str(found[k]) for k in kinds)
            print(f"| {agent} | {run} | {calls} | {cells} |")


if __name__ == "__main__":
    main()
