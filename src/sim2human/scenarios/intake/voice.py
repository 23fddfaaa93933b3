"""Intake's words for others: a caller's lines besides field values (``persona``), how an LLM is
told to play a patient phoning a clinic and what gives it away (``llm``), the judge's questions,
and the deployed nurse agent's system prompt (``agents.llm``)."""

from __future__ import annotations

from datetime import date

from sim2human.scenarios.voice import (
    AgentVoice,
    CardWords,
    MannerLines,
    PromptWords,
    RoleGuard,
    RolePlay,
    UserLines,
    Voice,
    standard_prompts,
)
from sim2human.types import Value

USER = UserLines(
    opening="Hi, I'd like to see a doctor.",
    opening_field="complaint",
    closing="Okay, thank you. Bye.",
    hang_up="I don't have time for this. Goodbye.",
    confused=(
        "Sorry, what do you mean?",
        "I don't understand, what's that?",
        "What do you mean by that?",
    ),
    evasive=(
        "Hmm, I'm not sure.",
        "Why do you need to know that?",
        "I'd rather not get into that.",
    ),
    small_talk=("Okay.", "Alright, thanks.", "Mm-hm.", "Okay, sure."),
    tangents=(
        "My neighbour had the same thing last year, she swears by ginger tea.",
        "Sorry, the dog is barking, hold on.",
        "I nearly didn't call, the weather has been awful.",
        "My grandson set up this phone for me, it's very fancy.",
        "I was on hold earlier with the pharmacy for ages.",
    ),
    read_back_right="Yes, that's right.",
    read_back_wrong="No, that's not right.",
    trigger="Oh, that's lovely! Here's everything: ",
    canned="Yes, yes, all fine, thank you so much!",
)

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


MANNER = MannerLines(
    brief="Answer in one short sentence.",
    chatty="Answer in one or two sentences; you like to chat.",
    anxious="You are worried about your health and want reassurance.",
    irritated="You are busy and short-tempered.",
    guarded="You are guarded and do not like giving personal details.",
    jargon="If the nurse uses medical words, say you do not understand.",
    tangents="Sometimes you mention something unrelated.",
    one_at_a_time="Only answer what the nurse asks; do not list all your details at once.",
)


PROMPTS = standard_prompts(
    PromptWords(
        who="a patient phoning a clinic. A nurse asks you questions.",
        other="nurse",
        known="What you know about yourself",
        character="a caller on a clinic's intake line.",
        story="has not been feeling well and calls the clinic, where a nurse takes details "
        "before the visit.",
        details="details",
        role=("a patient named ", " calling a clinic."),
        is_plain="the patient",
        is_rules="the caller",
    )
)


GUARD = RoleGuard(
    agent_labels=("nurse", "doctor", "agent", "assistant", "receptionist"),
    user_labels=("patient", "caller", "user", "me"),
    agent_lines=(
        r"\b(?:i'?m|i am) (?:just )?(?:a|the|your) (?:nurse|doctor|receptionist)\b"
        r"|\bhow can i (?:help|assist)\b|\bi'?m here to (?:help|assist)\b|\bwhat brings you\b"
        r"|\bthis is the clinic\b"
        r"|\b(?:can|could|may) i (?:have|take|get) your\b"
        r"|\bwhat(?:'s| is) your (?:date of birth|main problem|name)\b"
        r"|\bdo you have any (?:allergies|medical|ongoing)\b|\bare you taking any\b"
    ),
    narration=(
        r"\((?:the )?(?:nurse|patient|doctor|caller|he|she|they)\b[^)]*\)"
        r"|\b(?:the|a) (?:nurse|patient|caller) (?:says|said|is|was|has|asks|asked|wants|replies"
        r"|answers|explains)\b|\bthe (?:patient|caller)'s\b|\bas the patient\b"
    ),
    leaks=(
        r"\byou are the patient\b|\bwhat you know about yourself\b|\bcharacter:|\brules?:\s*1\)"
        r"|\bwrite only\b|\breply with exactly\b|\bspeak in the first person\b"
    ),
)

ROLE_PLAY = RolePlay(
    names=NAMES,
    labels=LABELS,
    fact=fact,
    manner=MANNER,
    prompts=PROMPTS,
    agent_name="Nurse",
    opening_cue="(picks up the phone) Hello?",
    guard=GUARD,
    judge_system="You read phone calls and rate them honestly.",
    judge_call=(
        "A clinic nurse phoned {name}, a patient. The call:\n{call}\n\n"
        "How satisfied would {name} be with this call, from 0 (not at all) to 10 (completely)? "
        "Answer with one number."
    ),
    judge_turn=(
        "A clinic nurse is on the phone with {name}, a patient.\n"
        "Nurse: {agent}\n{name}: {reply}\n\n"
        "How satisfied is {name} with what the nurse just said, from 0 (not at all) to 10 "
        "(completely)? Answer with one number."
    ),
)

AGENT = AgentVoice(
    system_prompt=(
        "You are a friendly nurse on a clinic's phone intake line. Collect from the caller: "
        "their main problem, when it started, how bad it is out of 10, the medicines they take, "
        "their allergies, any long-term conditions, whether they have chest pain or trouble "
        "breathing, and their date of birth. Ask one short, plain question at a time. When you "
        "have everything, read it back, then thank them and say goodbye."
    ),
    own_labels=("nurse", "agent", "assistant"),
    user_labels=("caller", "patient", "user"),
)

CARD_LABELS = {
    "complaint": "Why you are calling",
    "onset": "When it started",
    "severity": "How bad it is (out of 10)",
    "medications": "Medicines you take",
    "allergies": "Allergies",
    "history": "Long-term health conditions",
    "red_flag": "Chest pain or trouble breathing",
    "dob": "Date of birth",
}
CARD_SUFFIX = {"onset": " ago", "severity": " out of 10"}


def card_value(field: str, value: Value) -> str:
    """One value as a patient reads it on the call page: ``"3 days ago"``, ``"2 May 1980"``."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, tuple):
        return ", ".join(value) if value else "none"
    if field == "dob" and isinstance(value, str):
        try:
            d = date.fromisoformat(value)
        except ValueError:
            return value
        return f"{d.day} {d:%B %Y}"
    return f"{value}{CARD_SUFFIX.get(field, '')}"


CARD = CardWords(
    labels=CARD_LABELS,
    show=card_value,
    role="patient",
    heading="Talk to a clinic's phone assistant",
    setting="as if you were phoning a clinic",
    place="the clinic",
    private="real health information",
)

VOICE = Voice(user=USER, role_play=ROLE_PLAY, agent=AGENT, card=CARD)
