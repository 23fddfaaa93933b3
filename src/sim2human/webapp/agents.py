"""The agents a person may be put through to: every condition's trained agents in a run directory
(a policy's checkpoint or a language model, ``experiments.study.trained_agents``),
the scripted reference, and an LLM agent where an endpoint is given. Assignment is blinded and
balanced: the agent with the fewest calls so far, ties broken at random; the participant never
sees a name."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from sim2human.agents.base import Agent, AgentTurn, Observation
from sim2human.agents.endpoint_agent import EndpointAgent
from sim2human.agents.llm import LLMAgent
from sim2human.agents.lm_policy import LMPolicy
from sim2human.agents.policy import PolicyAgent
from sim2human.agents.scripted import reference_agent
from sim2human.errors import RunDirError, UsageError
from sim2human.experiments.study.config import StudyConfig, load_run_config
from sim2human.experiments.study.trained_agents import load_saved, saved_name
from sim2human.experiments.study.world import StudyWorld
from sim2human.scenarios.core import AnyScenario
from sim2human.store.layout import RunLayout

SCRIPTED = "scripted"
LLM = "llm"


@dataclass
class AgentPool:
    """Agents by name; a trained condition has one saved agent per training seed."""

    run: Path
    cfg: StudyConfig
    scenario: AnyScenario
    max_turns: int
    saved: dict[str, list[tuple[int, Path]]]
    scripted: bool = True
    llm: EndpointAgent | None = None
    _loaded: dict[tuple[str, int], Agent] = field(default_factory=dict)
    _llm_agent: LLMAgent | None = None

    @classmethod
    def from_run(
        cls,
        run: Path,
        names: Sequence[str] | None = None,
        llm: EndpointAgent | None = None,
        option: str = "--agents",
    ) -> AgentPool:
        """The agents of ``run`` (``names`` of them; ``option``: the flag that named them, for
        the error when one is unknown)."""
        cfg = load_run_config(run)
        world = StudyWorld.build(cfg)
        found: dict[str, list[tuple[int, Path]]] = {}
        for c in cfg.conditions:
            name = saved_name(cfg)
            seeds = [(s, RunLayout(run).sub_run(c.name, s) / name) for s in cfg.seeds]
            seeds = [(s, p) for s, p in seeds if p.exists()]
            if seeds:
                found[c.name] = seeds
        known = [*found, SCRIPTED, *([LLM] if llm is not None else [])]
        if names is not None:
            unknown = [n for n in names if n not in known]
            if unknown:
                raise UsageError(
                    f"{option}: {', '.join(unknown)} not in {run} (agents that finished: "
                    f"{', '.join(known)})"
                )
            found = {k: v for k, v in found.items() if k in names}
        scripted = names is None or SCRIPTED in names
        use_llm = llm if names is None or LLM in names else None
        pool = cls(run, cfg, world.scenario, world.max_turns, found, scripted, use_llm)
        if not pool.names:
            raise RunDirError(f"{run}: no agents to call (no sub-run finished)")
        return pool

    @property
    def names(self) -> list[str]:
        return [
            *self.saved,
            *([SCRIPTED] if self.scripted else []),
            *([LLM] if self.llm is not None else []),
        ]

    def assign(self, counts: dict[str, int]) -> tuple[str, int]:
        """(agent, training seed): the least-called agent, ties at random; a random seed."""
        fewest = min(counts.get(n, 0) for n in self.names)
        tied = [n for n in self.names if counts.get(n, 0) == fewest]
        name = tied[secrets.randbelow(len(tied))]
        seeds = self.saved.get(name, [(0, Path())])
        return name, seeds[secrets.randbelow(len(seeds))][0]

    def warm(self) -> None:
        """Load every saved agent (and the LLM client) now, so no participant waits on a load
        mid-call: the first message's deadline is spent on the endpoint, not on imports; a
        damaged one is one line naming it."""
        for name, seeds in self.saved.items():
            for seed, _ in seeds:
                self.agent(name, seed)
        if self.llm is not None:
            self._llm()

    def agent(self, name: str, seed: int) -> Agent:
        if name == SCRIPTED:
            return self._loaded.setdefault((name, 0), reference_agent(self.scenario))
        if name == LLM:
            return self._llm()
        key = (name, seed)
        if key not in self._loaded:
            path = dict(self.saved.get(name, [])).get(seed)
            if path is None:
                raise RunDirError(f"{self.run}: agent {name!r} seed {seed} is no longer there")
            self._loaded[key] = load_saved(path, self.cfg, self.scenario, seed)
        return self._loaded[key]

    def _llm(self) -> LLMAgent:
        if self.llm is None:
            raise UsageError("no LLM agent endpoint configured")
        if self._llm_agent is None:
            self._llm_agent = self.llm.build(self.scenario)  # acts through the desk's tools
        return self._llm_agent

    def decider(self, name: str, seed: int) -> Callable[[Observation, int], Awaitable[AgentTurn]]:
        """(observation, per-turn seed) -> the agent's turn; a policy's sampling is reseeded per
        turn so a call resumed after a restart continues exactly as it would have."""
        agent = self.agent(name, seed)

        async def decide(obs: Observation, turn_seed: int) -> AgentTurn:
            if isinstance(agent, LLMAgent):
                return (await agent.act_async([obs]))[0]
            if isinstance(agent, PolicyAgent):
                agent.reseed(turn_seed)
            if isinstance(agent, LMPolicy):  # seconds of decoding: off the event loop
                return (await asyncio.to_thread(agent.act, [obs]))[0]
            return agent.act([obs])[0]

        return decide
