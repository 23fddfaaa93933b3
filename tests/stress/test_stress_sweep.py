"""Severity sweeps and robustness scores: grid checks, paired sweeps, AUC arithmetic, CIs."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sim2human.agents.scripted import ScriptedAgent
from sim2human.errors import UsageError
from sim2human.population.ensemble import Ensemble
from sim2human.rollout.conversation import MAX_TURNS
from sim2human.rollout.evaluate import episode_seed, evaluate
from sim2human.scenarios.intake.scenario import IntakeScenario
from sim2human.simulators.base import QuirkPool
from sim2human.stress.sweep import (
    CLEAN,
    Curves,
    StressPlan,
    check_grid,
    check_perturbations,
    robustness_of,
    summarise_curves,
    sweep,
)

SCENARIO = IntakeScenario()
POOL = QuirkPool.from_acts(SCENARIO.acts)


def test_grid_is_checked_sorted_and_starts_at_zero() -> None:
    assert check_grid([1, 0.5, 0.5]) == (0.0, 0.5, 1.0)
    assert check_grid([0.25]) == (0.0, 0.25)
    with pytest.raises(UsageError, match="grid is empty"):
        check_grid([])
    with pytest.raises(UsageError, match=r"1\.5 is outside \[0, 1\]"):
        check_grid([0.5, 1.5])
    with pytest.raises(UsageError, match="outside"):
        check_grid([float("nan")])
    with pytest.raises(UsageError, match="not a number"):
        check_grid(["x"])


def test_perturbation_names_are_checked() -> None:
    assert check_perturbations(["typos", "misunderstanding"]) == ("misunderstanding", "typos")
    assert len(check_perturbations(None)) == 7
    with pytest.raises(UsageError, match=r"unknown perturbation 'acr'.*did you mean 'asr'"):
        check_perturbations(["acr"])
    with pytest.raises(UsageError, match="no perturbations"):
        check_perturbations([])


def test_plan_points_share_one_clean_point() -> None:
    plan = StressPlan.make(["typos", "asr"], [0, 0.5, 1], 3)
    keys = [k for k, _ in plan.points()]
    assert keys == [CLEAN, "asr@0.5", "asr@1", "typos@0.5", "typos@1"]
    ens = Ensemble.from_families(["cooperative"], ["noisy-line", "terse-guarded"], 2, POOL)
    assert plan.n_episodes(ens.heldout) == 5 * 4 * 3
    own = StressPlan.make(["typos", "asr"], [0, 0.5, 1], 3, {"terse-guarded": 1})
    assert own.n_episodes(ens.heldout) == 5 * (2 * 3 + 2 * 1)
    with pytest.raises(UsageError, match="at least 1"):
        StressPlan.make(None, [0, 1], 0)
    with pytest.raises(UsageError, match=r"at least 1, got 0 \(noisy-line\)"):
        StressPlan.make(None, [0, 1], 3, {"noisy-line": 0})


def test_robustness_arithmetic() -> None:
    means = np.array([[1.0, 0.5, 0.0], [0.5, 0.5, 0.5], [0.0, 0.0, 0.0]])
    norm, auc = robustness_of(means, [0.0, 0.5, 1.0])
    assert auc.tolist() == pytest.approx([0.5, 0.5, 0.0])
    assert norm[:2].tolist() == pytest.approx([0.5, 1.0])
    assert math.isnan(norm[2])  # clean 0: nothing to lose, undefined
    # an uneven grid weighs by width
    norm, auc = robustness_of(np.array([[1.0, 1.0, 0.0]]), [0.0, 0.9, 1.0])
    assert auc[0] == pytest.approx(0.95)


def _curves(values: dict[str, list[list[float]]], grid: list[float]) -> Curves:
    plan = StressPlan.make(["typos"], grid, 1)
    return Curves(plan, (0, 1), {k: np.asarray(v, dtype=float) for k, v in values.items()})


def test_summary_of_an_unaffected_agent_is_one_with_a_tight_ci() -> None:
    ones = [[1.0] * 10, [1.0] * 10]
    s = summarise_curves(_curves({CLEAN: ones, "typos@1": ones}, [0, 1]), n_boot=200)
    assert s["overall"] == {"mean": 1.0, "ci": [1.0, 1.0]}
    assert s["per_perturbation"]["typos"]["mean"] == 1.0
    assert s["clean"]["n"] == 20
    assert [p["severity"] for p in s["curves"]["typos"]] == [0.0, 1.0]


def test_summary_of_a_broken_agent_and_an_undefined_one() -> None:
    clean = [[1.0, 1.0, 0.0, 1.0] * 5, [1.0, 0.0, 1.0, 1.0] * 5]
    zeros = [[0.0] * 20, [0.0] * 20]
    s = summarise_curves(_curves({CLEAN: clean, "typos@1": zeros}, [0, 1]), n_boot=300)
    assert s["overall"]["mean"] == pytest.approx(0.5)  # half the clean area survives
    lo, hi = s["overall"]["ci"]
    assert lo <= 0.5 <= hi and hi - lo < 1e-9  # the ratio AUC/clean is exactly 1/2 per resample
    assert s["auc"]["typos"]["mean"] == pytest.approx(0.375)
    u = summarise_curves(_curves({CLEAN: zeros, "typos@1": zeros}, [0, 1]), n_boot=100)
    assert u["overall"] == {"mean": None, "ci": [None, None]}
    assert u["overall_auc"]["mean"] == 0.0


def test_sweep_clean_point_is_the_evaluation_and_is_deterministic() -> None:
    ens = Ensemble.from_families(["cooperative"], ["noisy-line", "terse-guarded"], 1, POOL)
    members = ens.heldout
    plan = StressPlan.make(["silence", "typos"], [1.0], 3)
    agent = ScriptedAgent(SCENARIO)
    got = sweep(agent, members, SCENARIO, plan, max_turns=MAX_TURNS)
    assert got == sweep(agent, members, SCENARIO, plan, max_turns=MAX_TURNS)
    evals = evaluate(agent, members, SCENARIO, split="heldout", per_member=3, max_turns=MAX_TURNS)
    order = {(e.simulator_id, e.seed): float(e.gold.success) for e in evals}
    assert got[CLEAN] == [order[(m.id, episode_seed(k))] for m in members for k in range(3)]
    assert sum(got[CLEAN]) > 0
    assert got["silence@1"] == [0.0] * 6  # a caller who never speaks cannot be taken in


def test_a_family_with_its_own_count_plays_that_many_episodes_per_member() -> None:
    """A study's ``eval.per_family`` (one call per real patient) sets those members' units;
    the other members keep theirs, and every unit is the evaluation's own episode."""
    ens = Ensemble.from_families(["cooperative"], ["noisy-line", "terse-guarded"], 1, POOL)
    members = ens.heldout
    plan = StressPlan.make(["typos"], [1.0], 3, {"terse-guarded": 1})
    agent = ScriptedAgent(SCENARIO)
    got = sweep(agent, members, SCENARIO, plan, max_turns=MAX_TURNS)
    counts = {"noisy-line": 3, "terse-guarded": 1}
    assert [m.family for m in members] == list(counts)
    units = [(m, k) for m in members for k in range(counts[m.family])]
    assert len(got[CLEAN]) == len(got["typos@1"]) == len(units) == 4
    evals = evaluate(agent, members, SCENARIO, split="heldout", per_member=3, max_turns=MAX_TURNS)
    order = {(e.simulator_id, e.seed): float(e.gold.success) for e in evals}
    assert got[CLEAN] == [order[(m.id, episode_seed(k))] for m, k in units]
