#!/usr/bin/env python3
"""A study's language-model warm start alone, as a sub-run makes it, into OUT: to try a warm
start's settings without GRPO and evaluation (then play it with ``scripts/lm_play.py``).

    PYTHONPATH=src .venv/bin/python scripts/lm_warm_start.py STUDY_FILE OUT [--full]
        [--seed K] [--threads N]

It writes ``OUT/<model>-seed-K-<hash>/`` (the model, its tokenizer and ``warm_start.json``) and
prints its path, its seconds and ``warm_start.json`` less the training members. A study run
with ``--out`` in a folder holding ``warm-start/<that name>`` reuses it (the name is a hash of
everything that makes it: scenario, model, warm-start settings, prompt, members, turn limit).
Built on training members only, as in a study: no held-out family or real caller is read.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("study", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument(
        "--full", action="store_true", help="the study's full settings, not --quick"
    )
    parser.add_argument("--seed", type=int, default=0, help="the study seed (default 0)")
    parser.add_argument(
        "--threads", type=int, help="torch threads (default: the study's, every core)"
    )
    args = parser.parse_args()
    from sim2human.experiments.study.config import load_study
    from sim2human.experiments.study.lm_condition import warm_start
    from sim2human.experiments.study.world import StudyWorld
    from sim2human.train.config import LMAgentConfig

    cfg = load_study(args.study, quick=not args.full)
    if not isinstance(cfg.agent, LMAgentConfig):
        raise SystemExit(f"{args.study}: its agent is not a language model (agent.kind: lm)")
    if args.threads is not None:
        ws = cfg.agent.warm_start.model_copy(update={"threads": args.threads})
        cfg = cfg.model_copy(update={"agent": cfg.agent.model_copy(update={"warm_start": ws})})
    world = StudyWorld.build(cfg)
    began = time.perf_counter()
    made = warm_start(cfg, cfg.agent, world, args.seed, args.out)
    print(made, f"{time.perf_counter() - began:.1f} s")
    meta = json.loads((made / "warm_start.json").read_text(encoding="utf-8"))
    print(json.dumps({k: v for k, v in meta.items() if k not in ("members", "agent_lines")}))


if __name__ == "__main__":
    main()
