"""Conversations as OpenAI-style chat messages: the user's turns as ``user``, the agent's as
``assistant``, after the scenario's agent system prompt. What TRL, verl, ART and SFT/DPO
pipelines read, and what ``sim2human export --format openai-chat`` writes."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sim2human.agents.llm import SYSTEM_PROMPTS
from sim2human.errors import UsageError
from sim2human.types import Episode, Turn

Message = dict[str, str]


def system_prompt(scenario: str) -> str:
    """The default agent system prompt of a scenario (the one ``eval-agent`` uses)."""
    if scenario not in SYSTEM_PROMPTS:
        raise UsageError(f"no default agent system prompt for scenario {scenario!r}")
    return SYSTEM_PROMPTS[scenario]


def messages(turns: Iterable[Turn], system: str | None) -> list[Message]:
    out = [] if system is None else [{"role": "system", "content": system}]
    out += [{"role": "assistant" if t.speaker == "agent" else "user", "content": t.text}
            for t in turns]  # fmt: skip
    return out


def kind(e: Episode) -> str:
    """The member's simulator kind (``persona``, ``llm`` ...)."""
    stored = getattr(e, "kind", None)  # Episode.kind is coming; until then read the family
    if isinstance(stored, str):
        return stored
    return "llm" if e.family.startswith("llm:") else "persona"


def labels(e: Episode) -> dict[str, Any]:
    """Everything besides the messages a training pipeline may filter or weight on."""
    return {
        "id": e.id, "scenario": e.scenario, "member": e.simulator_id, "family": e.family,
        "kind": kind(e), "split": e.split, "seed": e.seed, "condition": e.condition,
        "phase": e.phase, "proxy": e.proxy, "gold": float(e.gold.success),
        "gold_fields": e.gold.field_accuracy, "termination": str(e.termination),
    }  # fmt: skip


def chat_row(e: Episode, system: str | None = None) -> dict[str, Any]:
    """One episode as ``{"messages": [...], **labels}``."""
    prompt = system if system is not None else SYSTEM_PROMPTS.get(e.scenario)
    return {"messages": messages(e.turns, prompt), **labels(e)}
