"""The negotiation's words: the camper's lines, the cues both readers listen for, the reasons.

The reasons are CaSiNo campers' own (``negotiation/data/reasons.yaml``, a short list derived
by ``scripts/casino_reasons.py``; CaSiNo is CC BY 4.0, Chawla et al., NAACL 2021).
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources

import yaml

from sim2human.scenarios.negotiation.deal import ISSUES

ACCEPT = ("Deal! I accept, that works for me.", "Deal, I accept. Thank you!")
REJECT = ("That doesn't work for me.", "Hmm, no, that doesn't work for me.")
EVASIVE = ("I'd rather hear what you have in mind first.", "Let's see your offer first.")
NUDGE = ("Sounds good. What would you like to propose?", "Okay. So how should we split it?")
FLEXIBLE = "Oh, that's so kind of you. I can be flexible."
WALKING = "This isn't working for me. I'm walking away."

ASKS_PRIORITIES = re.compile(r"matters most|most important|priorit|need most")
_ACCEPT_CUE = re.compile(r"\bdeal\b|\bi accept\b|works for me")
_AGENT_ACCEPT = re.compile(r"\bi accept\b")
_WALK = re.compile(r"walking away|walk away")
_MOST = re.compile(r"\b(food|water|firewood) matters most")
_LEAST = re.compile(r"\b(food|water|firewood) matters least")
_CLOSE = re.compile(r"\bgoodbye\b|\bbye\b")
_GREET = re.compile(r"^\s*(hello|hi|hey)\b")
_EMPATHY = re.compile(r"i understand|sounds important|i hear you")


def accepts(text: str) -> bool:
    """An acceptance of the offer on the table (a user's "Deal!", an agent's "I accept")."""
    return _ACCEPT_CUE.search(text.lower()) is not None


def agent_accepts(text: str) -> bool:
    return _AGENT_ACCEPT.search(text.lower()) is not None


def walks(text: str) -> bool:
    return _WALK.search(text.lower()) is not None


def closes(text: str) -> bool:
    return _CLOSE.search(text.lower()) is not None


def greets(text: str) -> bool:
    return _GREET.search(text.lower()) is not None


def empathises(text: str) -> bool:
    return _EMPATHY.search(text.lower()) is not None


def stated(text: str) -> tuple[str | None, str | None]:
    """What a camper's words say of its priorities: (the issue it needs most, least)."""
    low = text.lower()
    most, least = _MOST.search(low), _LEAST.search(low)
    return (most.group(1) if most else None, least.group(1) if least else None)


@cache
def reasons() -> dict[str, tuple[str, ...]]:
    """Issue -> CaSiNo campers' reasons for needing it most."""
    path = resources.files("sim2human.scenarios").joinpath("negotiation", "data", "reasons.yaml")
    loaded = yaml.safe_load(path.read_text(encoding="utf-8"))
    return {i: tuple(str(r) for r in loaded[i]) for i in ISSUES}
