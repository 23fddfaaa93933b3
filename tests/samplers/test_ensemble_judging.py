"""Ensemble judging: aggregates, who judges, and the trainer training on the judged score."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from adaptive_helpers import with_traits

from sim2human.agents.base import AgentTurn, Observation
from sim2human.agents.policy import PolicyAgent
from sim2human.agents.scripted import ScriptedAgent
from sim2human.population.panel import EnsembleJudge, JudgePanel, JudgingConfig, combine
from sim2human.rollout.conversation import MAX_TURNS, Job
from sim2human.rollout.play import play
from sim2human.samplers.build import UniformSampler
from sim2human.samplers.feedback import BatchInfo
from sim2human.scenarios.intake.scenario import IntakeScenario
from sim2human.simulators.base import QuirkPool, Quirks, SimulatorSpec
from sim2human.simulators.families import get_family
from sim2human.train.config import PPOConfig
from sim2human.train.ppo import train
from sim2human.types import Episode


class Flatterer:
    """Says the liked phrasing three times, then hangs up without asking anything."""

    name = "flatterer"

    def __init__(self, phrase: str) -> None:
        self.phrase = phrase

    def act(self, observations: Sequence[Observation]) -> list[AgentTurn]:
        return [AgentTurn(self.phrase if o.turn < 3 else "Goodbye.") for o in observations]


def test_aggregates() -> None:
    s = [0.9, 0.5, 0.4]
    assert combine(s, "mean") == pytest.approx(0.6)
    assert combine(s, "min") == pytest.approx(0.4)
    assert combine(s, "mean-std", lam=1.0) == pytest.approx(0.6 - float(np.std(s)))
    assert combine(s, "mean-std", lam=0.0) == pytest.approx(0.6)
    assert combine([0.1, 0.9], "mean-std", lam=5.0) == 0.0  # clipped to [0, 1]


def members(pool: QuirkPool) -> list[SimulatorSpec]:
    family = get_family("cooperative")
    return [family.sample(k, pool) for k in range(5)]


def test_panel_excludes_the_player_and_is_seeded(scenario: IntakeScenario, pool: QuirkPool) -> None:
    ms = members(pool)
    eps = play(
        ScriptedAgent(scenario), [Job(ms[0], 3), Job(ms[1], 4)], scenario, max_turns=MAX_TURNS
    )
    panel = JudgePanel(ms, scenario, k=3, seed=0)
    scores = panel.others(eps[0])
    assert len(scores) == 3 and scores == JudgePanel(ms, scenario, k=3, seed=0).others(eps[0])
    alone = JudgePanel(ms[:2], scenario, k=3, seed=0)
    assert len(alone.others(eps[0])) == 1  # only the other member can judge


def test_an_exploited_member_disagrees_with_the_panel(
    scenario: IntakeScenario, pool: QuirkPool
) -> None:
    ms = members(pool)
    liked = next(p for p in pool.liked if p in pool.triggers)  # a pure style phrasing
    planted = with_traits(
        ms[0], "planted", quirks=Quirks(over_rewarded=(liked,), bonus=0.3, leniency=1.0)
    )
    flattering = play(Flatterer(liked), [Job(planted, 5)], scenario, max_turns=MAX_TURNS)[0]
    own_score = flattering.proxy
    judge = EnsembleJudge(JudgePanel([planted, *ms[1:]], scenario, k=4), JudgingConfig())
    panel_scores = judge.panel.others(flattering)
    assert own_score > max(panel_scores) + 0.3
    assert judge(flattering, own_score) < np.mean([own_score, *panel_scores])


class Recording(UniformSampler):
    def __init__(self, members: Sequence[SimulatorSpec]) -> None:
        super().__init__(members)
        self.infos: list[BatchInfo] = []

    def update(self, episodes: Sequence[Episode], info: BatchInfo | None = None) -> None:
        assert info is not None
        self.infos.append(info)


def test_trainer_trains_on_the_judged_score(scenario: IntakeScenario, pool: QuirkPool) -> None:
    calls: list[tuple[str, float]] = []

    def judge(episode: Episode, own: float) -> float:
        calls.append((episode.id, own))
        return 0.25

    sampler = Recording(members(pool))
    cfg = PPOConfig(episodes=16, batch_episodes=8, epochs=1)
    train(PolicyAgent(scenario, seed=0), sampler, scenario, cfg, seed=0, judge=judge)
    assert len(calls) == 16
    assert [i.judged for i in sampler.infos] == [(0.25,) * 8, (0.25,) * 8]
    assert all(len(i.abs_advantage) == 8 for i in sampler.infos)
