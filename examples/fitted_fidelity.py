"""Persona families against *held-out* real patients, on calls with one fixed agent.

    .venv/bin/python examples/fitted_fidelity.py [--embedder minilm] [--cap 200]

(the corpus from ``../shared/data`` or ``$SIM2HUMAN_DATA``). Every family plays the scripted
reference agent (``--members`` draws, ``--per-member`` calls each), so the table compares
simulators, not calls; its user turns are measured against held-out ACI-Bench patient turns
(valid + test, half A by alternating encounter), as ``sim2human fidelity`` does, with the other
half (B) as the human row. AUC intervals: 95% percentile bootstrap over turns, each side
resampled, with the classifier's held-out-fold scores fixed. Run it once a fit is fixed: this is
the held-out measurement, never an input to the fit (``sim2human fit-family``) or to a
restyled family's settings (``sim2human restyle-family`` or ``retrieve-family``, chosen with
``scripts/restyle_choices.py`` on the train split's validation part).
"""

from __future__ import annotations

import argparse

import numpy as np

from sim2human.metrics.embeddings import embed
from sim2human.metrics.fidelity import auc_interval, distinguishability_scores, fidelity_row
from sim2human.report.fidelity import human_halves
from sim2human.scenarios.intake.grounding.fit_family import play_family, reads_value, user_turns
from sim2human.scenarios.intake.replay import ACI_BENCH
from sim2human.simulators.families import get_family

FAMILIES = (
    "standard",
    "cooperative",
    "chatty",
    "anxious",
    "elderly-confused",
    "noisy-line",
    "terse-guarded",
    "fitted-aci",
    "restyled-aci",
    "retrieved-aci",
    "refitted-aci",
)
SEED = 1000
"""Member seeds of this measurement (``seeding`` stream ``member`` at this root): not the fit's."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--families", nargs="+", default=list(FAMILIES))
    parser.add_argument("--members", type=int, default=6)
    parser.add_argument("--per-member", type=int, default=3)
    parser.add_argument("--cap", type=int, default=200, help="turns per family and human half")
    parser.add_argument("--embedder", default="minilm", choices=("minilm", "lexical"))
    parser.add_argument(
        "--seed", type=int, default=SEED, help="root of the member seeds (other draws of members)"
    )
    args = parser.parse_args()
    rng = np.random.default_rng(0)

    def sample(texts: list[str]) -> list[str]:
        texts = [t for t in texts if t.strip()]
        if len(texts) <= args.cap:
            return texts
        return [texts[i] for i in sorted(rng.choice(len(texts), args.cap, replace=False))]

    ref_all, other, n_enc = human_halves(ACI_BENCH, set())
    ref = sample(ref_all)
    groups: dict[str, tuple[list[str], float]] = {"human (other half)": (sample(other), 0.0)}
    for name in args.families:
        turns, per_call = user_turns(
            play_family(get_family(name), args.members, args.per_member, args.seed)
        )
        groups[name] = (sample(turns), per_call)
    texts = ref + [t for g, _ in groups.values() for t in g]
    matrix, embedder = embed(texts, args.embedder)
    matrix = np.nan_to_num(matrix)
    ref_emb, at = matrix[: len(ref)], len(ref)
    print(
        f"Held-out ACI-Bench patients: {n_enc} encounters, half A {len(ref)} turns; "
        f"{args.members} members x {args.per_member} calls per family with the scripted agent "
        f"(member seed root {args.seed}); "
        f"embeddings: {embedder}; AUC 95% CI: bootstrap over turns"
    )
    print(
        "| family | turns | words/turn | length W1 | disfl./100w | hedge | answer | ask | wander "
        "| user turns/call | AUC [95% CI] |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, (turns, per_call) in groups.items():
        emb = matrix[at : at + len(turns)]
        at += len(turns)
        row = fidelity_row(name, turns, ref, emb, ref_emb, reads_value)
        scored = distinguishability_scores(emb, ref_emb)
        ci = auc_interval(*scored, np.random.default_rng(1)) if scored else (np.nan, np.nan)
        calls = f"{per_call:.1f}" if per_call else "-"
        print(
            f"| {name} | {row.n_turns} | {row.mean_words:.2f} | {row.length_w1:.2f} | "
            f"{row.disfluency:.2f} | {row.hedge:.2f} | {row.answer:.2f} | {row.ask:.2f} | "
            f"{row.wander:.2f} | {calls} | {row.auc:.2f} [{ci[0]:.2f}, {ci[1]:.2f}] |"
        )


if __name__ == "__main__":
    main()
