"""Fidelity metrics on planted data: identical sets are indistinguishable, disjoint ones are not."""

from __future__ import annotations

import numpy as np
import pytest

from sim2human.metrics.embeddings import embed_lexical
from sim2human.metrics.fidelity import (
    auc_score,
    disfluency_rate,
    distinguishability_auc,
    fidelity_row,
    frechet_distance,
    hedge_rate,
    mattr,
    wasserstein_1d,
)


def test_identical_distributions_are_indistinguishable_and_at_distance_zero() -> None:
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(300, 24)), rng.normal(size=(300, 24))
    assert abs(distinguishability_auc(a, b) - 0.5) < 0.07
    assert frechet_distance(a, a) == pytest.approx(0.0, abs=1e-6)
    assert frechet_distance(a, b) < 0.1 * frechet_distance(a, b + 1.0)
    assert wasserstein_1d([3, 5, 8], [8, 3, 5]) == 0.0


def test_disjoint_distributions_are_told_apart() -> None:
    rng = np.random.default_rng(1)
    a, b = rng.normal(size=(200, 24)), rng.normal(size=(200, 24)) + 1.0
    assert distinguishability_auc(a, b) > 0.99
    assert frechet_distance(a, b) == pytest.approx(24.0, rel=0.15)  # ||mu diff||^2 = 24
    assert wasserstein_1d([1, 2, 3], [11, 12, 13]) == pytest.approx(10.0)


def test_auc_counts_ties_half() -> None:
    labels = np.array([1.0, 1.0, 0.0, 0.0])
    assert auc_score(np.array([2.0, 3.0, 0.0, 1.0]), labels) == 1.0
    assert auc_score(np.ones(4), labels) == 0.5


def test_text_measures_on_planted_turns() -> None:
    assert mattr(["a b c d e"] * 40) == pytest.approx(5 / 50)
    assert mattr(["one two three"]) == 1.0
    assert disfluency_rate(["um i i went there"]) == pytest.approx(100 * 2 / 5)
    assert hedge_rate(["I think so", "yes", "maybe later", "no"]) == 0.5


def test_a_row_on_planted_texts() -> None:
    human = [f"well i went to the doctor about my knee number {i}" for i in range(60)]
    bots = [f"Medication list item {i}: metformin, lisinopril." for i in range(60)]

    def row(texts: list[str]) -> tuple[float, float]:
        r = fidelity_row(
            "x",
            texts,
            human,
            embed_lexical(texts),
            embed_lexical(human),
            lambda t: "metformin" in t,
        )
        assert r.auc is not None and r.frechet is not None
        return r.auc, r.frechet

    same_auc, same_d = row(human)
    assert abs(same_auc - 0.5) < 0.1 and same_d == pytest.approx(0.0, abs=1e-6)
    far_auc, far_d = row(bots)
    assert far_auc > 0.99 and far_d > 0.5


@pytest.mark.parametrize("dims", [8, 500])  # fewer features than rows, and many more
def test_frechet_distance_matches_the_textbook_formula(dims: int) -> None:
    rng = np.random.default_rng(dims)
    x, y = rng.normal(size=(60, dims)), rng.normal(size=(40, dims)) * 1.5 + 0.3
    sx, sy = np.cov(x, rowvar=False), np.cov(y, rowvar=False)
    w, v = np.linalg.eigh(sx)
    root = (v * np.sqrt(np.clip(w, 0, None))) @ v.T
    cross = np.sqrt(np.clip(np.linalg.eigvalsh(root @ sy @ root), 0, None)).sum()
    gap = ((x.mean(0) - y.mean(0)) ** 2).sum()
    expected = gap + np.trace(sx) + np.trace(sy) - 2 * cross
    assert frechet_distance(x, y) == pytest.approx(expected, rel=1e-6)


def test_scores_give_the_auc_and_an_interval_around_it() -> None:
    from sim2human.metrics.fidelity import auc_interval, distinguishability_scores

    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(200, 24)), rng.normal(size=(200, 24))
    for x, human in ((a, b), (a + 0.4, b)):
        scored = distinguishability_scores(x, human)
        assert scored is not None
        auc = auc_score(*scored)
        assert auc == distinguishability_auc(x, human)
        lo, hi = auc_interval(*scored, np.random.default_rng(1), n_boot=300)
        assert lo < auc < hi and hi - lo < 0.2
    same = auc_interval(*distinguishability_scores(a, b), np.random.default_rng(1), n_boot=300)  # type: ignore[misc]
    apart = auc_interval(*distinguishability_scores(a + 0.4, b), np.random.default_rng(1))  # type: ignore[misc]
    assert same[0] < 0.5 < same[1] and apart[0] > 0.6
    assert distinguishability_scores(a[:3], b) is None
