"""Extra noise on members: layering, per-episode draws in samplers, and condition configs."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

from sim2human.errors import ConfigError, UsageError
from sim2human.experiments.study.config import parse_study
from sim2human.experiments.study.world import StudyWorld
from sim2human.population.ensemble import Ensemble
from sim2human.samplers.build import PerturbingSampler, build_sampler
from sim2human.samplers.feedback import BatchInfo
from sim2human.scenarios.intake.scenario import IntakeScenario
from sim2human.simulators.base import QuirkPool
from sim2human.simulators.families import get_family
from sim2human.simulators.noise import draw_mix, layer, validate_ranges, with_noise

POOL = QuirkPool.from_acts(IntakeScenario().acts)


def test_layer_is_identity_at_zero_and_monotone() -> None:
    assert layer(0.3, 0.0) == pytest.approx(0.3)
    assert layer(0.0, 0.4) == pytest.approx(0.4)
    assert layer(0.3, 1.0) == pytest.approx(1.0)
    values = [layer(0.2, s) for s in np.linspace(0, 1, 11)]
    assert all(a < b for a, b in itertools.pairwise(values))


def test_with_noise_keeps_the_member_and_its_profile_free_traits() -> None:
    spec = get_family("noisy-line").sample(3, POOL)
    assert with_noise(spec, {}) is spec
    assert with_noise(spec, {"typos": 0.0}) is spec
    noisy = with_noise(spec, {"asr": 0.5, "codeswitch": 0.2})
    assert noisy.id == spec.id and noisy.seed == spec.seed
    assert noisy.traits.noise["asr"] == pytest.approx(layer(spec.traits.noise["asr"], 0.5))
    assert noisy.traits.noise["codeswitch"] == pytest.approx(0.2)
    assert noisy.traits.model_copy(update={"noise": spec.traits.noise}) == spec.traits
    with pytest.raises(UsageError, match="unknown perturbation 'tpyos'"):
        with_noise(spec, {"tpyos": 0.1})
    with pytest.raises(UsageError, match="must be a number in \\[0, 1\\]"):
        with_noise(spec, {"typos": 1.5})


def test_validate_ranges_names_the_bad_entry() -> None:
    assert validate_ranges({"typos": [0, 0.5]}) == {"typos": (0.0, 0.5)}
    with pytest.raises(UsageError, match=r"perturb\.asr: low end 0\.6 is above high end 0\.2"):
        validate_ranges({"asr": [0.6, 0.2]})
    with pytest.raises(UsageError, match=r"perturb\.asr: a severity range must be \[low, high\]"):
        validate_ranges({"asr": 0.3})
    with pytest.raises(UsageError, match="unknown perturbation"):
        validate_ranges({"noise": [0, 1]})


def test_draw_mix_is_seeded_and_within_ranges() -> None:
    ranges = {"typos": (0.0, 0.5), "asr": (0.2, 0.4)}
    a = draw_mix(ranges, np.random.default_rng(1))
    assert a == draw_mix(ranges, np.random.default_rng(1))
    assert 0 <= a["typos"] <= 0.5 and 0.2 <= a["asr"] <= 0.4


def test_perturbing_sampler_draws_fresh_noise_per_episode() -> None:
    ens = Ensemble.from_families(["cooperative"], ["noisy-line"], 2, POOL)
    plain = build_sampler("uniform", ens, POOL)
    assert not isinstance(plain, PerturbingSampler)
    s = build_sampler("uniform", ens, POOL, perturb={"asr": (0.1, 0.6)})
    assert isinstance(s, PerturbingSampler) and s.name == "uniform"
    rng = np.random.default_rng(0)
    specs = [s.next(rng) for _ in range(20)]
    assert {sp.id for sp in specs} <= {m.id for m in ens.train}
    asr = [sp.traits.noise["asr"] for sp in specs]
    assert len(set(asr)) == 20 and all(0.1 <= a <= 0.6 for a in asr)
    again = build_sampler("uniform", ens, POOL, perturb={"asr": (0.1, 0.6)})
    rng = np.random.default_rng(0)
    assert [again.next(rng) for _ in range(20)] == specs


def test_condition_perturb_field_is_validated() -> None:
    base = {
        "name": "t",
        "seeds": [0],
        "conditions": [{"name": "c+perturb", "sampler": "uniform", "perturb": {"typos": [0, 0.5]}}],
    }
    cfg = parse_study(base)
    assert cfg.conditions[0].perturb == {"typos": (0.0, 0.5)}
    base["conditions"][0]["perturb"] = {"typoz": [0, 0.5]}  # type: ignore[index]
    with pytest.raises(ConfigError, match=r"conditions\.0\.perturb: .*unknown perturbation"):
        parse_study(base)
    base["conditions"][0]["perturb"] = {"typos": [0, 2]}  # type: ignore[index]
    with pytest.raises(ConfigError, match="must be a number in"):
        parse_study(base)


def test_collapse_study_has_the_perturbation_condition() -> None:
    from importlib import resources

    from sim2human.experiments.study.config import load_study

    path = resources.files("sim2human").joinpath("examples", "collapse.yaml")
    with resources.as_file(path) as p:
        cfg = load_study(p, quick=True)
    cond = {c.name: c for c in cfg.conditions}["ensemble-randomized+perturb"]
    assert cond.sampler == "randomized" and cond.perturb
    assert cond.perturb_ramp == 1.0  # the curriculum the demo trains with


def test_a_perturb_ramp_opens_the_ranges_as_training_runs() -> None:
    ens = Ensemble.from_families(["cooperative"], ["noisy-line"], 2, POOL)
    ranges = {"asr": (0.1, 0.6), "typos": (0.0, 0.4)}
    s = build_sampler("uniform", ens, POOL, perturb=ranges, perturb_ramp_episodes=100)
    assert isinstance(s, PerturbingSampler) and s.level == 0.0
    rng = np.random.default_rng(0)
    members = {m.id: m for m in ens.train}
    closed = [s.next(rng) for _ in range(10)]  # every range at its low end
    assert all(sp == with_noise(members[sp.id], {"asr": 0.1, "typos": 0.0}) for sp in closed)
    s.update([], BatchInfo(update=0, episodes_seen=50, abs_advantage=()))
    assert s.level == 0.5
    half = [s.next(rng).traits.noise["asr"] for _ in range(50)]
    assert max(half) <= 0.35 + 1e-9 and min(half) >= 0.1  # [0.1, 0.1 + 0.5 * 0.5]
    s.update([], BatchInfo(update=1, episodes_seen=150, abs_advantage=()))
    assert s.level == 1.0
    full = [s.next(rng).traits.noise["asr"] for _ in range(50)]
    assert max(full) > 0.35  # the whole range again
    # the ramp changes severities only: the same members, in the same order, as without it
    plain = build_sampler("uniform", ens, POOL, perturb=ranges)
    assert isinstance(plain, PerturbingSampler) and plain.level == 1.0
    rng_a, rng_b = np.random.default_rng(3), np.random.default_rng(3)
    ramped = build_sampler("uniform", ens, POOL, perturb=ranges, perturb_ramp_episodes=100)
    assert [ramped.next(rng_a).id for _ in range(20)] == [plain.next(rng_b).id for _ in range(20)]


def test_perturb_ramp_is_validated_and_needs_a_budget() -> None:
    base: dict[str, Any] = {
        "name": "t",
        "seeds": [0],
        "conditions": [{"name": "c", "sampler": "uniform", "perturb_ramp": 0.5}],
    }
    with pytest.raises(ConfigError, match="condition 'c': perturb_ramp needs a perturb block"):
        parse_study(base)
    base["conditions"][0]["perturb"] = {"typos": [0, 0.5]}
    base["conditions"][0]["perturb_ramp"] = 1.5
    with pytest.raises(ConfigError, match=r"conditions\.0\.perturb_ramp"):
        parse_study(base)
    base["conditions"][0]["perturb_ramp"] = 0.5
    cfg = parse_study(base)
    world = StudyWorld.build(cfg)
    with pytest.raises(ValueError, match="needs the budget"):
        world.sampler(cfg.conditions[0], 0)
    sampler = world.sampler(cfg.conditions[0], 0, episodes=400)
    assert isinstance(sampler, PerturbingSampler) and sampler.ramp_episodes == 200
