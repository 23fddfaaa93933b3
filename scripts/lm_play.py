#!/usr/bin/env python3
"""Saved language-model agents (warm starts or trained ``policy/`` folders) played on a study's
training members at several sampling temperatures: fields right, gold, proxy, agent turns.

    PYTHONPATH=src .venv/bin/python scripts/lm_play.py STUDY_FILE MODEL_DIR [MODEL_DIR ...]
        [--temperatures 0 0.7 1] [--per-member 2] [--fields] [--device cpu|cuda]
        [--save CALLS.jsonl] [--against CALLS.jsonl] [--condition NAME] [--line TEXT] [--heldout]

``--fields`` adds, per temperature, each field's count of calls where the record holds the
caller's value, another value, or none, with a few wrong ones side by side. With several
models, every one plays the same calls (the same members, profiles and caller seeds), and a last
table gives each one's fields right and complete calls minus the first's, call by call, with 95%
intervals by cluster bootstrap over members: how two warm starts' settings were compared, and
two studies' trained policies on one study's callers. ``--save`` writes
each call's outcome (model, temperature, member, seed, fields right, complete) as JSON lines, and
``--against`` compares every model with such a file's first model on the same calls: how a warm
start played by one commit's code is compared with one played by another's. ``--condition
NAME`` plays that condition's training members instead of the ensemble's (a frozen condition's:
its one caller); ``--line TEXT`` splits each row's calls by whether the agent said that line.
``--heldout`` plays the study's held-out programmatic members instead (not its replayed people):
for reading what a trained agent kept or lost against its warm start, never to choose a setting.

How the warm start of ``docs/results/lm-agents.md`` was read: on *training* members only (a
held-out family or real caller never steers a setting), each member on the study's evaluation
seeds, as a study would evaluate it.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import numpy as np


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("study", type=Path)
    parser.add_argument("models", type=Path, nargs="+")
    parser.add_argument("--temperatures", type=float, nargs="+", default=[0.0, 0.7, 1.0])
    parser.add_argument("--per-member", type=int, default=2)
    parser.add_argument("--fields", action="store_true", help="per-field right/wrong/missing")
    parser.add_argument("--device", default="cpu", help="where the model plays (cpu, cuda)")
    parser.add_argument("--max-new-tokens", type=int, default=48, help="tokens per turn at most")
    parser.add_argument("--save", type=Path, help="write each call's outcome here (JSON lines)")
    parser.add_argument("--against", type=Path, help="compare with a --save file's first model")
    parser.add_argument(
        "--line", help="split each row's calls by whether the agent said this line (case ignored)"
    )
    parser.add_argument(
        "--condition",
        help="play this condition's training members (a frozen condition: its one caller) "
        "instead of the ensemble's",
    )
    parser.add_argument(
        "--heldout",
        action="store_true",
        help="play the study's held-out programmatic members (reading results, never tuning)",
    )
    args = parser.parse_args()
    if args.heldout and args.condition is not None:
        parser.error("--heldout and --condition name different members: give one")
    if args.against is not None and not args.against.is_file():
        parser.error(f"{args.against}: no such file (write it with --save)")
    import torch

    from sim2human.agents.lm_models import load
    from sim2human.agents.lm_policy import LMPolicy
    from sim2human.experiments.study.agent_record import is_real
    from sim2human.experiments.study.config import load_study
    from sim2human.experiments.study.world import StudyWorld
    from sim2human.rollout.evaluate import evaluate
    from sim2human.simulators.kinds import needs_endpoint
    from sim2human.stress.adversarial import wilson

    torch.set_num_threads(1)
    cfg = load_study(args.study, quick=True)
    world = StudyWorld.build(cfg)
    members = world.ensemble.train
    if args.condition is not None:
        named = [c for c in cfg.conditions if c.name == args.condition]
        if not named:
            known = ", ".join(c.name for c in cfg.conditions)
            parser.error(f"--condition {args.condition}: not a condition of the study ({known})")
        members = world.train_members(named[0])
    if args.heldout:
        members = [s for s in world.ensemble.heldout if not (is_real(s) or needs_endpoint(s))]
    print(
        "| model | temperature | calls | fields right | gold | complete calls [95% CI] | proxy "
        "| median agent turns | s |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    played: dict[tuple[int, float], list[Any]] = {}
    names = labels(args.models)
    for m, path in enumerate(args.models):
        model, tok = load(path)
        model.to(args.device)
        policy = LMPolicy(
            model,
            tok,
            world.scenario,
            max_new_tokens=args.max_new_tokens,
            device=args.device,
        )
        for temperature in args.temperatures:
            policy.temperature = temperature
            began = time.perf_counter()
            eps = evaluate(
                policy,
                members,
                world.scenario,
                split="heldout" if args.heldout else "train",
                per_member=args.per_member,
                max_turns=world.max_turns,
            )
            played[m, temperature] = eps
            done = sum(e.gold.success for e in eps)
            low, high = wilson(done, len(eps), 1.96)
            print(
                f"| {names[m]} | {temperature} | {len(eps)} "
                f"| {np.mean([e.gold.field_accuracy for e in eps]):.0%} "
                f"| {np.mean([e.gold.score for e in eps]):.2f} "
                f"| {done} = {done / len(eps):.0%} [{low:.0%}, {high:.0%}] "
                f"| {np.mean([e.proxy for e in eps]):.2f} "
                f"| {np.median([e.n_turns for e in eps]):.0f} | {time.perf_counter() - began:.0f} |"
            )
            if args.line:
                print_split(eps, args.line)
            if args.fields:
                print_fields(eps)
    outcomes = [
        {
            "model": names[m],
            "temperature": temperature,
            "member": e.simulator_id,
            "seed": e.seed,
            "fields_right": e.gold.field_accuracy,
            "complete": bool(e.gold.success),
        }
        for (m, temperature), eps in played.items()
        for e in eps
    ]
    if args.save is not None:
        args.save.write_text("".join(json.dumps(o) + "\n" for o in outcomes), encoding="utf-8")
    if len(names) > 1:
        print_differences(outcomes)
    if args.against is not None:
        print_against(args.against, outcomes)


def labels(paths: list[Path]) -> list[str]:
    """Each model folder by as few of its last path parts (two at least: warm starts of other
    settings share a name) as tell the folders apart (two studies' conditions each save a
    ``seed-0/policy``); a folder given again is numbered ("out/ws (2)")."""
    distinct = list(dict.fromkeys(paths))
    parts = {p: [x for x in p.parts if x != p.anchor] for p in distinct}
    longest = max(len(x) for x in parts.values())
    k = 2
    while k < longest and len({tuple(parts[p][-k:]) for p in distinct}) < len(distinct):
        k += 1
    short = {p: "/".join(parts[p][-k:]) for p in distinct}
    if len(set(short.values())) < len(distinct):  # /a/ws beside a/ws
        short = {p: str(p) for p in distinct}
    seen: Counter[Path] = Counter()
    names = []
    for p in paths:
        seen[p] += 1
        names.append(short[p] + (f" ({seen[p]})" if seen[p] > 1 else ""))
    return names


def print_differences(outcomes: list[dict[str, Any]]) -> None:
    """Each model's fields right and complete calls minus the first model's, call by call on
    the same calls."""
    first = outcomes[0]["model"]
    print_difference(
        [o for o in outcomes if o["model"] == first],
        [o for o in outcomes if o["model"] != first],
        "this run",
    )


def print_against(path: Path, outcomes: list[dict[str, Any]]) -> None:
    """``print_difference`` from the calls a ``--save`` file holds."""
    saved = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    print_difference(saved, outcomes, path.name)


def print_difference(
    saved: list[dict[str, Any]], outcomes: list[dict[str, Any]], name: str
) -> None:
    """Each model's fields right and complete calls minus ``saved``'s first model's, call by call
    on the same calls (95% intervals by cluster bootstrap over members); ``name`` says where
    ``saved`` came from."""
    from sim2human.metrics.outcomes import cluster_bootstrap

    first = saved[0]["model"]
    base = {(o["temperature"], o["member"], o["seed"]): o for o in saved if o["model"] == first}
    print(f"\n| model | temperature | minus {first} ({name}): fields right | complete calls |")
    print("|---|---:|---:|---:|")
    for model in dict.fromkeys(o["model"] for o in outcomes):
        for temperature in dict.fromkeys(o["temperature"] for o in outcomes):
            mine = [o for o in outcomes if o["model"] == model and o["temperature"] == temperature]
            keys = [(temperature, o["member"], o["seed"]) for o in mine]
            if not mine or any(k not in base for k in keys):
                raise SystemExit(f"{name}: it did not play the same calls at {temperature}")
            members = [o["member"] for o in mine]
            cells = []
            for what in ("fields_right", "complete"):
                diff = [
                    float(o[what]) - float(base[k][what]) for o, k in zip(mine, keys, strict=True)
                ]
                est = cluster_bootstrap(diff, members)
                cells.append(f"{est.mean:+.1%} [{est.ci[0]:+.1%}, {est.ci[1]:+.1%}]")
            print(f"| {model} | {temperature} | {cells[0]} | {cells[1]} | ")


def print_split(episodes: list[Any], line: str) -> None:
    """The calls whose agent said ``line`` beside the rest: complete calls (Wilson's interval)
    and fields right."""
    from sim2human.stress.adversarial import wilson

    saying = {e.id: any(line.lower() in t.text.lower() for t in e.agent_turns) for e in episodes}
    parts = {
        "said the line": [e for e in episodes if saying[e.id]],
        "did not": [e for e in episodes if not saying[e.id]],
    }
    cells = []
    for name, eps in parts.items():
        done = sum(e.gold.success for e in eps)
        low, high = wilson(done, len(eps), 1.96)
        fields = np.mean([e.gold.field_accuracy for e in eps]) if eps else float("nan")
        cells.append(
            f"{name}: {done} of {len(eps)} complete [{low:.0%}, {high:.0%}], {fields:.0%} of fields"
        )
    print(f"|   | {'; '.join(cells)} | | | | | | | |")


def print_fields(episodes: list[Any]) -> None:
    """Per field: calls whose record holds the caller's value, another one, or nothing."""
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    wrong: list[str] = []
    for e in episodes:
        for field, truth in e.profile.items():
            if field not in e.record:
                continue
            got = e.record[field]
            kind = "missing" if got is None else "right" if got == truth else "wrong"
            counts[field][kind] += 1
            if kind == "wrong":
                wrong.append(f"{field}: heard {truth!r}, recorded {got!r}")
    print("\n| field | right | wrong | missing |\n|---|---:|---:|---:|")
    for field, c in counts.items():
        print(f"| {field} | {c['right']} | {c['wrong']} | {c['missing']} |")
    print("\n" + "\n".join(f"- {w}" for w in wrong[:8]) + "\n")


if __name__ == "__main__":
    main()
