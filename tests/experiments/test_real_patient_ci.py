"""Real people's CIs resample visits (seeds pooled) and each seed's mean is stored and shown;
the programmatic held-out families still resample seeds."""

from __future__ import annotations

from planted_runs import study_result, study_row
from sim2human.experiments.study.aggregate import real_patient_rows, score_rows
from sim2human.metrics.outcomes import cluster_bootstrap
from sim2human.report.summary import summarise
from sim2human.report.tables import REAL_SEEDS
from sim2human.types import Episode, Outcome


def _call(visit: str, seed: int, ok: bool, *, real: bool = True) -> Episode:
    return Episode(
        id=f"{visit}/{seed}",
        scenario="intake",
        simulator_id=visit,
        family="aci-heldout" if real else "noisy-line",
        kind="replay" if real else "persona",
        split="heldout",
        seed=seed,
        turns=(),
        proxy=0.5,
        gold=Outcome(success=ok, fields={"a": ok}, completed=True, dropped=False),
        termination="completed",
        profile={},
        record={},
        phase="eval",
    )


def test_real_people_resample_visits_and_keep_each_seeds_mean() -> None:
    # seed 0 wins visits v0-v5, seed 1 wins v0-v2: visits differ a lot, seeds less
    tagged = [(0, _call(f"v{k}", 0, k < 6)) for k in range(10)]
    tagged += [(1, _call(f"v{k}", 1, k < 3)) for k in range(10)]
    tagged += [(s, _call(f"p{k}", s, k % 2 == 0, real=False)) for s in (0, 1) for k in range(4)]
    rows = real_patient_rows(tagged, 200)
    real = [(s, e) for s, e in tagged if e.family == "aci-heldout"]
    values = [float(e.gold.success) for _, e in real]
    by_visit = cluster_bootstrap(values, [e.simulator_id for _, e in real], n_boot=200)
    by_seed = cluster_bootstrap(values, [s for s, _ in real], n_boot=200)
    assert rows["heldout_gold_real"] == by_visit.stored() != by_seed.stored()
    assert rows["heldout_gold_real"]["n"] == 20
    assert rows["heldout_gold_real_by_seed"] == {"0": 0.6, "1": 0.3}
    prog = [(s, e) for s, e in tagged if e.family == "noisy-line"]
    seeded = cluster_bootstrap(
        [float(e.gold.success) for _, e in prog], [s for s, _ in prog], n_boot=200
    )
    assert rows["heldout_gold_programmatic"] == seeded.stored()
    scores = score_rows(tagged, 200)
    assert scores["heldout_score_real"] == by_visit.stored()
    assert scores["heldout_score_real_by_seed"] == {"0": 0.6, "1": 0.3}


def test_the_real_people_table_shows_each_seed() -> None:
    real = {
        "heldout_gold_real": {"mean": 0.45, "ci": [0.3, 0.6], "n": 274},
        "heldout_gold_real_by_seed": {"0": 0.6, "1": 0.3, "2": 0.45},
    }
    s = summarise(None, None, study_result(study_row("a", **real), study_row("b")))
    table = s.table("real")
    assert table is not None and REAL_SEEDS in table.columns
    (row,) = table.rows  # "b" has no real people: not in this table
    assert row[table.columns.index(REAL_SEEDS)] == "60 / 30 / 45"
    assert "resample visits" in table.note
