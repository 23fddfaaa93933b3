"""Persona prompts for ``llm`` simulators, built from the hidden profile and the member's traits.

A prompt says who the user is, what they know (the profile's user side, ``user_side``: a slot
scenario's every value, in words the scenario's extractor reads; a scenario of another shape
says its own, ``core.BriefsLLMUsers``, with rules of how to speak its moves), how they talk
(verbosity, mood, guardedness, jargon confusion) and what they will not volunteer. The words
are the scenario's (``Scenario.voice.role_play``); this module chooses them by traits. Several
prompt styles (``PROMPT_STYLES``) let held-out LLM members differ from training ones in prompt,
not only in seed and temperature.

Each agent turn also carries a reminder of the facts that turn asks about, found the way every
simulator reads the agent (``Scenario.interpret``), or the scenario's own (``user_hint``):
small models forget a system prompt within two turns, and a simulator that cannot state its
own date of birth tests nothing.
"""

from __future__ import annotations

import numpy as np

from sim2human.errors import UsageError
from sim2human.scenarios.core import AnyScenario, BriefsLLMUsers, UserSide
from sim2human.scenarios.slots import applicable_fields
from sim2human.scenarios.voice import RolePlay
from sim2human.simulators.base import LLMParams, Traits
from sim2human.simulators.llm_templates import render
from sim2human.types import Profile

PROMPT_STYLES = ("plain", "card", "story", "rules")
"""The prompt styles every scenario's ``role_play`` provides (members name one)."""


def role_play(scenario: AnyScenario) -> RolePlay:
    """The scenario's words for LLM users, or a clear error if it has none."""
    rp = scenario.voice.role_play
    if rp is None:
        raise UsageError(f"scenario {scenario.name!r} has no voice for llm users (role_play)")
    return rp


def slot_side(rp: RolePlay, profile: Profile, fields: tuple[str, ...]) -> UserSide:
    """The slot kit's user side: every field in ``fields``, in ``rp``'s words, no rules."""
    facts = tuple((f, rp.labels.get(f, f), rp.fact(f, profile[f])) for f in fields)
    return UserSide(facts=facts, values={f: profile[f] for f in fields})


def user_side(scenario: AnyScenario, profile: Profile) -> UserSide:
    """What an ``llm`` user of ``scenario`` is told of ``profile``: the scenario's own
    (``core.BriefsLLMUsers``), else the slot kit's over the fields that apply."""
    if isinstance(scenario, BriefsLLMUsers):
        return scenario.user_side(profile)
    return slot_side(role_play(scenario), profile, applicable_fields(scenario, profile))


def side_facts(side: UserSide) -> str:
    """The facts block: one ``- label: words`` line per fact, then one ``- `` line per rule
    (the guard never counts a ``- `` line repeated as a leaked prompt)."""
    lines = [f"- {label}: {words}" for _, label, words in side.facts]
    return "\n".join([*lines, *(f"- {rule}" for rule in side.rules)])


def facts(rp: RolePlay, profile: Profile, fields: tuple[str, ...]) -> str:
    return side_facts(slot_side(rp, profile, fields))


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
    """The persona prompt in ``style`` for the user ``name`` of a slot scenario."""
    return side_prompt(rp, style, name, slot_side(rp, profile, fields), t)


def side_prompt(rp: RolePlay, style: str, name: str, side: UserSide, t: Traits) -> str:
    """The persona prompt in ``style`` for the user ``name`` told ``side``."""
    return rp.prompts[style](name, manner(rp, t), side_facts(side))


def slot_hint(rp: RolePlay, asks: tuple[str, ...], profile: Profile) -> str:
    """The slot kit's reminder: the facts the turn asks about."""
    return "; ".join(
        f"{rp.labels.get(f, f)}: {rp.fact(f, profile[f])}" for f in asks if f in profile
    )


def turn_message(rp: RolePlay, agent_text: str, asks: tuple[str, ...], profile: Profile) -> str:
    """The user message for one agent turn of a slot scenario, with the facts it asks about."""
    return hinted(rp, agent_text, slot_hint(rp, asks, profile))


def hinted(rp: RolePlay, agent_text: str, hint: str) -> str:
    """The user message for one agent turn, with its reminder (none when ``hint`` is empty)."""
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
    """The persona prompt a user's own template makes for ``name`` of a slot scenario."""
    return side_template(rp, params, scenario, name, slot_side(rp, profile, fields), t)


def side_template(
    rp: RolePlay, params: LLMParams, scenario: str, name: str, side: UserSide, t: Traits
) -> str:
    """The persona prompt a user's own template (``params.template``) makes for ``name``."""
    assert params.template is not None
    variables = {
        "name": name,
        "scenario": scenario,
        "agent_name": rp.agent_name,
        "facts": side_facts(side),
        "profile": {key: words for key, _, words in side.facts},
        "values": dict(side.values),
        "rules": "\n".join(side.rules),
        "manner": manner(rp, t),
        "traits": t.model_dump(),
    }
    return render(params.template, params.prompt, variables)
