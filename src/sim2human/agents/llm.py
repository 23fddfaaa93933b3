"""``llm``: a chat model as the agent, over any OpenAI-compatible endpoint.

It reads exactly what every agent reads (the transcript in its ``Observation``) and is played
by the same rollout and evaluation code as the policy agent, so "how does my deployed prompt do
on held-out simulators?" is one ``evaluate`` call (or ``sim2human eval-agent``). An endpoint
that fails after its retries ends that episode as an error with the reason; the rest go on.

How it is scored. On a scenario with a desk (``scenarios.tools.has_desk``: fields to record, or
tools of its own) the agent acts through tools, and gold grades what it submitted, never what
the caller happened to say (``Episode.record_source == "submitted"``):

- ``record_by="tools"`` (the default): every request offers the scenario's tools (``tools=``
  in the OpenAI format); the model's calls are read from the response's ``tool_calls`` and
  from Hermes ``<tool_call>`` blocks in its text (what llama.cpp without ``--jinja`` passes
  through). A reply that calls tools and says nothing is answered with the tools' results and
  asked again, up to ``MAX_TOOL_ROUNDS`` requests in one turn (as τ²-bench lets an agent act
  before it speaks); a reply with words ends the turn (its calls' results are read back with
  the history next turn). A turn in which the model said nothing is heard as "...".
- ``record_by="summary"``, for a model served without tool calls: no tools are offered and the
  system prompt asks for the record as a JSON summary at the end; the summary in a reply
  (``summary_calls``) counts as ``record`` calls and a ``submit``, and is not spoken.

Either way the system prompt gets one sentence saying so, and an agent that neither calls tools
nor summarises has recorded nothing. On a scenario without a desk (a negotiation, whose deal is
made in words), or with ``record_by="heard"``, the agent talks as before and is graded on what
the call made heard (the call page's agent, whose store keeps no tool calls yet).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from sim2human import seeding
from sim2human.agents.base import AgentTurn, Observation
from sim2human.agents.tool_messages import Message, chat_messages, tool_turn
from sim2human.errors import UsageError
from sim2human.llm.client import ChatClient, ChatResult
from sim2human.scenarios import capabilities
from sim2human.scenarios.core import AnyScenario
from sim2human.scenarios.tools import (
    Desk,
    ReadsFields,
    has_desk,
    split_tool_text,
    summary_calls,
    to_call,
    tool_specs,
)
from sim2human.scenarios.voice import AgentVoice
from sim2human.types import ToolCall

MAX_TOOL_ROUNDS = 4
"""Most requests in one agent turn: tool calls without words are answered and asked again."""
Mode = Literal["tools", "summary", "heard"]
"""How the agent hands its record over: tool calls, a JSON summary, or not at all (graded on
what was heard)."""
_SUMMARY = re.compile(r"\{.*\}", re.DOTALL)  # the span ``summary_calls`` reads


def agent_voice(scenario: AnyScenario, system_prompt: str | None = None) -> AgentVoice:
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


@dataclass(frozen=True)
class AgentSetup:
    """What an LLM agent is given besides the chat: the system prompt as sent (with its sentence
    on how to record), the tools offered (``None``: none) and how the record is handed over.
    ``eval-agent`` stores it (``experiments.study.agent_record``) without making a client."""

    system_prompt: str
    tools: list[dict[str, Any]] | None
    mode: Mode

    @property
    def tool_names(self) -> tuple[str, ...]:
        return tuple(str(t["function"]["name"]) for t in self.tools or ())


def agent_setup(scenario: AnyScenario, system_prompt: str | None, record_by: Mode) -> AgentSetup:
    """The ``AgentSetup`` of an agent on ``scenario``: ``record_by`` where the scenario has a
    desk, else ``heard`` (a negotiation's deal is made in words)."""
    mode: Mode = record_by if has_desk(scenario) else "heard"
    tools = tool_specs(scenario) if mode == "tools" else None
    prompt = agent_voice(scenario, system_prompt).system_prompt + how_to_record(scenario, mode)
    return AgentSetup(prompt, tools, mode)


class LLMAgent:
    """Free-text turns from a chat model; ``act_async`` for the rollout engine."""

    name = "llm"

    def __init__(
        self,
        scenario: AnyScenario,
        client: ChatClient,
        *,
        system_prompt: str | None = None,
        temperature: float = 0.0,
        max_tokens: int = 64,
        seed: int | None = None,
        record_by: Mode = "tools",
    ) -> None:
        self.voice = agent_voice(scenario, system_prompt)
        self.scenario = scenario
        self.client = client
        setup = agent_setup(scenario, system_prompt, record_by)
        self.mode: Mode = setup.mode
        self.tools = setup.tools
        self.system_prompt = setup.system_prompt
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.seed = seed

    def messages(self, obs: Observation) -> list[Message]:
        """The chat: the caller's turns as ``user``, the agent's own as ``assistant``, each
        agent turn's tool calls and their results before its words (``tool_messages``)."""
        return self._chat(obs)[0]

    def _chat(self, obs: Observation) -> tuple[list[Message], Desk]:
        calls = iter(obs.tool_calls)
        turns = [(s, t, next(calls, ()) if s == "agent" else ()) for s, t in obs.transcript]
        return chat_messages(self.scenario, turns, self.system_prompt)

    async def act_async(self, observations: Sequence[Observation]) -> list[AgentTurn]:
        return list(await asyncio.gather(*(self._one(o) for o in observations)))

    async def _one(self, obs: Observation) -> AgentTurn:
        messages, desk = self._chat(obs)
        if self.mode != "tools":
            said, calls = self._read(await self._ask(messages, obs.turn, 0))
            if self.mode == "heard":
                return AgentTurn(text=said or "...")
            if not calls and isinstance(self.scenario, ReadsFields):
                calls = summary_calls(self.scenario, said)
                said = _SUMMARY.sub(" ", said).strip() if calls else said
            return AgentTurn(text=said or "...", tool_calls=calls)
        spoken: list[str] = []
        made: list[ToolCall] = []
        agent_turn = sum(s == "agent" for s, _ in obs.transcript)
        for round_ in range(MAX_TOOL_ROUNDS):
            said, calls = self._read(await self._ask(messages, obs.turn, round_))
            made += calls
            if said:
                spoken.append(said)
            if said or not calls:  # words end the turn (as does saying and doing nothing)
                break
            desk, exchange = tool_turn(self.scenario, desk, agent_turn, None, made[-len(calls) :])
            messages = [*messages, *exchange]
        return AgentTurn(text=" ".join(spoken) or "...", tool_calls=tuple(made))

    async def _ask(self, messages: list[Message], turn: int, round_: int) -> ChatResult:
        seed = None if self.temperature == 0 or self.seed is None else self._seed(turn, round_)
        return await self.client.chat(
            messages,
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            seed=seed,
            tools=self.tools,
        )

    def _read(self, result: ChatResult) -> tuple[str, tuple[ToolCall, ...]]:
        """What the model said (tidied; empty if nothing) and the tools it called: the
        response's ``tool_calls``, then any Hermes blocks in its text (left as they are for an
        agent graded on what was heard)."""
        if self.mode == "heard":
            return tidy(result.text, self.voice), ()
        spoken, written = split_tool_text(result.text)
        sent = [to_call({"name": f.name, "arguments": f.arguments}) for f in result.tool_calls]
        calls = (*(c for c in sent if c is not None), *written)
        return tidy(spoken, self.voice), calls

    def _seed(self, turn: int, round_: int = 0) -> int:
        """The request seed at ``turn`` (endpoints take 31 bits); a turn's later tool rounds
        get their own."""
        assert self.seed is not None
        if round_ == 0:
            return seeding.seed(self.seed, "llm-agent", turn, bits=31)
        return seeding.seed(self.seed, "llm-agent", turn, round_, bits=31)

    def act(self, observations: Sequence[Observation]) -> list[AgentTurn]:
        """Blocking ``act_async`` for scripts; the rollout engine awaits ``act_async``."""
        return asyncio.run(self.act_async(observations))


def how_to_record(scenario: AnyScenario, mode: Mode) -> str:
    """The sentence the system prompt gets for ``mode`` (none for an agent graded on what was
    heard): only what the agent records and submits counts."""
    if mode == "tools":
        return (
            " Record each thing you are told with the record tool, and call submit when the "
            "record is complete: only what you submit counts."
        )
    if mode == "summary":
        fields = ", ".join(f'"{f}"' for f in capabilities.fields(scenario))
        return (
            " When you have everything, end your reply with the record as one JSON object "
            f'with the keys {fields} (for example {{"field": "value"}}): only that '
            "summary counts."
        )
    return ""


def tidy(text: str, voice: AgentVoice) -> str:
    """Drop a speaker label and anything the model wrote for the user after its own turn
    (empty when nothing is left)."""
    out = voice.own_label.sub("", text.strip(), count=1)
    cut = voice.next_speaker.search(out)
    if cut is not None:
        out = out[: cut.start()]
    return out.strip()


def tidy_agent(text: str, voice: AgentVoice) -> str:
    """``tidy``, or "..." (what the caller hears of a turn with no words)."""
    return tidy(text, voice) or "..."
