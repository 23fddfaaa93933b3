"""The role guard and the judge's rating parser for ``llm`` simulators: pure text functions.

A small frozen model playing a user drifts out of role in a few recognisable ways: it answers
as the agent, narrates stage directions, repeats its instructions, or says nothing. ``tidy``
repairs what is only formatting (a ``Patient:`` label, a second speaker's line appended after
the reply); ``out_of_role`` names what cannot be repaired, so the simulator can retry and count.
The words that give a player away are the scenario's (``Scenario.voice.role_play.guard``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from sim2human.scenarios.voice import RoleGuard, RolePlay

_SENTENCE = re.compile(r"(?<=[.!?])\s+")
MAX_SENTENCES = 3
SHINGLE = 5


def tidy(text: str, guard: RoleGuard) -> str:
    """Formatting repairs only: strip a speaker label, cut a second speaker's line, keep three
    sentences, drop a sentence left unfinished by the token limit."""
    stripped = text.strip()
    label = guard.own_label.match(stripped)
    if label is not None and not guard.agent_label.match(stripped):
        stripped = stripped[label.end() :]
    out = stripped
    cut = guard.later_line.search(out)
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


def out_of_role(text: str, guard: RoleGuard, system_prompt: str = "") -> str | None:
    """Why a (tidied) reply is not something the user would say, or None if it is.

    With ``system_prompt``, copying any ``SHINGLE`` consecutive words of its instructions counts
    as leaking the prompt.
    """
    if not text.strip() or not re.search(r"[A-Za-z0-9]", text):
        return "empty"
    if guard.leaked.search(text) or (
        system_prompt and _shingles(text) & _shingles(instructions(system_prompt))
    ):
        return "leaked_prompt"
    if guard.spoke_as_agent.search(text):
        return "spoke_as_agent"
    if guard.narrated.search(text):
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


JUDGE_MAX_TURNS = 16


def judge_prompt(rp: RolePlay, name: str, turns: Sequence[tuple[str, str]]) -> str:
    """The judge's user message: the call (last ``JUDGE_MAX_TURNS`` turns) and the question."""
    shown = turns[-JUDGE_MAX_TURNS:]
    lines = [f"{rp.agent_name if who == 'agent' else name}: {text}" for who, text in shown]
    return rp.judge_call.format(name=name, call="\n".join(lines))


def turn_judge_prompt(rp: RolePlay, name: str, agent_text: str, reply: str) -> str:
    """The judge's user message for one exchange (``llm-turn``): the agent's line and the reply."""
    return rp.judge_turn.format(name=name, agent=agent_text, reply=reply)
