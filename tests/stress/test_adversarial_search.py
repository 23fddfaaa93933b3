"""Adversarial search: mix filling, the break test, and searches on the scripted agent."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from sim2human.agents.base import AgentTurn, Observation
from sim2human.agents.scripted import ScriptedAgent
from sim2human.errors import UsageError
from sim2human.population.ensemble import Ensemble
from sim2human.rollout.conversation import MAX_TURNS
from sim2human.scenarios.intake.scenario import IntakeScenario
from sim2human.simulators.base import QuirkPool
from sim2human.stress.adversarial import (
    SearchConfig,
    fill,
    newcombe,
    result_json,
    search,
    wilson,
)

SCENARIO = IntakeScenario()
POOL = QuirkPool.from_acts(SCENARIO.acts)
MEMBERS = Ensemble.from_families(["cooperative"], ["noisy-line", "terse-guarded"], 2, POOL).heldout


def test_fill_reaches_the_total_and_caps_at_one() -> None:
    d = np.array([0.7, 0.2, 0.1])
    assert fill(d, 1.0).tolist() == pytest.approx([0.7, 0.2, 0.1])
    m = fill(d, 2.0)
    assert m.sum() == pytest.approx(2.0) and m.max() <= 1.0 and m[0] == 1.0
    assert m[1] / m[2] == pytest.approx(2.0)  # the rest keeps its proportions
    assert fill(d, 5.0).tolist() == [1.0, 1.0, 1.0]
    assert fill(d, 0.0).tolist() == [0.0, 0.0, 0.0]


def test_newcombe_gives_his_papers_worked_example() -> None:
    # Newcombe (1998), Statistics in Medicine 17:873, example (a): 56/70 against 48/80,
    # method 10 (hybrid score): 0.0524 to 0.3339 around a difference of 0.2
    d, lo, hi = newcombe(48, 80, 56, 70)
    assert (round(d, 4), round(lo, 4), round(hi, 4)) == (0.2, 0.0524, 0.3339)
    d, lo, hi = newcombe(56, 70, 48, 80)  # the other way round: the same interval, mirrored
    assert (round(d, 4), round(lo, 4), round(hi, 4)) == (-0.2, -0.3339, -0.0524)


def test_wilson_bounds() -> None:
    lo, hi = wilson(0, 20, 1.96)
    assert lo == 0.0 and 0.15 < hi < 0.17  # 0/20: upper 95% bound ~0.161
    lo, hi = wilson(10, 20, 1.96)
    assert lo == pytest.approx(0.299, abs=1e-3) and hi == pytest.approx(0.701, abs=1e-3)


def test_config_is_checked() -> None:
    with pytest.raises(UsageError, match="threshold"):
        SearchConfig(threshold=0.0)
    with pytest.raises(UsageError, match="population"):
        SearchConfig(population=0)
    with pytest.raises(UsageError, match="unknown perturbation"):
        SearchConfig(perturbations=("nope",))


class Hangs:
    """Closes the call at once: gold success is always 0."""

    name = "hangs"

    def act(self, observations: Sequence[Observation]) -> list[AgentTurn]:
        return [AgentTurn(text="Thank you, goodbye.") for _ in observations]


def test_nothing_to_break_when_clean_success_is_zero() -> None:
    r = search(Hangs(), MEMBERS, SCENARIO, SearchConfig(max_chunks=1), max_turns=MAX_TURNS)
    assert r.status == "nothing-to-break" and r.clean == 0.0 and r.mix is None


def test_search_breaks_the_scripted_agent_with_silence() -> None:
    cfg = SearchConfig(
        perturbations=("silence", "tangents"),
        iterations=1,
        population=2,
        bisect_steps=3,
        chunk_episodes=8,
        max_chunks=4,  # enough episodes for the Wilson test to decide below the full mix
        confirm_episodes=8,
    )
    r = search(ScriptedAgent(SCENARIO), MEMBERS, SCENARIO, cfg, max_turns=MAX_TURNS)
    assert r.clean > 0 and r.target == pytest.approx(0.5 * r.clean)
    assert r.status == "broken" and r.mix is not None and r.total is not None
    assert 0 < r.total <= 2.0
    assert r.episodes <= cfg.max_episodes(len(MEMBERS))
    broke = [p for p in r.probes if p.broke]
    assert any(p.total < 2.0 for p in broke)  # bisection found breaks cheaper than the full mix
    assert any(p.total == pytest.approx(r.total, abs=1e-3) for p in broke)  # the reported one
    out = result_json(r)
    assert out["confirm"]["n"] == 8
    assert all(f["turns"] for f in out["failing"])
    again = search(ScriptedAgent(SCENARIO), MEMBERS, SCENARIO, cfg, max_turns=MAX_TURNS)
    assert again.mix == r.mix  # seeded
