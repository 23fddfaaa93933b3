"""Evaluation: an agent against a set of simulator members, on a fixed set of profiles.

Every condition is evaluated on the same episode seeds (hence the same hidden profiles) per
member, so differences between conditions are paired comparisons, not luck of the draw.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

from sim2human import seeding
from sim2human.agents.base import Agent
from sim2human.rollout.conversation import Job
from sim2human.rollout.play import play
from sim2human.scenarios.core import AnyScenario
from sim2human.simulators.base import SimulatorSpec
from sim2human.types import Episode

if TYPE_CHECKING:
    from sim2human.llm.runtime import LLMRuntime


@lru_cache(maxsize=65_536)
def episode_seed(k: int, stream: str = "evaluation") -> int:
    """The k-th episode seed of ``stream`` (``evaluation``, or ``confirmation`` for seeds an
    evaluation never plays): the same for every member and condition, so comparisons pair."""
    return seeding.seed(0, stream, k)


def eval_jobs(
    specs: Sequence[SimulatorSpec], split: str, per_member: int, condition: str
) -> list[Job]:
    return [
        Job(spec, episode_seed(k), split, condition, "eval")
        for spec in specs
        for k in range(per_member)
    ]


def evaluate(
    agent: Agent,
    specs: Sequence[SimulatorSpec],
    scenario: AnyScenario,
    *,
    split: str,
    per_member: int,
    condition: str = "",
    on_episode: Callable[[Episode], None] | None = None,
    llm: LLMRuntime | None = None,
    max_turns: int,
) -> list[Episode]:
    """``llm`` is needed when a member is an ``llm`` simulator or the agent is an LLM agent."""
    return play(
        agent,
        eval_jobs(specs, split, per_member, condition),
        scenario,
        on_episode=on_episode,
        llm=llm,
        max_turns=max_turns,
    )
