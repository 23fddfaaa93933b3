"""Named seed streams: distinct by name and path, stable across processes, free of collisions,
and an episode's draws are its own whatever else is played with it."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence

import pytest
import torch

from sim2human import seeding
from sim2human.agents.base import Agent, AgentTurn, Observation
from sim2human.agents.policy import PolicyAgent
from sim2human.population.ensemble import Ensemble
from sim2human.rollout.evaluate import episode_seed, evaluate
from sim2human.scenarios.intake.scenario import IntakeScenario
from sim2human.simulators.base import QuirkPool, SimulatorSpec
from sim2human.types import Episode

GOLDEN = {
    ("member", 0, ("cooperative",)): 27111235570322,
    ("evaluation", 7, (3,)): 131375348573459,
}
"""Pinned values: a change here changes every study's members and episodes."""


def test_names_and_paths_give_distinct_streams() -> None:
    seeds = {
        seeding.seed(0, name, *path)
        for name in ("member", "evaluation", "confirmation", "profile")
        for path in [(), (0,), (1,), ("a",), ("a", 0), (0, "a"), ("0",)]
    }
    assert len(seeds) == 4 * 7
    assert seeding.seed(1, "member", "a", 0) != seeding.seed(0, "member", "a", 0)
    a, b = seeding.stream(3, "user").random(4), seeding.stream(3, "user").random(4)
    assert (a == b).all()


def test_an_unnamed_stream_is_refused() -> None:
    with pytest.raises(ValueError, match="unnamed seed stream 'memebr'"):
        seeding.seed(0, "memebr")


def test_streams_are_stable_across_processes() -> None:
    for (name, root, path), want in GOLDEN.items():
        assert seeding.seed(root, name, *path) == want
    code = "from sim2human import seeding; print(seeding.seed(0, 'member', 'cooperative'))"
    for hashseed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hashseed}
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
        assert int(out.stdout) == GOLDEN[("member", 0, ("cooperative",))], out.stderr


def test_no_member_seeds_collide_past_a_hundred_per_family(pool: QuirkPool) -> None:
    # 100 * i + k made family 0's member 100 family 1's member 0.
    e = Ensemble.from_families(["cooperative", "chatty"], ["noisy-line"], 150, pool, seed=0)
    seeds = [s.seed for s in (*e.train, *e.heldout)]
    assert len(seeds) == 450 and len(set(seeds)) == 450
    assert len({episode_seed(k) for k in range(10_000)}) == 10_000
    assert {episode_seed(k) for k in range(100)}.isdisjoint(
        episode_seed(k, "confirmation") for k in range(100)
    )


def test_a_family_s_members_do_not_depend_on_the_others(pool: QuirkPool) -> None:
    alone = Ensemble.from_families(["chatty"], ["noisy-line"], 3, pool, seed=5)
    more = Ensemble.from_families(["cooperative", "chatty"], ["anxious", "noisy-line"], 3, pool, 5)
    assert alone.train == more.train[3:] and alone.heldout == more.heldout[3:]


def _own(episodes: list[Episode], family: str) -> list[str]:
    return [e.model_dump_json() for e in episodes if e.family == family]


class SharedDraws:
    """The policy drawing every turn of a batch from one generator (as before seeding)."""

    name = "shared"

    def __init__(self, agent: PolicyAgent) -> None:
        self.agent = agent

    def act(self, observations: Sequence[Observation]) -> list[AgentTurn]:
        return self.agent.act(observations)


def test_an_evaluated_family_s_episodes_do_not_depend_on_the_others(
    scenario: IntakeScenario, pool: QuirkPool
) -> None:
    held = Ensemble.from_families([], ["noisy-line", "terse-guarded"], 3, pool, seed=1).heldout
    a, b = held[:3], held[3:]
    torch.manual_seed(0)
    policy = PolicyAgent(scenario, seed=0)  # untrained: its turns are random draws

    def run(agent: Agent, specs: tuple[SimulatorSpec, ...]) -> list[Episode]:
        policy.reseed(0)
        return evaluate(agent, specs, scenario, split="heldout", per_member=4, max_turns=12)

    alone, together = run(policy, a), run(policy, b + a)
    assert len(alone) == 12 and len({e.model_dump_json() for e in alone}) == 12
    assert _own(alone, "noisy-line") == _own(together, "noisy-line")
    # the same comparison fails when one generator serves the whole batch
    shared = SharedDraws(policy)
    assert _own(run(shared, a), "noisy-line") != _own(run(shared, b + a), "noisy-line")
