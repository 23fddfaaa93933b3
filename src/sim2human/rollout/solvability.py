"""Is a member solvable? The scripted reference agent's success rate against it.

``evolve`` (a sampler, one layer down) is handed ``solvability(scenario, max_turns)`` by whoever
builds it, so samplers never play episodes themselves.
"""

from __future__ import annotations

import numpy as np

from sim2human import seeding
from sim2human.agents.scripted import reference_agent
from sim2human.rollout.conversation import Job
from sim2human.rollout.play import play
from sim2human.samplers.trait_box import Solvability
from sim2human.scenarios.core import AnyScenario
from sim2human.simulators.base import SimulatorSpec

CHUNK = 4


def solvable(
    spec: SimulatorSpec,
    scenario: AnyScenario,
    episodes: int,
    min_rate: float,
    seed: int,
    *,
    max_turns: int,
) -> tuple[bool, int, int]:
    """Does the scripted reference agent succeed with this member at least ``min_rate`` of
    ``episodes`` times? Plays ``CHUNK`` episodes at a time and stops as soon as the answer is
    settled (most plausible members settle it in the first chunk). -> (ok, successes, played)."""
    need = int(np.ceil(min_rate * episodes))
    agent = reference_agent(scenario)
    wins = played = 0
    while played < episodes and wins < need and wins + episodes - played >= need:
        jobs = [
            Job(
                spec, seeding.seed(seed, "solvability", played + k), "train", "solvability", "check"
            )
            for k in range(min(CHUNK, episodes - played))
        ]
        wins += sum(e.gold.success for e in play(agent, jobs, scenario, max_turns=max_turns))
        played += len(jobs)
    return wins >= need, wins, played


def solvability(scenario: AnyScenario, max_turns: int) -> Solvability:
    """The check ``evolve`` runs on each candidate, bound to a scenario and its turn limit."""

    def check(
        spec: SimulatorSpec, episodes: int, min_rate: float, seed: int
    ) -> tuple[bool, int, int]:
        return solvable(spec, scenario, episodes, min_rate, seed, max_turns=max_turns)

    return check
