"""Asks for a field the record already holds: how often a condition's agents make them, what they
change, and what leaving them out would cost (docs/results/collapse.md, "A turn above the
reference").

    .venv/bin/python scripts/filled_asks.py RUN_DIR CONDITION [--split train|heldout] [--replay]

Each programmatic evaluation call of ``--split`` (replayed people left out) is read again turn by
turn through the run's scenario (its ``initial_state``, ``hear_agent``, ``hear_user``: the
record as the call built it). An ask counts when the record held its field before the ask.
Printed: such asks a call per seed, by field, by how often the field was asked before; of the
asks, how many changed the asked field (right -> right, wrong -> right, right -> wrong, against
the caller's profile) and how many were followed by a reply that filled another, still missing
field. ``--replay``: every call replayed against its member as stored and with those asks left
out (open loop, the agent's other turns as played: ``diagnostics.replay``'s way), gold and proxy
per family. A slot-filling scenario only.
"""

from __future__ import annotations

import argparse
import statistics
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from sim2human.agents.base import AgentTurn
from sim2human.diagnostics.replay import play_script
from sim2human.diagnostics.rundir import SubRun, load_run_dir
from sim2human.rollout.conversation import Conversation
from sim2human.types import Episode


def asked_field(turn: Any) -> str | None:
    parts = (turn.act or "").split(".")
    return parts[1] if parts[0] == "ask" and len(parts) > 1 else None


def right(value: Any, wanted: Any) -> bool:
    return value == (tuple(wanted) if isinstance(wanted, list) else wanted)


def read_again(scenario: Any, e: Episode, counts: Counter[str]) -> None:
    """Count ``e``'s asks of filled fields and what each reply did."""
    state = scenario.initial_state(e.profile)
    asked: Counter[str] = Counter()
    pending: tuple[str, Any] | None = None
    for t in e.turns:
        if t.speaker == "user":
            before = dict(scenario.record(state))
            state = scenario.hear_user(state, t.text)
            after = scenario.record(state)
            if pending is not None:
                field, old = pending
                new = after.get(field)
                kind = "list" if isinstance(old, tuple) else "single"
                how = f"{right(old, e.profile.get(field))}->{right(new, e.profile.get(field))}"
                counts[f"{kind} field, value {'changed' if new != old else 'kept'}, {how}"] += 1
                counts["reply filled another missing field"] += any(
                    before.get(k) is None and after[k] is not None for k in after if k != field
                )
                pending = None
            continue
        field = asked_field(t)
        if field is not None and scenario.record(state).get(field) is not None:
            counts["asks of a filled field"] += 1
            counts[f"field {field}"] += 1
            counts[f"asked {asked[field]} time(s) before"] += 1
            pending = (field, scenario.record(state).get(field))
        if field is not None:
            asked[field] += 1
        state = scenario.hear_agent(state, AgentTurn(text=t.text, act=t.act, field=field))


def replayed(sub: SubRun, scenario: Any, e: Episode, leave_out: bool) -> Episode:
    """``e`` played again against its member, with asks of filled fields left out or not."""

    def keep(conv: Conversation, turn: Any, field: str | None) -> bool:
        filled = field is not None and scenario.record(conv.state).get(field) is not None
        return not (leave_out and asked_field(turn) is not None and filled)

    return play_script(e, e.agent_turns, sub.specs[e.simulator_id], scenario, sub.max_turns, keep)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("condition")
    parser.add_argument("--split", default="heldout", choices=("train", "heldout"))
    parser.add_argument("--replay", action="store_true", help="replay with those asks left out")
    args = parser.parse_args()
    run = load_run_dir(args.run_dir, args.condition)
    scenario = run.scenario
    pooled: Counter[str] = Counter()
    by_family: dict[str, list[tuple[Episode, Episode]]] = defaultdict(list)
    n_all = 0
    for sub in run.conditions[args.condition]:
        calls = [e for e in sub.evals if e.split == args.split and e.kind != "replay"]
        counts: Counter[str] = Counter()
        for e in calls:
            read_again(scenario, e, counts)
            if args.replay and e.simulator_id in sub.specs:
                pair = (replayed(sub, scenario, e, False), replayed(sub, scenario, e, True))
                by_family[e.family].append(pair)
        share = counts["asks of a filled field"] / max(1, len(calls))
        print(f"{sub.run}: {len(calls)} calls, {share:.2f} asks a call")
        pooled.update(counts)
        n_all += len(calls)
    print(f"pooled over {n_all} calls (a call):")
    for key, value in sorted(pooled.items()):
        print(f"  {key}: {value / max(1, n_all):.3f}")
    for family, pairs in sorted(by_family.items()):
        base, out = ([p[i] for p in pairs] for i in (0, 1))
        gold = [statistics.mean(float(e.gold.success) for e in eps) for eps in (base, out)]
        proxy = [statistics.mean(e.proxy for e in eps) for eps in (base, out)]
        turns = [statistics.mean(len(e.agent_turns) for e in eps) for eps in (base, out)]
        print(
            f"replayed, {family} (n={len(pairs)}): gold {gold[0]:.2f} -> {gold[1]:.2f}, "
            f"proxy {proxy[0]:.3f} -> {proxy[1]:.3f}, agent turns {turns[0]:.1f} -> {turns[1]:.1f}"
        )


if __name__ == "__main__":
    main()
