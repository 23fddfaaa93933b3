"""How an LLM is told to play a camper (the ``llm`` kind) and what gives such a player away.

The camper's side of a profile (``user_side``) is its priorities and what each package is worth
to it, the reason for its high one, the walk-away rule, and the rules of speech: an offer in the
one form both readers parse (``deal.say_split``), "Deal, I accept" and "I'm walking away", the
cues ``words`` listens for. Each agent turn carries a reminder (``user_hint``): what an offer on
it is worth to this camper against its walk-away, or what it needs most when asked. The agent's
own priorities (``agent.*``) are never told to the camper.
"""

from __future__ import annotations

from collections.abc import Mapping

from sim2human.scenarios.core import UserSide
from sim2human.scenarios.negotiation import deal, words
from sim2human.scenarios.negotiation.deal import ISSUES, POINTS, WALK_AWAY
from sim2human.scenarios.voice import (
    MannerLines,
    PromptWords,
    RoleGuard,
    RolePlay,
    standard_prompts,
)
from sim2human.types import Value

AGENT_NAME = "Other camper"
NAMES = ("Sam", "Alex", "Jamie", "Riley", "Morgan", "Casey", "Taylor", "Jordan", "Robin", "Kim")
EXAMPLE = deal.say_split((2, 1, 0))
RULES = (
    f'To propose a split, say it in exactly this form, your packages first: "{EXAMPLE}." '
    "(3 packages of each in all).",
    'To accept the other camper\'s offer, say "Deal, I accept."',
    'To leave without a deal, say "I\'m walking away."',
)


def user_side(profile: Mapping[str, Value]) -> UserSide:
    """The camper's side of ``profile``: priorities, reason, walk-away, and how to speak."""
    levels = {i: str(profile[i]) for i in ISSUES}
    high = next(i for i in ISSUES if levels[i] == "high")
    facts = [
        (i, i, f"{levels[i]} priority, each package is worth {POINTS[levels[i]]} points to you")
        for i in ISSUES
    ]
    facts.append(("reason", f"why you need {high} most", str(profile["reason"])))
    walk = f"you get {WALK_AWAY} points; accept no deal worth less to you"
    facts.append(("walk_away", "without a deal", walk))
    values: dict[str, Value] = {**levels, "reason": str(profile["reason"])}
    values["walk_away"] = WALK_AWAY
    return UserSide(facts=tuple(facts), values=values, rules=RULES)


def user_hint(profile: Mapping[str, Value], agent_text: str) -> str:
    """What ``agent_text`` means to this camper: an offer's points, or what it needs most."""
    split = deal.read_split(agent_text)
    if split is not None:
        theirs = deal.theirs(split, deal.values({i: str(profile[i]) for i in ISSUES}))
        verdict = "more" if theirs > WALK_AWAY else "not more"
        return (
            f"that offer gives you {theirs} points, {verdict} than the {WALK_AWAY} "
            "you get without a deal"
        )
    if words.ASKS_PRIORITIES.search(agent_text.lower()):
        high = next(i for i in ISSUES if str(profile[i]) == "high")
        low = next(i for i in ISSUES if str(profile[i]) == "low")
        return f"{high} matters most to you ({profile['reason']}); {low} matters least"
    return ""


def fact(key: str, value: Value) -> str:
    return str(value)


MANNER = MannerLines(
    brief="Answer in one short sentence.",
    chatty="Answer in one or two sentences; you like to chat.",
    anxious="You are worried about running out of supplies.",
    irritated="You are impatient and short-tempered.",
    guarded="You do not like to say what you need before you hear an offer.",
    jargon="If the other camper says something unclear, say you do not understand.",
    tangents="Sometimes you mention something about the trip.",
    one_at_a_time="Say one thing at a time; do not explain all your needs at once.",
)


PROMPTS = standard_prompts(
    PromptWords(
        who="a camper. You and another camper split 3 packages each of food, water and firewood.",
        other="other camper",
        known="What you know",
        character="a camper sharing supplies with a neighbour at a campsite.",
        story="is camping and has to split food, water and firewood with the camper at the next "
        "pitch.",
        details="situation",
        role=("a camper named ", " splitting supplies with another camper."),
        first_person=False,
    )
)


GUARD = RoleGuard(
    agent_labels=("other camper", "agent", "assistant", "neighbour"),
    user_labels=("camper", "user", "me"),
    agent_lines=r"\bhow can i (?:help|assist)\b|\bas an assistant\b",
    narration=(
        r"\((?:the )?(?:camper|other camper|he|she|they)\b[^)]*\)"
        r"|\bthe (?:other )?camper (?:says|said|asks|asked|replies|answers|smiles)\b"
    ),
    leaks=(
        r"\bwhat you know:|\bcharacter:|\brules?:\s*1\)|\bwrite only\b|\breply with exactly\b"
        r"|\bin exactly this form\b"
    ),
)

ROLE_PLAY = RolePlay(
    names=NAMES,
    labels={},
    fact=fact,
    manner=MANNER,
    prompts=PROMPTS,
    agent_name=AGENT_NAME,
    opening_cue="Hi there, neighbour!",
    guard=GUARD,
    judge_system="You read conversations between campers and rate them honestly.",
    judge_call=(
        "{name}, a camper, split food, water and firewood with another camper. The talk:\n"
        "{call}\n\nHow satisfied would {name} be with it, from 0 (not at all) to 10 "
        "(completely)? Answer with one number."
    ),
    judge_turn=(
        "{name}, a camper, is splitting food, water and firewood with another camper.\n"
        "Other camper: {agent}\n{name}: {reply}\n\n"
        "How satisfied is {name} with what the other camper just said, from 0 (not at all) to "
        "10 (completely)? Answer with one number."
    ),
)
