"""The population every adapter draws from, and evaluation of agents trained elsewhere."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from sim2human.errors import UsageError
from sim2human.integrations.evaluation import chat_agent_for, evaluate_agent
from sim2human.integrations.population import population
from sim2human.integrations.rows import draw_rows, eval_rows
from sim2human.population.ensemble import Ensemble
from sim2human.simulators.base import QuirkPool

STUDY = Path(__file__).parents[2] / "examples" / "collapse.yaml"


def test_the_real_callers_a_study_names_are_left_out_with_a_note() -> None:
    """The CLI plays a study's replayed real callers; a trainer's population says it does not."""
    with pytest.warns(UserWarning, match=r"real callers \(aci-heldout\) are left out"):
        pop = population(STUDY, condition="frozen-small")
    assert pop.left_out == ("aci-heldout",)
    assert all(s.family != "aci-heldout" for s in pop.members("heldout"))


def test_conditions_choose_the_sampler_and_the_frozen_member() -> None:
    frozen = population(STUDY, condition="frozen-small")
    assert frozen.sampler.name == "fixed" and len(frozen.members("train")) == 1
    rng = np.random.default_rng(0)
    assert {frozen.draw(rng)[0].id for _ in range(5)} == {frozen.members("train")[0].id}
    randomized = population(STUDY, condition="ensemble-randomized")
    drawn = {randomized.draw(rng)[0].id for _ in range(5)}
    assert len(drawn) == 5 and drawn <= set(randomized.trained_on)
    with pytest.raises(UsageError, match="not both"):
        population(STUDY, condition="frozen-small", sampler="uniform")
    with pytest.raises(UsageError, match="needs a study"):
        population(randomized.ensemble, condition="frozen-small")


def test_rows_carry_their_member_to_another_process(pool: QuirkPool) -> None:
    ens = Ensemble.from_families(["chatty"], ["noisy-line"], 2, pool)
    pop = population(ens, sampler="randomized")
    row = draw_rows(pop, 1)[0]
    elsewhere = population(ens, sampler="randomized")  # never drew this member
    with pytest.raises(UsageError, match="no member"):
        elsewhere.member(row["member"])
    spec = elsewhere.resolve(row["member"], row["spec"])
    assert spec.id == row["member"] and spec.family == "chatty"
    held = eval_rows(pop, "heldout", per_member=2)
    assert len(held) == 4 and {r["family"] for r in held} == {"noisy-line"}


def test_a_chat_agent_is_evaluated_like_the_built_in_one(tmp_path: Path) -> None:
    seen: list[list[dict[str, Any]]] = []

    def respond(messages: list[dict[str, Any]]) -> str:
        seen.append(messages)
        return "What is the main problem today?"

    pop = population()
    evals = evaluate_agent(
        chat_agent_for(pop, respond), pop, per_member=1, splits=("heldout",), out=tmp_path
    )
    assert len(evals) == len(pop.members("heldout"))
    assert seen[0][0]["role"] == "system" and seen[0][1]["role"] == "user"
    assert all(m["role"] in ("user", "assistant") for m in seen[-1][1:])
    assert (tmp_path / "summary.json").exists() and (tmp_path / "members.json").exists()


def test_prioritized_level_replay_learns_from_a_trainer_s_groups(pool: QuirkPool) -> None:
    """A user's GRPO trainer feeds its groups whole: PLR scores each level (member, seed) by its
    calls' reward spread, as the study's GRPO does, where it used to refuse the batch for want
    of the trainer's advantages."""
    from sim2human.types import Episode, Outcome

    ens = Ensemble.from_families(["chatty"], ["noisy-line"], 2, pool)
    pop = population(ens, sampler="plr", sampler_args={"min_levels": 1})
    rng = np.random.default_rng(0)
    levels = [pop.draw(rng) for _ in range(2)]
    lost = Outcome(success=False, fields={}, completed=False, dropped=False)
    calls = [
        Episode.model_construct(simulator_id=spec.id, seed=seed, proxy=proxy, gold=lost)
        for (spec, seed), proxies in zip(levels, [(0.2, 0.6, 1.0), (0.5, 0.5, 0.5)], strict=True)
        for proxy in proxies
    ]
    pop.update(calls)
    scores = dict(zip(pop.sampler.levels, pop.sampler.scores, strict=True))  # type: ignore[attr-defined]
    (spec_a, seed_a), (spec_b, seed_b) = levels
    assert scores[(spec_a.id, seed_a)] == pytest.approx((0.4 + 0.0 + 0.4) / 3)  # about 0.6
    assert scores[(spec_b.id, seed_b)] == 0.0
    assert (pop.updates, pop.seen) == (1, 6)
