"""An LLM agent behind an OpenAI-compatible endpoint, as a verb's options name it: the call
page (``human serve``), a call in the terminal (``human play``) and ``stress`` put it beside a
run's trained agents. ``eval-agent`` evaluates one alone and records more of it (its cache, its
population): this is the small, plain description those verbs share, so an endpoint agent is
built the same way wherever it plays.

One answer is bounded by ``deadline_s`` over all attempts when set: a person waiting on the
call page is asked to send again after 25 s rather than after five 30-second attempts. The agent
is never answered from a response cache here: its client has none.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from sim2human.agents.llm import LLMAgent, Mode
from sim2human.llm.client import ChatClient, EndpointConfig
from sim2human.redact import public_url
from sim2human.scenarios.core import AnyScenario


@dataclass(frozen=True)
class EndpointAgent:
    """Where the agent is served and how it is asked (its prompt, sampling, tools)."""

    base_url: str
    model: str
    api_key_env: str | None = None
    system_prompt: str | None = None
    """None: the scenario's agent prompt (``Scenario.voice``)."""
    temperature: float = 0.0
    max_tokens: int = 64
    record_by: Mode = "tools"
    timeout_s: float = 20.0
    deadline_s: float | None = 25.0

    @property
    def endpoint(self) -> EndpointConfig:
        return EndpointConfig(
            base_url=self.base_url,
            model=self.model,
            api_key_env=self.api_key_env,
            timeout_s=self.timeout_s,
            deadline_s=self.deadline_s,
        )

    def build(self, scenario: AnyScenario, client: ChatClient | None = None) -> LLMAgent:
        """The agent, asking through ``client`` (one an ``LLMRuntime`` made for
        ``endpoint``, when episodes are played in its event loop) or a client of its own."""
        return LLMAgent(
            scenario,
            client or ChatClient(self.endpoint),
            system_prompt=self.system_prompt,
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            record_by=self.record_by,
        )

    def described(self) -> dict[str, Any]:
        """What a result file says of the agent: never the key, and the prompt by its hash."""
        prompt = self.system_prompt
        return {
            "model": self.model,
            "base_url": public_url(self.base_url),
            "system_prompt_sha256": None
            if prompt is None
            else hashlib.sha256(prompt.encode("utf-8")).hexdigest()[:16],
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "record_by": self.record_by,
        }
