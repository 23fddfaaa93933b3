"""How well the intake extractor reads real patients (ACI-Bench), and how the scripted agent does.

    .venv/bin/python benchmarks/bench_real_phrasing.py [--data DIR]

Part 1, the extractor on real answers: for every encounter, every patient turn that answered a
doctor's question about a field (as the scenario's ``interpret`` reads the doctor's turn), when
the card's value for that field comes from the metadata or the note (an independent truth, not
the transcript itself), is the turn read as that value, as another value, or as nothing? "Nothing"
includes turns that do not say the value at all ("which medications?"), so it bounds the misses.

Part 2, the scripted agent on every replay member of both families (one episode each at
temperature 0): gold success, field accuracy, and the share of verbatim / adapted / fallback
replies. Prints counts side by side; no pass/fail. Part 1 is printed per corpus split: phrasings
for the extractor's heard-only names were looked for in train and valid only; test is the check.
"""

from __future__ import annotations

import argparse
import os
from collections import Counter

from sim2human.agents.scripted import ScriptedAgent
from sim2human.corpora import aci_bench
from sim2human.rollout.conversation import MAX_TURNS
from sim2human.rollout.evaluate import evaluate
from sim2human.scenarios.intake.scenario import IntakeScenario
from sim2human.simulators.base import QuirkPool
from sim2human.simulators.families import get_family
from sim2human.simulators.replay import _member, encounter_ids, reply_shares


def extractor(scenario: IntakeScenario, split: aci_bench.Split) -> None:
    tally: dict[str, Counter[str]] = {f: Counter() for f in scenario.fields}
    for t in aci_bench.load():
        if len(t.patient_turns) < 5 or t.split != split:
            continue
        m = _member(t.encounter_id, scenario)
        for f, ks in m.answers.items():
            if m.card.sources[f] not in ("from-metadata", "from-note"):
                continue
            for k in ks:
                got = scenario.extract(m.turns[k], scenario.empty_record(), f)[f]
                outcome = (
                    "right" if got == m.card.values[f] else "nothing" if got is None else "other"
                )
                tally[f][outcome] += 1
    print(f"split {split}:")
    print("field        answer turns   read right   read nothing   read another value")
    for f, c in tally.items():
        n = sum(c.values())
        if n:
            print(
                f"{f:12} {n:12} {c['right'] / n:12.0%} {c['nothing'] / n:14.0%} "
                f"{c['other'] / n:20.0%}"
            )


def items(scenario: IntakeScenario, split: aci_bench.Split) -> None:
    """List fields: of the card's items that come from the metadata or the note, the share that
    the extractor reads from any of that patient's turns (asked for the field): a measure of the
    names real patients use, not bounded by which turns answered which question."""
    said: dict[str, Counter[str]] = {f: Counter() for f in ("medications", "allergies", "history")}
    for t in aci_bench.load():
        if len(t.patient_turns) < 5 or t.split != split:
            continue
        m = _member(t.encounter_id, scenario)
        for f, tally in said.items():
            card = m.card.values[f]
            if m.card.sources[f] not in ("from-metadata", "from-note") or not card:
                continue
            heard: set[object] = set()
            for turn in m.turns:
                value = scenario.extract(turn, scenario.empty_record(), f)[f]
                heard |= set(value) if isinstance(value, tuple) else set()
            tally["items"] += len(card)  # type: ignore[arg-type]
            tally["read"] += len(heard & set(card))  # type: ignore[arg-type]
    print(
        "  card items read anywhere in the patient's turns: "
        + ", ".join(
            f"{f} {c['read']}/{c['items']} ({c['read'] / max(c['items'], 1):.0%})"
            for f, c in said.items()
        )
    )


def scripted(scenario: IntakeScenario) -> None:
    pool = QuirkPool.from_acts(scenario.acts)
    agent = ScriptedAgent(scenario)
    for name in ("aci-train", "aci-heldout"):
        family = get_family(name)
        n = len(encounter_ids(family.splits))  # type: ignore[attr-defined]
        specs = [family.sample(s, pool, temperature=0.0) for s in range(n)]
        eps = evaluate(agent, specs, scenario, per_member=1, split="heldout", max_turns=MAX_TURNS)
        fields = Counter(f for e in eps for f, ok in e.gold.fields.items() if ok)
        shares = ", ".join(f"{k} {v:.0%}" for k, v in reply_shares(eps).items())
        gold = sum(e.gold.success for e in eps) / len(eps)
        acc = sum(e.gold.field_accuracy for e in eps) / len(eps)
        print(
            f"{name}: {len(eps)} members, scripted gold {gold:.0%}, field accuracy {acc:.0%}; "
            f"replies: {shares}"
        )
        print(
            "  per field: " + ", ".join(f"{f} {fields[f] / len(eps):.0%}" for f in scenario.fields)
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", default=None)
    args = parser.parse_args()
    if args.data:
        os.environ["SIM2HUMAN_DATA"] = args.data
    scenario = IntakeScenario()
    for split in ("train", "valid", "test"):
        extractor(scenario, split)
        items(scenario, split)
    scripted(scenario)


if __name__ == "__main__":
    main()
