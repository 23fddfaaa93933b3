"""Surface noise in how a turn is typed or spoken: typos, disfluency, silence.

Each function is ``(text, severity, rng) -> text`` with severity in (0, 1]; severity 0 never
reaches them (``Perturbation.__call__`` returns the text unchanged).
"""

from __future__ import annotations

import re

import numpy as np

from ._words import WORD_RE, invents_value, pick

# --- typos ---------------------------------------------------------------------------------------

_ROWS = ("qwertyuiop", "asdfghjkl", "zxcvbnm")


def _keyboard_neighbours() -> dict[str, str]:
    """QWERTY neighbours: same row left/right, plus the touching keys on the rows above/below."""
    out: dict[str, str] = {}
    for r, row in enumerate(_ROWS):
        for i, ch in enumerate(row):
            near = [row[j] for j in (i - 1, i + 1) if 0 <= j < len(row)]
            if r > 0:  # the row above is shifted left: keys i and i+1 touch
                near += [_ROWS[r - 1][j] for j in (i, i + 1) if j < len(_ROWS[r - 1])]
            if r < 2:  # the row below is shifted right: keys i-1 and i touch
                near += [_ROWS[r + 1][j] for j in (i - 1, i) if 0 <= j < len(_ROWS[r + 1])]
            out[ch] = "".join(near)
    return out


_NEIGHBOURS = _keyboard_neighbours()
TYPO_RATE = 0.12
"""Chance per letter of a slip at severity 1 (character error rate grows linearly with severity)."""


def typos(text: str, severity: float, rng: np.random.Generator) -> str:
    """Keyboard slips on letters: neighbour-key substitutions, drops, doublings, transpositions.

    Digits are never touched (a slipped digit would state a different value), and a slip that
    would turn a word into a value word (``not`` -> ``no``) is undone.
    """
    rate = TYPO_RATE * severity
    slips = rng.random(len(text)) < rate  # one draw per character: most words have no slip
    at = np.flatnonzero(slips).tolist()
    if not at:
        return text
    out: list[str] = []
    end = k = 0
    for m in WORD_RE.finditer(text):
        while k < len(at) and at[k] < m.start():  # a slip on a space or punctuation: none
            k += 1
        if k == len(at):
            break
        if at[k] >= m.end():
            continue
        word = m.group(0)
        if not any(ch.isdigit() for ch in word):
            out += [text[end : m.start()], _slip(word, slips[m.start() : m.end()], rng)]
            end = m.end()
    return "".join([*out, text[end:]])


def _slip(word: str, slips: np.ndarray, rng: np.random.Generator) -> str:
    out: list[str] = []
    i = 0
    while i < len(word):
        ch = word[i]
        if not (ch.isalpha() and slips[i]):
            out.append(ch)
        else:
            op = int(rng.integers(4))
            near = _NEIGHBOURS.get(ch.lower(), "")
            if op == 0 and near:  # neighbour key
                sub = pick(rng, near)
                out.append(sub.upper() if ch.isupper() else sub)
            elif op == 1:  # dropped
                pass
            elif op == 3 and i + 1 < len(word) and word[i + 1].isalpha():  # transposed
                out += [word[i + 1], ch]
                i += 1
            else:  # doubled
                out += [ch, ch]
        i += 1
    new = "".join(out)
    return word if invents_value(word, new) else new


# --- disfluency ----------------------------------------------------------------------------------

_FILLERS = ("um", "uh", "like", "you know", "er", "hmm")
DISFLUENCY_RATE = 0.3
"""Chance per word of a disfluency before it at severity 1."""


def disfluency(text: str, severity: float, rng: np.random.Generator) -> str:
    """Fillers (``um``, ``uh``, ``like``), repeated words (``my my``) and self-corrections
    (``my, I mean, my``) inserted before words. Nothing is removed and no new content is said:
    a self-correction repeats the same word, never a different value."""
    parts = re.split(r"(\s+)", text)
    words = [i for i, part in enumerate(parts) if part and not part.isspace()]
    if not words:
        return text
    chosen = np.flatnonzero(rng.random(len(words)) < DISFLUENCY_RATE * severity).tolist()
    before = {words[k]: "" for k in chosen}
    for i in before:  # one draw for the turn; the kind of slip only where there is one
        part = parts[i]
        core = part.strip(".,;:!?\"'()")
        kind = rng.random()
        if kind < 0.6 or not core or any(ch.isdigit() for ch in core):
            filler = pick(rng, _FILLERS)
            before[i] = f"{filler.capitalize()}, " if i == words[0] else f"{filler}, "
        elif kind < 0.85:
            before[i] = f"{core} "  # repetition: "my my"
        else:
            before[i] = f"{core}, I mean, "  # self-correction to the same word
    return "".join(before.get(i, "") + part for i, part in enumerate(parts))


# --- silence -------------------------------------------------------------------------------------


def silence(text: str, severity: float, rng: np.random.Generator) -> str:
    """Silence and trailing off. With probability severity**2 the turn is lost entirely (``""``
    or ``"..."``); otherwise, with probability severity, the user trails off and up to a
    ``severity`` share of the words (from the end) is cut and replaced by ``...``."""
    if rng.random() < severity**2:
        return pick(rng, ("", "..."))
    if rng.random() >= severity:
        return text
    words = list(re.finditer(r"\S+", text))
    cut_share = severity * rng.uniform(0.3, 1.0)
    keep = int(len(words) * (1.0 - cut_share))
    if keep >= len(words):
        return text
    if keep == 0:
        return "..."
    return text[: words[keep - 1].end()].rstrip(".,;:!?") + "..."
