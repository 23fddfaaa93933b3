"""Evaluating an agent trained elsewhere the way ``sim2human study`` evaluates its own.

``evaluate_agent`` plays the agent on every training and held-out member on the study's fixed
evaluation seeds (the same hidden profiles a study uses, so numbers are paired with the
built-in trainer's) and, with ``out``, writes a run directory that ``sim2human report`` and
``sim2human diagnose`` read. ``ChatAgent`` makes any "messages -> reply" function (a TRL or
transformers model, an ART or verl policy behind an endpoint) a sim2human agent.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from sim2human.agents.base import Agent, AgentTurn, Observation
from sim2human.integrations.chat import Message, system_prompt
from sim2human.integrations.population import SPLITS, Population, Split
from sim2human.integrations.runlog import RunLog
from sim2human.rollout.evaluate import evaluate
from sim2human.types import Episode


class ChatAgent:
    """Free-text turns from ``respond(messages) -> str`` (OpenAI-style chat messages)."""

    name = "chat"

    def __init__(self, respond: Callable[[list[Message]], str], system: str) -> None:
        self.respond = respond
        self.system = system

    def act(self, observations: Sequence[Observation]) -> list[AgentTurn]:
        out = []
        for obs in observations:
            msgs = [{"role": "system", "content": self.system}]
            msgs += [
                {"role": "assistant" if s == "agent" else "user", "content": t}
                for s, t in obs.transcript
            ]
            out.append(AgentTurn(text=self.respond(msgs).strip() or "..."))
        return out


def evaluate_agent(
    agent: Agent,
    pop: Population,
    *,
    per_member: int = 10,
    splits: Sequence[Split] = SPLITS,
    out: Path | str | None = None,
    trainer: str = "external",
) -> list[Episode]:
    """Every member of ``splits`` x ``per_member`` evaluation episodes; logged to ``out``."""
    episodes: list[Episode] = []
    for split in splits:
        episodes += evaluate(
            agent,
            pop.members(split),
            pop.scenario,
            split=split,
            per_member=per_member,
            condition=pop.condition,
            max_turns=pop.max_turns,
        )
    if out is not None:
        with RunLog(out, pop, trainer=trainer) as log:
            log.write_all(episodes)
    return episodes


def chat_agent_for(pop: Population, respond: Callable[[list[Message]], str]) -> ChatAgent:
    return ChatAgent(respond, system_prompt(pop.scenario.name))
