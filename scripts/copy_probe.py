#!/usr/bin/env python3
"""Does a language-model agent copy what it heard? Its ``record`` values read teacher forced.

    PYTHONPATH=src .venv/bin/python scripts/copy_probe.py STUDY_FILE MODEL_DIR [MODEL_DIR ...]
        [--calls 60] [--drills 100] [--seed 999]

For each model (a warm start or a trained ``policy/`` folder), over fresh calls of the study's
reference with its *training* members (as the warm start makes them, drawn from ``--seed``) and
fresh exchanges of the copying drill (``train.copy_drill``: callers' own turns, their words
in a random order, and several recorded answers joined into one turn), it reads every
``record`` value the model is shown and says how often the model's most likely next token is
the one written:

- *first token*: the value's first token (in a call, a choice of which words answer the field;
  in the drill, a random start: chance);
- *continued*: every token after the first up to the value's end (the copying itself; a
  one-token value counts as continued);
- *copied tokens*: the share of tokens after a value's first the model predicts (what the drill
  reads to know when to stop: ``train.copy_drill.COPIES``).

Teacher forced, so it measures copying apart from what the model would have said before: how
``docs/results/lm-agents.md`` ("A drill that copies") found that the old drill had not taught it.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("study", type=Path)
    parser.add_argument("models", type=Path, nargs="+")
    parser.add_argument("--calls", type=int, default=60, help="reference calls (default 60)")
    parser.add_argument("--drills", type=int, default=100, help="drill sequences of each kind")
    parser.add_argument("--seed", type=int, default=999, help="draws the calls and drills")
    args = parser.parse_args()
    from sim2human.agents.lm_models import load
    from sim2human.agents.lm_policy import LMPolicy
    from sim2human.experiments.study.config import load_study
    from sim2human.experiments.study.world import StudyWorld
    from sim2human.train.config import LMAgentConfig
    from sim2human.train.copy_drill import drill_calls, drill_traces, read_copies, value_bounds
    from sim2human.train.warm_start import reference_calls

    cfg = load_study(args.study, quick=True)
    if not isinstance(cfg.agent, LMAgentConfig):
        raise SystemExit(f"{args.study}: its agent is not a language model (agent.kind: lm)")
    world = StudyWorld.build(cfg)
    made = cfg.agent.warm_start.model_copy(update={"episodes": args.calls})
    calls = reference_calls(world.scenario, world.ensemble.train, made, args.seed, world.max_turns)
    fields = list(getattr(world.scenario, "fields", ()))
    kinds: dict[str, Sequence[Any]] = {"reference calls": calls}
    for name, share, joined in (
        ("drill, callers' own turns", 1.0, 0.0),
        ("drill, words in random order", 0.0, 0.0),
        ("drill, joined answers", 0.0, 1.0),
    ):
        kinds[name] = drill_calls(
            calls, fields, args.drills, args.seed, sentences=share, joined=joined
        )
    print("| model | sequences | values | first token right | continued right | copied tokens |")
    print("|---|---|---:|---:|---:|---:|")
    for folder in args.models:
        model, tok = load(folder)
        bounds = value_bounds(tok)
        if bounds is None:
            raise SystemExit(
                f"{folder}: its tokenizer does not write a value's bounds as one token each "
                "(the tiny model's does)"
            )
        policy = LMPolicy(model, tok, world.scenario)
        for name, seqs in kinds.items():
            if name == "reference calls":
                traces = [policy.written_trace(e.turns) for e in seqs]
            else:
                traces = drill_traces(policy, seqs)  # as the drill trains on them
            read = read_copies(policy, traces, bounds)
            print(
                f"| {folder.parent.name}/{folder.name} | {name} | {read.values} | "
                f"{read.first / max(1, read.values):.0%} | "
                f"{read.continued / max(1, read.values):.0%} | {read.later_share:.0%} |"
            )


if __name__ == "__main__":
    main()
