"""Ensembles split by family; samplers draw what they say and never a held-out member."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from sim2human.errors import UsageError
from sim2human.population.ensemble import Ensemble
from sim2human.samplers.build import build_sampler
from sim2human.simulators.base import QuirkPool
from sim2human.simulators.families import FAMILIES, HELDOUT_FAMILIES, TRAIN_FAMILIES


@pytest.fixture(scope="module")
def ensemble(pool: QuirkPool) -> Ensemble:
    return Ensemble.from_families(TRAIN_FAMILIES, HELDOUT_FAMILIES, 3, pool)


def test_split_is_by_family(ensemble: Ensemble) -> None:
    assert {s.family for s in ensemble.train} == set(TRAIN_FAMILIES)
    assert {s.family for s in ensemble.heldout} == set(HELDOUT_FAMILIES)
    assert len(ensemble.train) == 9 and len({s.id for s in ensemble.train}) == 9


def test_a_family_cannot_be_both_train_and_heldout(pool: QuirkPool) -> None:
    with pytest.raises(UsageError, match="both train and held-out"):
        Ensemble.from_families(["cooperative"], ["cooperative"], 1, pool)


def test_heldout_families_differ_in_traits_not_only_seeds() -> None:
    def noise_kinds(names: tuple[str, ...]) -> set[str]:
        return {k for n in names for k in FAMILIES[n].noise}

    assert noise_kinds(HELDOUT_FAMILIES) - noise_kinds(TRAIN_FAMILIES)  # e.g. ASR confusions
    confusion = max(FAMILIES[n].jargon_confusion[1] for n in TRAIN_FAMILIES)
    assert FAMILIES["elderly-confused"].jargon_confusion[0] > confusion


def test_member_draws_are_seeded(pool: QuirkPool) -> None:
    a = Ensemble.from_families(TRAIN_FAMILIES, HELDOUT_FAMILIES, 2, pool, seed=4)
    b = Ensemble.from_families(TRAIN_FAMILIES, HELDOUT_FAMILIES, 2, pool, seed=4)
    c = Ensemble.from_families(TRAIN_FAMILIES, HELDOUT_FAMILIES, 2, pool, seed=5)
    assert a == b and a.train != c.train


def test_fixed_uniform_randomized(ensemble: Ensemble, pool: QuirkPool) -> None:
    rng = np.random.default_rng(0)
    fixed = build_sampler("fixed", ensemble, pool, ensemble.train[0])
    assert {fixed.next(rng).id for _ in range(20)} == {ensemble.train[0].id}

    uniform = build_sampler("uniform", ensemble, pool)
    counts = Counter(uniform.next(rng).id for _ in range(9000))
    assert set(counts) == {s.id for s in ensemble.train}
    assert max(counts.values()) < 1.2 * min(counts.values())

    randomized = build_sampler("randomized", ensemble, pool)
    drawn = [randomized.next(rng) for _ in range(300)]
    assert len({s.id for s in drawn}) > 290  # a fresh trait draw almost every episode
    assert {s.family for s in drawn} == set(TRAIN_FAMILIES)
    heldout = {s.id for s in ensemble.heldout}
    assert not heldout & {s.id for s in drawn}


def test_unknown_sampler_and_missing_fixed_spec(ensemble: Ensemble, pool: QuirkPool) -> None:
    with pytest.raises(UsageError, match="unknown sampler 'best'"):
        build_sampler("best", ensemble, pool)
    with pytest.raises(UsageError, match="needs a 'simulator'"):
        build_sampler("fixed", ensemble, pool)
