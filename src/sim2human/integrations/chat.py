"""Conversations as OpenAI-style chat messages: the user's turns as ``user``, the agent's as
``assistant``, after the scenario's agent system prompt. What TRL, verl, ART and SFT/DPO
pipelines read, and what ``sim2human export --format openai-chat`` writes. An agent turn that
called tools carries them as the OpenAI format does (``tool_calls``, then ``tool`` results),
exactly as an endpoint agent was sent them (``agents.tool_messages``)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sim2human.agents.tool_messages import chat_messages
from sim2human.errors import UsageError
from sim2human.scenarios.catalog import get_scenario
from sim2human.types import Episode, Turn

Message = dict[str, str]


def default_prompt(scenario: str) -> str | None:
    """The default agent system prompt of a scenario (the one ``eval-agent`` uses), if any;
    ``scenario`` as episodes name it (a registered name, a scenario file, ``module:Name``)."""
    try:
        agent = get_scenario(scenario).voice.agent
    except UsageError:
        return None
    return agent.system_prompt if agent is not None else None


def system_prompt(scenario: str) -> str:
    """The default agent system prompt of a scenario, or a clear error if it has none."""
    prompt = default_prompt(scenario)
    if prompt is None:
        raise UsageError(f"no default agent system prompt for scenario {scenario!r}")
    return prompt


def messages(
    turns: Iterable[Turn], system: str | None, scenario: object | None = None
) -> list[dict[str, Any]]:
    """``turns`` as chat messages; ``scenario`` works out what each tool call did (its
    ``tool`` result), for an episode whose agent called tools."""
    spoken = [(t.speaker, t.text, t.tool_calls) for t in turns]
    return chat_messages(scenario, spoken, system)[0]


def labels(e: Episode) -> dict[str, Any]:
    """Everything besides the messages a training pipeline may filter or weight on."""
    return {
        "id": e.id,
        "scenario": e.scenario,
        "member": e.simulator_id,
        "family": e.family,
        "kind": e.kind,
        "split": e.split,
        "seed": e.seed,
        "condition": e.condition,
        "phase": e.phase,
        "proxy": e.proxy,
        "gold": float(e.gold.success),
        "gold_fields": e.gold.field_accuracy,
        "termination": str(e.termination),
    }


def chat_row(e: Episode, system: str | None = None) -> dict[str, Any]:
    """One episode as ``{"messages": [...], **labels}``."""
    prompt = system if system is not None else default_prompt(e.scenario)
    scenario = _scenario(e.scenario) if any(t.tool_calls for t in e.turns) else None
    return {"messages": messages(e.turns, prompt, scenario), **labels(e)}


def _scenario(name: str) -> object | None:
    try:
        return get_scenario(name)
    except UsageError:  # results are then "nothing changed"; the calls themselves are kept
        return None
