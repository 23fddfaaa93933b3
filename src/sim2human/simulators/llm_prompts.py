"""Persona prompts for ``llm`` simulators, built from the hidden profile and the member's traits.

A prompt says who the caller is, what they know (every profile value, in words the scenario's
extractor reads), how they talk (verbosity, mood, guardedness, jargon confusion) and what they
will not volunteer. ``PROMPTS`` holds several templates so that held-out LLM members can differ
from training ones in prompt, not only in seed and temperature.

Each agent turn also carries a reminder of the facts that turn asks about, found the way every
simulator reads the agent (``Scenario.interpret``): small models forget a system prompt within
two turns, and a simulator that cannot state its own date of birth tests nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date

import numpy as np

from sim2human.simulators.base import Traits
from sim2human.types import Profile, Value

NAMES = ("Mary", "John", "Aisha", "Pedro", "Mei", "Tom", "Grace", "Omar", "Elena", "Ravi")
LABELS = {
    "complaint": "main problem",
    "onset": "when it started",
    "severity": "how bad it is",
    "medications": "medicines you take",
    "allergies": "allergies",
    "history": "long-term conditions",
    "red_flag": "chest pain or trouble breathing",
    "dob": "date of birth",
}


def fact(field: str, value: Value) -> str:
    """One profile value in plain words."""
    if field == "dob" and isinstance(value, str):
        d = date.fromisoformat(value)
        return f"{d.day} {d:%B} {d.year}"
    if field == "onset":
        return f"{value} ago"
    if field == "severity":
        return f"{value} out of 10"
    if field == "red_flag":
        return "yes, some chest pain" if value else "no, none"
    if isinstance(value, tuple):
        return " and ".join(value) if value else "none"
    return str(value)


def facts(profile: Profile, fields: tuple[str, ...]) -> str:
    return "\n".join(f"- {LABELS.get(f, f)}: {fact(f, profile[f])}" for f in fields)


def manner(t: Traits) -> str:
    """How this caller talks and what they hold back, from their traits."""
    parts = [
        "Answer in one short sentence."
        if t.verbosity < 0.35
        else "Answer in one or two sentences; you like to chat."
    ]
    if t.emotion == "anxious":
        parts.append("You are worried about your health and want reassurance.")
    elif t.emotion == "irritated":
        parts.append("You are busy and short-tempered.")
    if t.cooperativeness < 0.75:
        parts.append("You are guarded and do not like giving personal details.")
    if t.jargon_confusion > 0.35:
        parts.append("If the nurse uses medical words, say you do not understand.")
    if t.tangent_rate > 0.2:
        parts.append("Sometimes you mention something unrelated.")
    parts.append("Only answer what the nurse asks; do not list all your details at once.")
    return " ".join(parts)


def persona_name(seed: int) -> str:
    return NAMES[int(np.random.default_rng(seed).integers(len(NAMES)))]


def _plain(name: str, profile: Profile, fields: tuple[str, ...], t: Traits) -> str:
    return (
        f"You are {name}, a patient phoning a clinic. A nurse asks you questions. "
        f"You are the patient, not the nurse. Speak in the first person. {manner(t)}\n"
        f"What you know about yourself:\n{facts(profile, fields)}"
    )


def _card(name: str, profile: Profile, fields: tuple[str, ...], t: Traits) -> str:
    return (
        f"Character: {name}, a caller on a clinic's intake line.\n"
        f"Manner: {manner(t)}\nFacts:\n{facts(profile, fields)}\n"
        f"Write only {name}'s next reply to the nurse."
    )


def _story(name: str, profile: Profile, fields: tuple[str, ...], t: Traits) -> str:
    return (
        f"{name} has not been feeling well and calls the clinic, where a nurse takes details "
        f"before the visit. {manner(t).replace('You ', f'{name} ').replace('you ', 'they ')}\n"
        f"{name}'s details:\n{facts(profile, fields)}\n"
        f"Reply with exactly what {name} says, nothing else."
    )


def _rules(name: str, profile: Profile, fields: tuple[str, ...], t: Traits) -> str:
    return (
        f"Role-play a patient named {name} calling a clinic.\nRules: 1) You are the caller, "
        f"never the nurse. 2) Say only your own words. 3) {manner(t)}\n"
        f"Your details:\n{facts(profile, fields)}"
    )


PromptBuilder = Callable[[str, Profile, tuple[str, ...], Traits], str]
PROMPTS: dict[str, PromptBuilder] = {
    "plain": _plain,
    "card": _card,
    "story": _story,
    "rules": _rules,
}


def turn_message(agent_text: str, asks: tuple[str, ...], profile: Profile) -> str:
    """The user message for one agent turn, with the facts it asks about."""
    hint = "; ".join(f"{LABELS.get(f, f)}: {fact(f, profile[f])}" for f in asks if f in profile)
    return f"Nurse: {agent_text}" + (f"\n(Relevant facts: {hint}.)" if hint else "")
