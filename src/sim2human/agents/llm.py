"""``llm``: a chat model as the agent, over any OpenAI-compatible endpoint.

It reads exactly what every agent reads (the transcript in its ``Observation``) and is played
by the same rollout and evaluation code as the policy agent, so "how does my deployed prompt do
on held-out simulators?" is one ``evaluate`` call (or ``sim2human eval-agent``). An endpoint
that fails after its retries ends that episode as an error with the reason; the rest go on.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import replace

from sim2human import seeding
from sim2human.agents.base import AgentTurn, Observation
from sim2human.errors import UsageError
from sim2human.llm.client import ChatClient
from sim2human.scenarios.base import Scenario
from sim2human.scenarios.voice import AgentVoice


def agent_voice(scenario: Scenario, system_prompt: str | None = None) -> AgentVoice:
    """The scenario's words for an LLM agent: its default system prompt (the deployed prompt a
    user would replace with their own) and speaker labels; ``system_prompt`` replaces the
    default (and stands in for a scenario that has none, with plain chat labels)."""
    voice = scenario.voice.agent
    if voice is None:
        if system_prompt is None:
            raise UsageError(f"no default LLM agent prompt for scenario {scenario.name!r}")
        return AgentVoice(system_prompt, own_labels=("agent", "assistant"), user_labels=("user",))
    if system_prompt is not None:
        return replace(voice, system_prompt=system_prompt)
    return voice


class LLMAgent:
    """Free-text turns from a chat model; ``act_async`` for the rollout engine."""

    name = "llm"

    def __init__(
        self,
        scenario: Scenario,
        client: ChatClient,
        *,
        system_prompt: str | None = None,
        temperature: float = 0.0,
        max_tokens: int = 64,
        seed: int | None = None,
    ) -> None:
        self.voice = agent_voice(scenario, system_prompt)
        self.scenario = scenario
        self.client = client
        self.system_prompt = self.voice.system_prompt
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.seed = seed

    def messages(self, obs: Observation) -> list[dict[str, str]]:
        """The chat: the caller's turns as ``user``, the agent's own as ``assistant``."""
        out = [{"role": "system", "content": self.system_prompt}]
        for speaker, text in obs.transcript:
            out.append({"role": "assistant" if speaker == "agent" else "user", "content": text})
        return out

    async def act_async(self, observations: Sequence[Observation]) -> list[AgentTurn]:
        return list(await asyncio.gather(*(self._one(o) for o in observations)))

    async def _one(self, obs: Observation) -> AgentTurn:
        seed = None if self.temperature == 0 or self.seed is None else self._seed(obs.turn)
        result = await self.client.chat(
            self.messages(obs),
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            seed=seed,
        )
        return AgentTurn(text=tidy_agent(result.text, self.voice))

    def _seed(self, turn: int) -> int:
        """The request seed at ``turn`` (endpoints take 31 bits)."""
        assert self.seed is not None
        return seeding.seed(self.seed, "llm-agent", turn, bits=31)

    def act(self, observations: Sequence[Observation]) -> list[AgentTurn]:
        """Blocking ``act_async`` for scripts; the rollout engine awaits ``act_async``."""
        return asyncio.run(self.act_async(observations))


def tidy_agent(text: str, voice: AgentVoice) -> str:
    """Drop a speaker label and anything the model wrote for the user after its own turn."""
    out = voice.own_label.sub("", text.strip(), count=1)
    cut = voice.next_speaker.search(out)
    if cut is not None:
        out = out[: cut.start()]
    return out.strip() or "..."
