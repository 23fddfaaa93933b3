"""Sampler settings and judging in study configs: validated per sampler, errors name the key."""

from __future__ import annotations

from typing import Any

import pytest

from sim2human.errors import ConfigError, UsageError
from sim2human.experiments.study.config import parse_study
from sim2human.population.ensemble import Ensemble
from sim2human.samplers.build import build_sampler, sampler_args
from sim2human.samplers.must import MustArgs
from sim2human.simulators.base import QuirkPool
from sim2human.simulators.families import HELDOUT_FAMILIES, TRAIN_FAMILIES


def study(condition: dict[str, Any]) -> dict[str, Any]:
    return {"name": "s", "seeds": [0], "conditions": [condition]}


def test_sampler_args_are_validated_per_sampler() -> None:
    cfg = parse_study(study({"name": "m", "sampler": "must", "sampler_args": {"tau": 0.5}}))
    assert cfg.conditions[0].sampler_args == {"tau": 0.5}
    assert isinstance(sampler_args("must", {"tau": 0.5}), MustArgs)
    with pytest.raises(ConfigError, match=r"sampler_args\.bogus: unknown key"):
        parse_study(study({"name": "m", "sampler": "must", "sampler_args": {"bogus": 1}}))
    with pytest.raises(ConfigError, match=r"sampler_args\.beta"):
        parse_study(study({"name": "p", "sampler": "plr", "sampler_args": {"beta": 0}}))
    with pytest.raises(ConfigError, match="unknown key"):
        parse_study(study({"name": "u", "sampler": "uniform", "sampler_args": {"tau": 1}}))


def test_judging_config() -> None:
    cfg = parse_study(
        study({"name": "j", "sampler": "uniform", "judging": {"k": 3, "aggregate": "min"}})
    )
    judging = cfg.conditions[0].judging
    assert judging is not None and judging.k == 3 and judging.aggregate == "min"
    with pytest.raises(ConfigError, match="aggregate"):
        parse_study(study({"name": "j", "sampler": "uniform", "judging": {"aggregate": "max"}}))
    fixed = {
        "name": "f",
        "sampler": "fixed",
        "simulator": {"family": "standard"},
        "judging": {"k": 2},
    }
    with pytest.raises(ConfigError, match="judging needs an ensemble"):
        parse_study(study(fixed))


def test_build_needs_what_each_sampler_reads(pool: QuirkPool) -> None:
    ensemble = Ensemble.from_families(TRAIN_FAMILIES, HELDOUT_FAMILIES, 1, pool)
    with pytest.raises(UsageError, match="scenario"):
        build_sampler("evolve", ensemble, pool)
    with pytest.raises(UsageError, match="oracle_gold"):
        build_sampler("plr", ensemble, pool, args={"score": "gap"})
    plr = build_sampler("plr", ensemble, pool, args={"score": "gap"}, oracle_gold=True)
    assert plr.name == "plr"
