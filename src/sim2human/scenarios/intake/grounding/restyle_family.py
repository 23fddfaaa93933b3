"""Restyling a persona family's lines in real patients' words: ``sim2human restyle-family``.

The intake persona says a finite set of lines: each value's templates (``"I've got {v}."``),
the fixed answers (``"No, no allergies."``) and the lines besides values (hesitations,
confusion, small talk, tangents, the opening and closing). ``intake_lines`` enumerates them
(about 60), so generation is bounded: ``candidates`` requests per line. Each request shows a chat
model ``shots`` patient turns of the ACI-Bench **train** split's fit part (``fit_family``'s cut:
the validation part is left for choosing settings, the held-out splits are never read), as
earlier exchanges: a plain persona line, then a real turn like it (``shot_pairs``: for an
answer, a turn the extractor reads that one field from, after the persona's plainest line for
the value it reads; for another line, a turn that states nothing, of its kind: a question for
confusion, a hedge for evasion, a longer turn for a tangent, a short one for the rest). Then
it is given the line, filled with one value, to say the same way.

A candidate is kept only if it passes every step of ``accept``: tidied into one line (a speaker
label, quotes or a second line removed); not out of role (``llm_guard``: speaking as the
nurse, narrating, leaking the prompt, talking about the rewriting); at most ``MAX_WORDS`` words
and no word trigram twice (``too_long``); no copy of a shown turn
(five words in a row in common: the cache holds rewrites, not the corpus); new words; for a
template, the value appears in it exactly once (that span becomes ``{v}``); and the scenario
reads the same from it as from the original (``restyled.same_reading``: field values with no
field expected and with the line's own field expected, and signals) for *every* value the
scenario's own ``say`` produced for that template in ``FILLERS`` draws. Members repeat the check
at play time for the fields the agent may expect then (``restyled``), so gold semantics stay
intact whatever value a member says and whatever it was asked.
"""

from __future__ import annotations

import asyncio
import re
import zlib
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Final, Literal, Protocol

import numpy as np
from pydantic import BaseModel

from sim2human import seeding
from sim2human.llm.endpoint import ChatResult
from sim2human.metrics.fidelity import HEDGES
from sim2human.scenarios.intake import speech
from sim2human.scenarios.intake.grounding.fit_family import train_parts
from sim2human.scenarios.intake.scenario import CONFUSED, IntakeScenario
from sim2human.scenarios.intake.voice import GUARD, USER
from sim2human.simulators.llm_guard import out_of_role, tidy
from sim2human.simulators.restyle_entries import SLOT, Restyle
from sim2human.simulators.restyled import SINGLE_LINES, same_reading

Which = Literal["all", "answers", "others"]
SYSTEM: Final = (
    "You are a patient talking with your doctor. You say things in your own casual, spoken "
    "words, the way real patients do."
)
FILLERS: Final = 400
"""Profiles drawn to collect the values each template is said with (and checked against)."""
MAX_FILLERS: Final = 40
"""Values a template's rewrite is checked with at most (the most frequent first)."""
SHOT_WORDS: Final = (3, 25)
"""Train turns shown as examples have this many words: shorter ones show no style, longer ones
are often the doctor's words filed under the patient."""
MAX_WORDS: Final = 25
"""Longer rewrites are cut (with a word trigram said twice: a run-on loop): chosen on the
validation part (``scripts/restyle_choices.py``, rule ``plain``)."""
_META = re.compile(
    r"\b(?:rewrit\w*|rephras\w*|sentence|style|version|original|casual|conversational|"
    r"patients? (?:say|talk))\b|[\n*#]|^-",
    re.IGNORECASE,
)
_WORD = re.compile(r"[a-z0-9']+")


class Chat(Protocol):
    """What generation needs of a chat model (``llm.client.ChatClient`` is one)."""

    async def chat(
        self,
        messages: Sequence[dict[str, str]],
        *,
        temperature: float,
        top_p: float = 1.0,
        max_tokens: int,
        seed: int | None = None,
    ) -> ChatResult: ...


@dataclass(frozen=True)
class Line:
    """One line the persona says: a template (``{v}``) or fixed text, the field it states."""

    line: str
    field: str | None = None
    group: str = ""
    """What kind of line: the field it answers, or its ``UserLines`` name (``evasive``)."""

    @property
    def answers(self) -> bool:
        return self.field is not None


def intake_lines(which: Which = "all") -> tuple[Line, ...]:
    """Every line the intake persona can say (``which``: only those stating a value, or only
    the others), in a fixed order. The trigger's line is left out: it prefixes a list."""
    lines = [Line(t.replace("{v}", SLOT), f, f) for f, ts in speech.FORMS.items() for t in ts]
    lines += [Line(t, f, f) for f, ts in speech.NONE_FORMS.items() for t in ts]
    lines += [Line(t, "red_flag", "red_flag") for ts in speech.RED_FLAG_FORMS.values() for t in ts]
    lines += [Line(getattr(USER, name), None, name) for name in SINGLE_LINES]
    for name in GROUPS:
        lines += [Line(t, None, name) for t in getattr(USER, name)]
    unique = list(dict.fromkeys(lines))
    if which == "all":
        return tuple(unique)
    return tuple(x for x in unique if x.answers == (which == "answers"))


def fillers(scenario: IntakeScenario, lines: Sequence[Line], seed: int) -> dict[Line, list[str]]:
    """The values each template is said with, from the scenario's own ``say`` over ``FILLERS``
    drawn profiles at three capacities; most frequent first, at most ``MAX_FILLERS``."""
    from sim2human.simulators.restyled import Voice

    templates = [x for x in lines if SLOT in x.line]
    voice = Voice.of(
        tuple(Restyle(line=x.line, field=x.field, rewrites=(x.line,)) for x in templates)
    )
    seen: dict[Line, Counter[str]] = {x: Counter() for x in templates}
    rng = seeding.stream(seed, "restyle-fillers")
    for _ in range(FILLERS):
        profile = scenario.sample_profile(rng)
        for f, value in profile.items():
            for capacity in (0.0, 0.5, 1.0):
                said = scenario.say(f, value, capacity, rng)
                for pattern, key, _ in voice.templates.get(f, ()):
                    if (m := pattern.fullmatch(said)) is not None:
                        seen[Line(key, f, f)][m.group("v")] += 1
                        break
    return {x: [v for v, _ in c.most_common(MAX_FILLERS)] for x, c in seen.items()}


GROUPS: Final = ("confused", "evasive", "small_talk", "tangents")
"""``UserLines`` tuples the persona picks from (the single lines are ``SINGLE_LINES``)."""
KINDS_OF_TURN: Final[dict[str, Callable[[str], bool]]] = {
    "confused": lambda t: bool(CONFUSED.search(t)) or t.endswith("?"),
    "evasive": lambda t: bool(HEDGES.search(t)),
    "short": lambda t: len(t.split()) <= 6,
    "long": lambda t: len(t.split()) > 6,
}
"""Which train turns show the style of a kind of line that states no value."""
POOL_OF: Final = {
    "confused": "confused",
    "evasive": "evasive",
    "tangents": "long",
    "hang_up": "long",
}
"""A line's group -> its kind of turn (every other group that states no value: ``short``)."""


@dataclass(frozen=True)
class Pair:
    """One example: what the persona would say, and a real train patient's turn like it."""

    plain: str
    real: str


def shot_pairs(
    scenario: IntakeScenario, data: str | None = None, seed: int = 0
) -> dict[str, list[Pair]]:
    """Examples by line group, from the fit part's patient turns of ``SHOT_WORDS`` words. A
    turn the extractor reads exactly one field from pairs with the persona's plainest line for
    that value; a turn it reads nothing from pairs with a persona line of a group of its kind."""
    fit_part, _ = train_parts(data)
    lo, hi = SHOT_WORDS
    rng = seeding.stream(seed, "restyle-fillers", 1)
    empty = scenario.empty_record()
    out: dict[str, list[Pair]] = {}
    for turn in (t for t in fit_part.turns if lo <= len(t.split()) <= hi):
        read = {f: v for f, v in scenario.extract(turn, empty, None).items() if v is not None}
        if len(read) == 1:
            ((f, value),) = read.items()
            out.setdefault(f, []).append(Pair(scenario.say(f, value, 0.0, rng), turn))
        elif not read:
            for group in (*GROUPS, *SINGLE_LINES):
                if KINDS_OF_TURN[POOL_OF.get(group, "short")](turn):
                    plain = _plain_line(group, rng)
                    out.setdefault(group, []).append(Pair(plain, turn))
    return out


def _plain_line(group: str, rng: np.random.Generator) -> str:
    options = getattr(USER, group)
    return options if isinstance(options, str) else options[int(rng.integers(len(options)))]


def accept(
    scenario: IntakeScenario, line: Line, shown: str, value: str | None, text: str,
    values: Sequence[str], shots: Sequence[str],
) -> tuple[str | None, str]:  # fmt: skip
    """The cache entry for the model's ``text`` (a template for a template), or None, and why."""
    said = tidy(text.strip().splitlines()[0] if text.strip() else "", GUARD)
    if not said:
        return None, "empty"
    if out_of_role(said, GUARD, SYSTEM) is not None:
        return None, "out of role"
    if _META.search(said):
        return None, "meta"
    if too_long(said):
        return None, "long or looping"
    if _shingles(said) & {s for shot in shots for s in _shingles(shot)}:
        return None, "copies an example"
    if _words(said) == _words(shown):
        return None, "unchanged"
    rewrite = said
    if value is not None:
        spans = [m.span() for m in re.finditer(re.escape(value), said, re.IGNORECASE)]
        if len(spans) != 1:
            return None, "value not kept once"
        a, b = spans[0]
        rewrite = said[:a] + SLOT + said[b:]
        pairs = [(line.line.replace(SLOT, v), rewrite.replace(SLOT, v)) for v in values]
    else:
        pairs = [(line.line, rewrite)]
    own = (line.field,) if line.field else ()
    if not all(same_reading(scenario, o, r, own) for o, r in pairs):
        return None, "read differently"
    return rewrite, "kept"


def _draw(
    own: Sequence[Pair], extra: Sequence[Pair], n: int, rng: np.random.Generator
) -> list[Pair]:
    """``n`` examples: of the line's own group first, topped up from ``extra`` (answers of
    other fields: few train turns state a date of birth)."""
    k = min(n, len(own))
    shots = [own[i] for i in rng.choice(len(own), k, replace=False)] if k else []
    m = min(n - k, len(extra))
    shots += [extra[i] for i in rng.choice(len(extra), m, replace=False)] if m else []
    return [shots[i] for i in rng.permutation(len(shots))]


def prompt(shots: Sequence[Pair], line: str) -> list[dict[str, str]]:
    """The request: the examples as earlier exchanges (plain line -> real turn), then ``line``."""
    messages = [{"role": "system", "content": SYSTEM}]
    for p in shots:
        messages += [{"role": "user", "content": p.plain}, {"role": "assistant", "content": p.real}]
    return [*messages, {"role": "user", "content": line}]


def too_long(text: str) -> bool:
    """More than ``MAX_WORDS`` words, or a word trigram said twice (a small model's loop)."""
    words = _words(text)
    grams = [tuple(words[i : i + 3]) for i in range(len(words) - 2)]
    return len(text.split()) > MAX_WORDS or len(grams) != len(set(grams))


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _shingles(text: str, n: int = 5) -> set[tuple[str, ...]]:
    w = _words(text)
    return {tuple(w[i : i + n]) for i in range(len(w) - n + 1)}


class Settings(BaseModel):
    """What a generation was run with (written into the cache file's header)."""

    shots: int = 6
    candidates: int = 6
    temperature: float = 0.8
    max_tokens: int = 40
    which: Which = "all"
    seed: int = 0


class LineResult(BaseModel):
    line: str
    field: str | None
    rewrites: list[str]
    reasons: dict[str, int]


@dataclass
class Generation:
    settings: Settings
    results: list[LineResult] = field(default_factory=list)

    def entries(self) -> list[Restyle]:
        return [
            Restyle(line=r.line, field=r.field, rewrites=tuple(r.rewrites)) for r in self.results
        ]

    def reasons(self) -> Counter[str]:
        return sum((Counter(r.reasons) for r in self.results), Counter())


def generate(
    chat: Chat,
    settings: Settings,
    *,
    data: str | None = None,
    lines: Sequence[Line] | None = None,
    concurrency: int = 4,
    progress: Callable[[LineResult], None] | None = None,
) -> Generation:
    """Ask ``chat`` for ``settings.candidates`` rewrites of each line; keep those ``accept``
    keeps (each distinct once). A line's requests are seeded by its text, so a subset of the
    lines gets the same rewrites as the whole set."""
    scenario = IntakeScenario()
    chosen = tuple(lines) if lines is not None else intake_lines(settings.which)
    values = fillers(scenario, chosen, settings.seed)
    pairs = shot_pairs(scenario, data, settings.seed)
    answering = [g for g in pairs if g in scenario.fields]
    gate = asyncio.Semaphore(concurrency)

    async def one(line: Line) -> LineResult:
        base = zlib.crc32(f"{line.field}|{line.line}".encode())
        pool = pairs.get(line.group, [])
        extra = [p for g in answering if g != line.group for p in pairs[g]] if line.answers else []
        vals = values.get(line, [])
        shown = line.line.replace(SLOT, vals[0]) if vals else line.line
        value = vals[0] if vals else None
        kept: list[str] = []
        reasons: Counter[str] = Counter()
        for k in range(settings.candidates):
            rng = seeding.stream(settings.seed, "restyle", base, k)
            shots = _draw(pool, extra, settings.shots, rng)
            async with gate:
                reply = await chat.chat(
                    prompt(shots, shown), temperature=settings.temperature,
                    max_tokens=settings.max_tokens, seed=int(rng.integers(2**31)),
                )  # fmt: skip
            real = [p.real for p in shots]
            rewrite, why = accept(scenario, line, shown, value, reply.text, vals, real)
            reasons[why] += 1
            if rewrite is not None and rewrite not in kept:
                kept.append(rewrite)
        result = LineResult(line=line.line, field=line.field, rewrites=kept, reasons=dict(reasons))
        if progress is not None:
            progress(result)
        return result

    async def run() -> list[LineResult]:
        try:
            return list(await asyncio.gather(*(one(x) for x in chosen)))
        finally:
            close = getattr(chat, "aclose", None)  # a ChatClient's connections, on this loop
            if close is not None:
                await close()

    return Generation(settings=settings, results=asyncio.run(run()))
