"""Choosing a restyled family's settings on the ACI-Bench train split's *validation* part.

    PYTHONPATH=src .venv/bin/python scripts/restyle_choices.py CACHE.yaml [CACHE2.yaml ...]

Each cache (``sim2human restyle-family --out CACHE.yaml ...``, or ``retrieve-family``'s) is
played several ways:
restyling all its lines, only the lines that state a value, or only the others (``--which``);
with its rewrites as made, only those the extractor reads the same whatever field it expects
(``strict``), or only those of at most 25 words without a repeated word trigram (``plain``)
(``--rules``); next to ``fitted-aci`` (the same traits, template words). Every variant plays
the scripted agent (``--members`` x ``--per-member`` calls; the same member seeds, hence the same
traits and behaviour, for every variant, so only the words differ); its user turns are
scored against the validation part (every third train visit): MiniLM and lexical AUC (0.5 =
indistinguishable; 95% bootstrap over turns, fold scores fixed) and ``fit-family``'s distance.
Few-shot examples came from the fit part only; held-out visits are never read.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

import numpy as np

from sim2human import seeding
from sim2human.agents.scripted import ScriptedAgent
from sim2human.metrics.embeddings import embed
from sim2human.metrics.fidelity import auc_interval, auc_score, distinguishability_scores
from sim2human.rollout.evaluate import evaluate
from sim2human.scenarios.intake.grounding import restyle_family as rf
from sim2human.scenarios.intake.grounding.fit_family import Target, score, train_parts, user_turns
from sim2human.scenarios.intake.scenario import IntakeScenario
from sim2human.simulators.base import Family, QuirkPool
from sim2human.simulators.families import get_family
from sim2human.simulators.restyle_entries import SLOT, Restyle
from sim2human.simulators.restyled import (
    VOICES,
    RestyledFamily,
    Voice,
    load_restyled,
    same_reading,
)
from sim2human.types import Episode

CAP = 300


SCENARIO = IntakeScenario()
WHICH: dict[str, Callable[[Restyle], bool]] = {
    "all": lambda r: True,
    "answers": lambda r: r.field is not None,
    "others": lambda r: r.field is None,
}


def strict(lines: tuple[Restyle, ...]) -> tuple[Restyle, ...]:
    """Only rewrites read the same whatever field is expected (every value of a template)."""
    values = rf.fillers(SCENARIO, [rf.Line(r.line, r.field, r.field or "") for r in lines], 0)

    def same(r: Restyle, w: str) -> bool:
        vals = values.get(rf.Line(r.line, r.field, r.field or ""), [""]) if SLOT in r.line else [""]
        return all(
            same_reading(SCENARIO, r.line.replace(SLOT, v), w.replace(SLOT, v)) for v in vals
        )

    return tuple(
        r.model_copy(update={"rewrites": tuple(w for w in r.rewrites if same(r, w))}) for r in lines
    )


def plain(lines: tuple[Restyle, ...]) -> tuple[Restyle, ...]:
    """Only rewrites of at most 25 words with no word trigram said twice (``too_long``)."""

    return tuple(
        r.model_copy(update={"rewrites": tuple(w for w in r.rewrites if not rf.too_long(w))})
        for r in lines
    )


RULES: dict[str, Callable[[tuple[Restyle, ...]], tuple[Restyle, ...]]] = {
    "as-made": lambda lines: lines,
    "strict": strict,
    "plain": plain,
}


def variants(path: Path, which: list[str], rules: list[str]) -> dict[str, RestyledFamily]:
    """The cache played several ways (its voice registered under each variant's name)."""
    family, lines = load_restyled(path.read_text(encoding="utf-8"), path)
    out: dict[str, RestyledFamily] = {}
    for rule in rules:
        ruled = RULES[rule](lines)
        for w in which:
            name = f"{path.stem}:{w}:{rule}"
            VOICES[name] = Voice.of(tuple(r for r in ruled if WHICH[w](r)))
            out[name] = family.model_copy(update={"name": name})
    return out


def play(family: Family, members: int, per_member: int, seed: int) -> list[Episode]:
    """Calls of the scripted agent with the *same* members for every variant (common random
    numbers: the member seeds of one name, so every variant draws the same traits and plays the
    same behaviour, and only the words differ), under the variant's name (its voice)."""
    scenario = IntakeScenario()
    base = seeding.seed(seed, "member", "restyled-aci")
    pool = QuirkPool.of(scenario)
    specs = [family.sample(base + k, pool) for k in range(members)]
    specs = [s.model_copy(update={"family": family.name}) for s in specs]
    agent = ScriptedAgent(scenario)
    return evaluate(agent, specs, scenario, split="fit", per_member=per_member, max_turns=20)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("caches", nargs="+", type=Path)
    parser.add_argument("--members", type=int, default=12)
    parser.add_argument("--per-member", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--which", nargs="+", default=list(WHICH), choices=list(WHICH))
    parser.add_argument("--rules", nargs="+", default=list(RULES), choices=list(RULES))
    args = parser.parse_args()
    _, val_part = train_parts()
    target = Target.of(val_part, 300, args.seed)
    rng = np.random.default_rng(args.seed)
    human = list(val_part.turns)
    human = [human[i] for i in sorted(rng.choice(len(human), min(CAP, len(human)), replace=False))]
    families = {"fitted-aci": get_family("fitted-aci")}
    for path in args.caches:
        families.update(variants(path, args.which, args.rules))
    print(f"validation part: {len(val_part.encounters)} train visits, {len(human)} turns")
    print("| variant | turns | words/turn | disfl./100w | answer | wander | distance | AUC lexical"
          " | AUC MiniLM [95% CI] |")  # fmt: skip
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, family in families.items():
        turns, per_call = user_turns(play(family, args.members, args.per_member, args.seed + 1))
        s = score(turns, per_call, target, 300, args.seed)
        pick = np.random.default_rng(args.seed)  # the same turns of each variant's calls
        sample = [
            turns[i] for i in sorted(pick.choice(len(turns), min(CAP, len(turns)), replace=False))
        ]
        matrix, _ = embed(sample + human, "minilm")
        matrix = np.nan_to_num(matrix)
        scored = distinguishability_scores(matrix[: len(sample)], matrix[len(sample) :])
        lo, hi = auc_interval(*scored, np.random.default_rng(1)) if scored else (np.nan, np.nan)
        auc = auc_score(*scored) if scored else float("nan")
        b = s.behaviour
        print(
            f"| {name} | {b.n_turns} | {b.mean_words:.2f} | {b.disfluency:.2f} | {b.answer:.2f} | "
            f"{b.wander:.2f} | {s.distance:.1f} | {s.auc:.3f} | {auc:.3f} [{lo:.3f}, {hi:.3f}] |"
        )


if __name__ == "__main__":
    main()
