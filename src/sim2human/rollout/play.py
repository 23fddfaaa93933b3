"""Lock-step batched play: many conversations stepped together.

Stepping a batch of conversations in lock-step lets a policy agent answer all of them with one
forward pass, which is what makes CPU training take seconds rather than minutes. Jobs that wait
on an endpoint go to the async engine (``rollout.play_async``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from sim2human.agents.base import Agent, SamplingAgent
from sim2human.errors import UsageError
from sim2human.rollout.conversation import Conversation, Job, agent_rng
from sim2human.rollout.play_async import needs_async, play_async
from sim2human.scenarios.core import AnyScenario
from sim2human.types import Episode

if TYPE_CHECKING:
    from sim2human.llm.runtime import LLMRuntime


def play(
    agent: Agent,
    jobs: Sequence[Job],
    scenario: AnyScenario,
    *,
    batch_size: int = 256,
    max_turns: int,
    on_episode: Callable[[Episode], None] | None = None,
    llm: LLMRuntime | None = None,
) -> list[Episode]:
    """Play every job to the end with ``agent``, ``batch_size`` conversations at a time.

    Jobs on ``llm`` members, and every job of an agent that waits on an endpoint, run in
    ``llm``'s async engine (many conversations in flight); the rest are stepped in lock-step.
    A sampling agent draws each conversation's turns from that episode's own stream, so an
    episode is the same whichever jobs share its batch.
    """
    if needs_async(agent, jobs):
        if llm is None:
            raise UsageError("LLM simulators or agents need endpoints: pass an LLMRuntime")
        waiting = [j for j in jobs if needs_async(agent, [j])]
        done = llm.run(
            play_async(agent, waiting, scenario, llm, max_turns=max_turns, on_episode=on_episode)
        )
        rest = [j for j in jobs if not needs_async(agent, [j])]  # empty for async agents
        if not rest:
            return done
        return [
            *done,
            *play(
                agent,
                rest,
                scenario,
                batch_size=batch_size,
                max_turns=max_turns,
                on_episode=on_episode,
            ),
        ]
    return _play_lockstep(agent, jobs, scenario, batch_size, max_turns, on_episode)


def _play_lockstep(
    agent: Agent,
    jobs: Sequence[Job],
    scenario: AnyScenario,
    batch_size: int,
    max_turns: int,
    on_episode: Callable[[Episode], None] | None,
) -> list[Episode]:
    """Programmatic users, ``batch_size`` conversations stepped together (one ``act`` call
    answers every live conversation of a batch)."""
    episodes: list[Episode] = []
    sampling = agent if isinstance(agent, SamplingAgent) else None
    for start in range(0, len(jobs), batch_size):
        batch = jobs[start : start + batch_size]
        live = [Conversation.open(j, scenario, max_turns) for j in batch]
        rngs = [agent_rng(j) for j in batch] if sampling is not None else []
        while live:
            observations = [c.observe() for c in live]
            if sampling is not None:
                turns = sampling.act_each(observations, rngs)
            else:
                turns = agent.act(observations)
            for conv, turn in zip(live, turns, strict=True):
                conv.step(turn)
            for conv in [c for c in live if c.done]:
                ep = conv.episode()
                episodes.append(ep)
                if on_episode is not None:
                    on_episode(ep)
            if sampling is not None:
                rngs = [r for c, r in zip(live, rngs, strict=True) if not c.done]
            live = [c for c in live if not c.done]
    return episodes
