"""The async rollout engine: many conversations in flight against endpoints that make them wait.

Each conversation is its own coroutine (no lock-step: one slow reply holds up only its own
conversation), and at most ``concurrency`` run at once, so an endpoint with N slots is kept
busy without a queue of thousands of requests. Agents that answer at once (``policy``,
``scripted``) are called per observation; agents that wait on an endpoint (``llm``) are awaited.

Failure is per episode: an endpoint that fails after its bounded retries ends that conversation
as a ``Termination.ERROR`` episode with its reason, and every other conversation carries on.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sim2human.agents.base import Agent, AgentTurn, AsyncAgent, Observation, SamplingAgent
from sim2human.errors import EndpointError
from sim2human.llm import routing
from sim2human.redact import redact
from sim2human.rollout.conversation import Conversation, Job, agent_rng, job_profile, user_rng
from sim2human.scenarios.core import AnyScenario
from sim2human.simulators.base import AsyncSimulator, SimulatorSpec
from sim2human.simulators.kinds import build_async_simulator, needs_endpoint
from sim2human.types import Episode

if TYPE_CHECKING:
    from sim2human.llm.runtime import LLMRuntime

Decide = Callable[[int, Observation], Awaitable[AgentTurn]]
"""(job index, observation) -> the agent's next turn in that conversation."""


@dataclass(frozen=True)
class Played:
    episode: Episode
    satisfaction: list[float]
    """The simulator's satisfaction after each agent turn; the last entry is the final one."""


def needs_async(agent: Agent, jobs: Sequence[Job]) -> bool:
    return isinstance(agent, AsyncAgent) or any(needs_endpoint(j.spec) for j in jobs)


def agent_decider(agent: Agent, jobs: Sequence[Job] = ()) -> Decide:
    """Per-conversation turns from any agent: awaited if it waits on an endpoint; a sampling
    agent draws from each of ``jobs``' own stream (by job index)."""
    if isinstance(agent, SamplingAgent) and jobs:
        sampling, rngs = agent, [agent_rng(j) for j in jobs]

        async def draw(index: int, obs: Observation) -> AgentTurn:
            return sampling.act_each([obs], [rngs[index]])[0]

        return draw
    if isinstance(agent, AsyncAgent):
        waiting = agent

        async def ask(index: int, obs: Observation) -> AgentTurn:
            return (await waiting.act_async([obs]))[0]

        return ask

    async def act(index: int, obs: Observation) -> AgentTurn:
        return agent.act([obs])[0]

    return act


async def play_one(
    index: int,
    job: Job,
    scenario: AnyScenario,
    simulator: AsyncSimulator,
    decide: Decide,
    max_turns: int,
) -> Played:
    """One conversation to its end, or to an ``ERROR`` episode if its endpoint gives up;
    every request in it goes to one server of its endpoint (``llm.routing``)."""
    with routing.conversation(f"{job.spec.id}/{job.split}/{job.phase}/{job.seed}"):
        return await _play_one(index, job, scenario, simulator, decide, max_turns)


async def _play_one(
    index: int,
    job: Job,
    scenario: AnyScenario,
    simulator: AsyncSimulator,
    decide: Decide,
    max_turns: int,
) -> Played:
    profile = job_profile(job, scenario)
    conv = Conversation(job, scenario, simulator, profile, max_turns)
    try:
        conv.hear(await simulator.astart(profile, user_rng(job)))
        while not conv.done:
            turn = await decide(index, conv.observe())
            conv.say(turn)
            if not conv.done:  # the agent's own turn may end the call
                conv.answer(turn, await simulator.areply(turn.text), simulator.satisfaction)
        ended = conv.episode()
        final = await simulator.finish(ended)
    except EndpointError as err:
        # Redacted again here: the reason is stored in episodes.jsonl, whoever raised it.
        reason = redact(str(err))
        return Played(conv.fail(reason, simulator.diagnostics()), list(conv.satisfaction))
    if conv.satisfaction:
        conv.satisfaction[-1] = final
    episode = ended.model_copy(update={"proxy": final, "diagnostics": simulator.diagnostics()})
    return Played(episode, list(conv.satisfaction))


async def play_jobs(
    jobs: Sequence[Job],
    scenario: AnyScenario,
    make_simulator: Callable[[SimulatorSpec], AsyncSimulator],
    decide: Decide,
    *,
    concurrency: int,
    max_turns: int,
    on_episode: Callable[[Episode], None] | None = None,
) -> list[Played]:
    """Play every job, at most ``concurrency`` at once; results in job order."""
    gate = asyncio.Semaphore(max(1, concurrency))

    async def one(index: int, job: Job) -> Played:
        async with gate:
            played = await play_one(
                index, job, scenario, make_simulator(job.spec), decide, max_turns
            )
        if on_episode is not None:
            on_episode(played.episode)
        return played

    return list(await asyncio.gather(*(one(i, j) for i, j in enumerate(jobs))))


async def play_async(
    agent: Agent,
    jobs: Sequence[Job],
    scenario: AnyScenario,
    llm: LLMRuntime,
    *,
    max_turns: int,
    on_episode: Callable[[Episode], None] | None = None,
) -> list[Episode]:
    """``rollout.play`` for jobs that wait on endpoints (run it on ``llm``'s event loop)."""
    played = await play_jobs(
        jobs,
        scenario,
        lambda spec: build_async_simulator(spec, scenario, llm.clients),
        agent_decider(agent, jobs),
        concurrency=llm.conversations,
        max_turns=max_turns,
        on_episode=on_episode,
    )
    return [p.episode for p in played]
