#!/usr/bin/env python3
"""Two sets of calls saved by ``scripts/lm_play.py --save``, pooled over warm-start seeds and
compared call by call: fields right and complete calls of NEW minus OLD, 95% intervals by
cluster bootstrap over (seed, member).

    .venv/bin/python scripts/saved_calls.py OLD_SEED0.jsonl,OLD_SEED1.jsonl NEW_SEED0.jsonl,...

The files of one side are given in seed order, the same order on both sides: the k-th file of
each side must hold the same calls (lm_play plays a study's training members on the same seeds
for every warm start), and its members are named per seed so that seeds are told apart.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path
from typing import Any


def pooled(files: list[Path], model: str) -> list[dict[str, Any]]:
    """Every call of ``files``, its member named by the file's place (``s0/...``)."""
    out = []
    for k, path in enumerate(files):
        for line in path.read_text(encoding="utf-8").splitlines():
            call = json.loads(line)
            out.append({**call, "member": f"s{k}/{call['member']}", "model": model})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("old", help="comma-separated --save files, one per seed")
    parser.add_argument("new", help="the same seeds' files of the other side, in that order")
    args = parser.parse_args()
    olds, news = ([Path(p) for p in side.split(",")] for side in (args.old, args.new))
    if len(olds) != len(news):
        raise SystemExit("give as many files on each side (one per seed)")
    spec = importlib.util.spec_from_file_location("lm_play", Path(__file__).with_name("lm_play.py"))
    assert spec is not None and spec.loader is not None
    lm_play = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(lm_play)
    old, new = pooled(olds, "old"), pooled(news, "new")
    for temperature in dict.fromkeys(c["temperature"] for c in new):
        for name, calls in (("old", old), ("new", new)):
            at = [c for c in calls if c["temperature"] == temperature]
            right = sum(c["fields_right"] for c in at) / max(1, len(at))
            done = sum(c["complete"] for c in at)
            print(
                f"{name} at {temperature}: {len(at)} calls, {right:.1%} fields right, {done} done"
            )
    lm_play.print_difference(old, new, args.old)


if __name__ == "__main__":
    sys.exit(main())
