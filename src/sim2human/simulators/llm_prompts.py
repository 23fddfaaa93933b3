"""Persona prompts for ``llm`` simulators, built from the hidden profile and the member's traits.

A prompt says who the user is, what they know (every profile value, in words the scenario's
extractor reads), how they talk (verbosity, mood, guardedness, jargon confusion) and what they
will not volunteer. The words are the scenario's (``Scenario.voice.role_play``); this module
chooses them by traits. Several prompt styles (``PROMPT_STYLES``) let held-out LLM members
differ from training ones in prompt, not only in seed and temperature.

Each agent turn also carries a reminder of the facts that turn asks about, found the way every
simulator reads the agent (``Scenario.interpret``): small models forget a system prompt within
two turns, and a simulator that cannot state its own date of birth tests nothing.
"""

from __future__ import annotations

import numpy as np

from sim2human.errors import UsageError
from sim2human.scenarios.base import Scenario
from sim2human.scenarios.voice import RolePlay
from sim2human.simulators.base import LLMParams, Traits
from sim2human.simulators.llm_templates import render
from sim2human.types import Profile

PROMPT_STYLES = ("plain", "card", "story", "rules")
"""The prompt styles every scenario's ``role_play`` provides (members name one)."""


def role_play(scenario: Scenario) -> RolePlay:
    """The scenario's words for LLM users, or a clear error if it has none."""
    rp = scenario.voice.role_play
    if rp is None:
        raise UsageError(f"scenario {scenario.name!r} has no voice for llm users (role_play)")
    return rp


def facts(rp: RolePlay, profile: Profile, fields: tuple[str, ...]) -> str:
    return "\n".join(f"- {rp.labels.get(f, f)}: {rp.fact(f, profile[f])}" for f in fields)


def manner(rp: RolePlay, t: Traits) -> str:
    """How this user talks and what they hold back, from their traits."""
    m = rp.manner
    parts = [m.brief if t.verbosity < 0.35 else m.chatty]
    if t.emotion == "anxious":
        parts.append(m.anxious)
    elif t.emotion == "irritated":
        parts.append(m.irritated)
    if t.cooperativeness < 0.75:
        parts.append(m.guarded)
    if t.jargon_confusion > 0.35:
        parts.append(m.jargon)
    if t.tangent_rate > 0.2:
        parts.append(m.tangents)
    parts.append(m.one_at_a_time)
    return " ".join(parts)


def persona_name(rp: RolePlay, seed: int) -> str:
    return rp.names[int(np.random.default_rng(seed).integers(len(rp.names)))]


def system_prompt(
    rp: RolePlay, style: str, name: str, profile: Profile, fields: tuple[str, ...], t: Traits
) -> str:
    """The persona prompt in ``style`` for the user ``name``."""
    return rp.prompts[style](name, manner(rp, t), facts(rp, profile, fields))


def turn_message(rp: RolePlay, agent_text: str, asks: tuple[str, ...], profile: Profile) -> str:
    """The user message for one agent turn, with the facts it asks about."""
    hint = "; ".join(
        f"{rp.labels.get(f, f)}: {rp.fact(f, profile[f])}" for f in asks if f in profile
    )
    return f"{rp.agent_name}: {agent_text}" + (f"\n(Relevant facts: {hint}.)" if hint else "")


def template_prompt(
    rp: RolePlay,
    params: LLMParams,
    scenario: str,
    name: str,
    profile: Profile,
    fields: tuple[str, ...],
    t: Traits,
) -> str:
    """The persona prompt a user's own template (``params.template``) makes for ``name``."""
    assert params.template is not None
    variables = {
        "name": name,
        "scenario": scenario,
        "agent_name": rp.agent_name,
        "facts": facts(rp, profile, fields),
        "profile": {f: rp.fact(f, profile[f]) for f in fields},
        "values": {f: profile[f] for f in fields},
        "manner": manner(rp, t),
        "traits": t.model_dump(),
    }
    return render(params.template, params.prompt, variables)
