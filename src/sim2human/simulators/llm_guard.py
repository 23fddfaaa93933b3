"""The role guard and the judge's rating parser for ``llm`` simulators: pure text functions.

A small frozen model playing a patient drifts out of role in a few recognisable ways: it answers
as the nurse, narrates stage directions, repeats its instructions, or says nothing. ``tidy``
repairs what is only formatting (a ``Patient:`` label, a second speaker's line appended after
the reply); ``out_of_role`` names what cannot be repaired, so the simulator can retry and count.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_LABEL = r"(?:nurse|doctor|agent|assistant|receptionist|patient|caller|user|me)"
_OWN_LABEL = re.compile(r"^\s*(?:patient|caller|user|me|[A-Z][a-z]+)\s*:\s*")
"""The caller's own speaker label (``Patient:``, ``Mary:``); a nurse's label is not repaired."""
_LATER_LINE = re.compile(rf"\n+\s*(?:{_LABEL}|\(|\*)", re.IGNORECASE)
_AGENT_LABEL = re.compile(r"^\s*(?:nurse|doctor|agent|assistant|receptionist)\s*:", re.I)
_AGENT = re.compile(
    r"^\s*(?:nurse|doctor|agent|assistant|receptionist)\s*:"
    r"|\b(?:i'?m|i am) (?:just )?(?:a|the|your) (?:nurse|doctor|receptionist)\b"
    r"|\bhow can i (?:help|assist)\b|\bi'?m here to (?:help|assist)\b|\bwhat brings you\b"
    r"|\bthis is the clinic\b"
    r"|\b(?:can|could|may) i (?:have|take|get) your\b"
    r"|\bwhat(?:'s| is) your (?:date of birth|main problem|name)\b"
    r"|\bdo you have any (?:allergies|medical|ongoing)\b|\bare you taking any\b",
    re.IGNORECASE,
)
_NARRATION = re.compile(
    r"\*[^*]{2,}\*|\((?:the )?(?:nurse|patient|doctor|caller|he|she|they)\b[^)]*\)"
    r"|\b(?:the|a) (?:nurse|patient|caller) (?:says|said|is|was|has|asks|asked|wants|replies"
    r"|answers|explains)\b|\bthe (?:patient|caller)'s\b|\bas the patient\b"
    r"|^\s*\(",
    re.IGNORECASE,
)
_LEAK = re.compile(
    r"\brole-?play\b|\bas an ai\b|\blanguage model\b|\byou are the patient\b"
    r"|\bwhat you know about yourself\b|\brelevant facts\b|\bcharacter:|\brules?:\s*1\)"
    r"|\bwrite only\b|\breply with exactly\b|\bspeak in the first person\b",
    re.IGNORECASE,
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
MAX_SENTENCES = 3
SHINGLE = 5


def tidy(text: str) -> str:
    """Formatting repairs only: strip a speaker label, cut a second speaker's line, keep three
    sentences, drop a sentence left unfinished by the token limit."""
    stripped = text.strip()
    label = _OWN_LABEL.match(stripped)
    if label is not None and not _AGENT_LABEL.match(stripped):
        stripped = stripped[label.end() :]
    out = stripped
    cut = _LATER_LINE.search(out)
    if cut is not None and cut.start() > 0:
        out = out[: cut.start()]
    out = out.strip().strip('"').strip()
    sentences = _SENTENCE.split(out)[:MAX_SENTENCES]
    if len(sentences) > 1 and not sentences[-1].rstrip().endswith((".", "!", "?")):
        sentences = sentences[:-1]
    return " ".join(s.strip() for s in sentences).strip()


def _shingles(text: str, n: int = SHINGLE) -> set[tuple[str, ...]]:
    words = re.findall(r"[a-z0-9']+", text.lower())
    return {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}


def instructions(system_prompt: str) -> str:
    """The instruction part of a persona prompt: every line but the ``- label: value`` facts,
    which the caller may of course repeat."""
    return "\n".join(ln for ln in system_prompt.splitlines() if not ln.lstrip().startswith("- "))


def out_of_role(text: str, system_prompt: str = "") -> str | None:
    """Why a (tidied) reply is not something the caller would say, or None if it is.

    With ``system_prompt``, copying any ``SHINGLE`` consecutive words of its instructions counts
    as leaking the prompt.
    """
    if not text.strip() or not re.search(r"[A-Za-z0-9]", text):
        return "empty"
    if _LEAK.search(text) or (
        system_prompt and _shingles(text) & _shingles(instructions(system_prompt))
    ):
        return "leaked_prompt"
    if _AGENT.search(text):
        return "spoke_as_agent"
    if _NARRATION.search(text):
        return "narrated"
    return None


_WORDS = {
    w: i
    for i, w in enumerate(
        ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
    )
}
_OUT_OF_TEN = re.compile(r"(\d+(?:\.\d+)?)\s*(?:/|out of)\s*10\b", re.IGNORECASE)
_NUMBER = re.compile(r"(?<!\d)(?<!\d\.)(\d+(?:\.\d+)?)(?!\d)(?!\.\d)")
_WORD = re.compile(r"\b(" + "|".join(_WORDS) + r")\b", re.IGNORECASE)


def parse_rating(text: str) -> float | None:
    """A 0-10 rating from a judge's free text, scaled to [0, 1]; None if there is none.

    Prefers an explicit "N/10" or "N out of 10", then the first number in 0-10, then a number
    word; a number above 10 (a year, a token count) is not a rating.
    """
    m = _OUT_OF_TEN.search(text)
    candidates = [m.group(1)] if m else _NUMBER.findall(text)
    for c in candidates:
        value = float(c)
        if 0 <= value <= 10:
            return value / 10
    w = _WORD.search(text)
    return _WORDS[w.group(1).lower()] / 10 if w else None


JUDGE_SYSTEM = "You read phone calls and rate them honestly."
JUDGE_MAX_TURNS = 16


def judge_prompt(name: str, turns: Sequence[tuple[str, str]]) -> str:
    """The judge's user message: the call (last ``JUDGE_MAX_TURNS`` turns) and the question."""
    shown = turns[-JUDGE_MAX_TURNS:]
    lines = [f"{'Nurse' if who == 'agent' else name}: {text}" for who, text in shown]
    return (
        f"A clinic nurse phoned {name}, a patient. The call:\n"
        + "\n".join(lines)
        + f"\n\nHow satisfied would {name} be with this call, from 0 (not at all) to 10 "
        "(completely)? Answer with one number."
    )


def turn_judge_prompt(name: str, agent_text: str, reply: str) -> str:
    """The judge's user message for one exchange (``llm-turn``): the nurse's line and the reply."""
    return (
        f"A clinic nurse is on the phone with {name}, a patient.\n"
        f"Nurse: {agent_text}\n{name}: {reply}\n\n"
        f"How satisfied is {name} with what the nurse just said, from 0 (not at all) to 10 "
        "(completely)? Answer with one number."
    )
