"""``llm``: a chat model as the agent, over any OpenAI-compatible endpoint.

It reads exactly what every agent reads (the transcript in its ``Observation``) and is played
by the same rollout and evaluation code as the policy agent, so "how does my deployed prompt do
on held-out simulators?" is one ``evaluate`` call (or ``sim2human eval-agent``). An endpoint
that fails after its retries ends that episode as an error with the reason; the rest go on.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence

from sim2human.agents.base import AgentTurn, Observation
from sim2human.errors import UsageError
from sim2human.llm.client import ChatClient
from sim2human.scenarios.base import Scenario

SYSTEM_PROMPTS = {
    "intake": (
        "You are a friendly nurse on a clinic's phone intake line. Collect from the caller: "
        "their main problem, when it started, how bad it is out of 10, the medicines they take, "
        "their allergies, any long-term conditions, whether they have chest pain or trouble "
        "breathing, and their date of birth. Ask one short, plain question at a time. When you "
        "have everything, read it back, then thank them and say goodbye."
    ),
}
"""A system prompt per scenario name: the deployed prompt a user would replace with their own."""
_LABEL = re.compile(r"^\s*(?:nurse|agent|assistant)\s*:\s*", re.IGNORECASE)
_NEXT_SPEAKER = re.compile(r"\n+\s*(?:caller|patient|user)\s*:", re.IGNORECASE)


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
        if system_prompt is None:
            if scenario.name not in SYSTEM_PROMPTS:
                raise UsageError(f"no default LLM agent prompt for scenario {scenario.name!r}")
            system_prompt = SYSTEM_PROMPTS[scenario.name]
        self.scenario = scenario
        self.client = client
        self.system_prompt = system_prompt
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
        seed = None if self.temperature == 0 or self.seed is None else self.seed + obs.turn
        result = await self.client.chat(
            self.messages(obs),
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            seed=seed,
        )
        return AgentTurn(text=tidy_agent(result.text))

    def act(self, observations: Sequence[Observation]) -> list[AgentTurn]:
        """Blocking ``act_async`` for scripts; the rollout engine awaits ``act_async``."""
        return asyncio.run(self.act_async(observations))


def tidy_agent(text: str) -> str:
    """Drop a speaker label and anything the model wrote for the caller after its own turn."""
    out = _LABEL.sub("", text.strip(), count=1)
    cut = _NEXT_SPEAKER.search(out)
    if cut is not None:
        out = out[: cut.start()]
    return out.strip() or "..."
