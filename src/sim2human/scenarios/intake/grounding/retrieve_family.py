"""Restyling a persona family's lines with real patients' turns: ``sim2human retrieve-family``.

Why: ``restyled-aci``'s rewrites come from a 135M-parameter model and are often nonsense; the
ACI-Bench train split already holds about 1,200 real patient turns. This generator fills the
same restyle cache (``simulators.restyled``: the original line, its field, its rewrites; the
same acceptance rule; the same play-time check) with *retrieved* turns instead of generated
ones, so no model runs at all (seconds, bit-for-bit reproducible).

Only patient turns of the **train split's fit part** are read (``fit_family.train_parts``: the
validation part is left for choosing the settings; held-out visits are never read), of
``min_words`` to ``max_words`` words. For each line the intake persona says
(``restyle_family.intake_lines``):

- a **fixed line** (a hesitation, small talk, a "none" answer, a read-back reply, the opening):
  candidates are turns of the line's kind (``restyle_family.KINDS_OF_TURN``: a question for
  confusion, a hedge for evasion, a longer turn for a tangent, a short one otherwise) from which
  the extractor reads *exactly* what it reads from the line whatever field it expects, with the
  same signals;
- a **template** (``"I take {v}."``): turns from which the extractor, expecting the template's
  field, reads a value of it are de-lexicalised (``delexicalise``: the shortest span that alone
  reads that value, found once, becomes ``{v}``); a candidate is kept only if, for every value
  the scenario says with that template (``restyle_family.fillers``), the filled candidate reads
  exactly as the filled original whatever field is expected (``Reader``: what
  ``restyled.same_reading`` checks, over every field; stricter than the generated cache's
  own-field check, so for those values a member's play-time check never sends it back to the
  original line).

Then at most ``per_line`` candidates are kept per line, distinct in their words: the ones
nearest the original in meaning (``rank``: cosine similarity of ``minilm`` or ``lexical``
embeddings) or a seeded random draw (``random``). The cache holds no words of ACI-Bench, only
where each kept turn is (``pointers``: the encounter, the patient turn's index, a template's span,
a hash of the turn); members read the turns from the corpus in place (``restyle_entries.resolve``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Final, Literal

import numpy as np
from pydantic import BaseModel, Field

from sim2human import seeding
from sim2human.corpora import aci_bench
from sim2human.scenarios.intake.grounding.fit_family import train_parts
from sim2human.scenarios.intake.grounding.restyle_family import (
    KINDS_OF_TURN,
    POOL_OF,
    Line,
    Which,
    fillers,
    intake_lines,
)
from sim2human.scenarios.intake.scenario import IntakeScenario
from sim2human.simulators.restyle_entries import SLOT, PointedLine, Pointer, Restyle, turn_hash

Rank = Literal["minilm", "lexical", "random"]
MAX_SPAN: Final = 8
"""Words a value's span may have at most (a list of three drugs with "and")."""
_TOKEN = re.compile(r"[\w'/.-]*\w")
_WORD = re.compile(r"[a-z0-9']+")
Span = tuple[int, int] | None
"""Where a template's ``{v}`` is in the turn it came from (None: a whole turn)."""


class RetrieveSettings(BaseModel):
    """What a retrieval was run with (written into the cache file's header)."""

    min_words: int = Field(1, ge=1)
    max_words: int = Field(20, ge=1)
    per_line: int = Field(8, ge=1)
    rank: Rank = "random"
    which: Which = "all"
    seed: int = 0


@dataclass
class Retrieved:
    """One line's kept turns, and how many candidates passed the rule before the cap."""

    line: Line
    rewrites: list[str]
    passed: int
    origins: list[tuple[str, Span]] = field(default_factory=list)
    """Each rewrite's turn (as the pool holds it) and span, in the order of ``rewrites``."""


@dataclass
class Retrieval:
    settings: RetrieveSettings
    turns: int
    """Fit-part turns within the word limits (the pool)."""
    results: list[Retrieved] = field(default_factory=list)

    def entries(self) -> list[Restyle]:
        return [
            Restyle(line=r.line.line, field=r.line.field, rewrites=tuple(r.rewrites))
            for r in self.results
        ]

    def pointers(self, sources: dict[str, tuple[str, int]]) -> tuple[PointedLine, ...]:
        """The cache's entries as pointers into the corpus: ``sources`` says where each pool
        turn first is (``pool_sources``)."""
        return tuple(
            PointedLine(
                line=r.line.line,
                field=r.line.field,
                rewrites=tuple(
                    Pointer(
                        encounter=sources[turn][0],
                        turn=sources[turn][1],
                        span=span,
                        hash=turn_hash(turn),
                    )
                    for turn, span in r.origins
                ),
            )
            for r in self.results
        )


class Reader:
    """The scenario's full reading of a text (memoised): the field values it extracts with no
    field expected and with each field expected, and the signals with none expected."""

    def __init__(self, scenario: IntakeScenario) -> None:
        self.scenario = scenario
        self._memo: dict[str, tuple[object, ...]] = {}

    def __call__(self, text: str) -> tuple[object, ...]:
        if text not in self._memo:
            s, empty = self.scenario, self.scenario.empty_record()
            read = [s.extract(text, empty, f) for f in (None, *s.fields)]
            self._memo[text] = (*read, s.signals(text, empty, read[0]))
        return self._memo[text]


def delexicalise(scenario: IntakeScenario, turn: str, field_name: str) -> str | None:
    """``turn`` with the value of ``field_name`` it states replaced by ``{v}``: the shortest
    span of words that alone reads that value (expecting the field), found exactly once; None
    when the turn states no value of the field (or only "none", a yes or a no: a denial is no
    value's slot) or the span is not unique."""
    span = value_span(scenario, turn, field_name)
    return None if span is None else turn[: span[0]] + SLOT + turn[span[1] :]


def value_span(scenario: IntakeScenario, turn: str, field_name: str) -> tuple[int, int] | None:
    """The characters of ``turn`` that ``delexicalise`` makes ``{v}``, or None."""
    empty = scenario.empty_record()
    value = scenario.extract(turn, empty, field_name).get(field_name)
    if value is None or value == () or isinstance(value, bool):  # none, or a yes or no
        return None
    tokens = list(_TOKEN.finditer(turn))
    for n in range(1, min(MAX_SPAN, len(tokens)) + 1):
        hits = []
        for i in range(len(tokens) - n + 1):
            a, b = tokens[i].start(), tokens[i + n - 1].end()
            if scenario.extract(turn[a:b], empty, field_name).get(field_name) == value:
                hits.append((a, b))
        if len(hits) == 1:
            return hits[0]
        if hits:
            return None
    return None


def pool(data: str | None = None) -> list[str]:
    """The fit part's patient turns (one line each, no braces), in corpus order."""
    fit_part, _ = train_parts(data)
    return [t.strip() for t in fit_part.turns if not {"{", "}", "\n"} & set(t)]


def pool_sources(data: str | None = None) -> dict[str, tuple[str, int]]:
    """Where each turn of ``pool`` first is: its encounter and its index among that encounter's
    patient turns (what ``restyle_entries.resolve`` reads back)."""
    fit_part, _ = train_parts(data)
    by_id = {t.encounter_id: t for t in aci_bench.split_of(aci_bench.load(data), "train")}
    out: dict[str, tuple[str, int]] = {}
    for eid in fit_part.encounters:
        for i, x in enumerate(by_id[eid].patient_turns):
            out.setdefault(aci_bench.detokenize(x).strip(), (eid, i))
    return out


def fixed_candidates(line: Line, turns: Sequence[str], reader: Reader) -> list[str]:
    """Turns of the line's kind the scenario reads exactly as the line."""
    kind: Callable[[str], bool] = (
        (lambda t: True) if line.answers else KINDS_OF_TURN[POOL_OF.get(line.group, "short")]
    )
    target = reader(line.line)
    return [t for t in turns if kind(t) and reader(t) == target]


def template_candidates(
    line: Line, templates: Sequence[str], values: Sequence[str], reader: Reader
) -> list[str]:
    """De-lexicalised turns that, filled with each of ``values``, read as the filled line."""

    def same(c: str) -> bool:
        return all(reader(line.line.replace(SLOT, v)) == reader(c.replace(SLOT, v)) for v in values)

    return [c for c in templates if values and same(c)]


def retrieve(
    settings: RetrieveSettings,
    *,
    data: str | None = None,
    lines: Sequence[Line] | None = None,
    embed_texts: Callable[[list[str]], np.ndarray] | None = None,
) -> Retrieval:
    """The retrieved cache for ``lines`` (default: ``settings.which`` of ``intake_lines``) from
    the fit part's turns (``pool``)."""
    chosen = tuple(lines) if lines is not None else intake_lines(settings.which)
    return retrieve_from(pool(data), settings, chosen, embed_texts)


def retrieve_from(
    turns: Sequence[str],
    settings: RetrieveSettings,
    lines: Sequence[Line],
    embed_texts: Callable[[list[str]], np.ndarray] | None = None,
) -> Retrieval:
    """The retrieved cache for ``lines`` from those of ``turns`` within the word limits."""
    scenario = IntakeScenario()
    reader = Reader(scenario)
    chosen = tuple(lines)
    values = fillers(scenario, chosen, settings.seed)
    lo, hi = settings.min_words, settings.max_words
    turns = list(dict.fromkeys(t for t in turns if lo <= len(t.split()) <= hi))
    templates: dict[str, list[str]] = {}
    origin: dict[str, tuple[str, Span]] = {t: (t, None) for t in turns}
    for line in chosen:
        if SLOT in line.line and line.field is not None and line.field not in templates:
            made: dict[str, tuple[str, Span]] = {}
            for t in turns:
                if (span := value_span(scenario, t, line.field)) is not None:
                    made.setdefault(t[: span[0]] + SLOT + t[span[1] :], (t, span))
            templates[line.field] = list(made)
            origin |= made
    out = Retrieval(settings=settings, turns=len(turns))
    for line in chosen:
        vals = values.get(line, [])
        if SLOT in line.line and line.field is not None:
            found = template_candidates(line, templates[line.field], vals, reader)
        else:
            found = fixed_candidates(line, turns, reader)
        found = _distinct(found, line.line)
        shown = vals[0] if vals else ""
        kept = _cap(line, found, shown, settings, embed_texts)
        origins = [origin[c] for c in kept]
        out.results.append(Retrieved(line, kept, passed=len(found), origins=origins))
    return out


def _distinct(found: Sequence[str], original: str) -> list[str]:
    """One candidate per wording (case and punctuation aside), none the original's words."""
    seen = {tuple(_WORD.findall(original.lower()))}
    out: list[str] = []
    for c in found:
        key = tuple(_WORD.findall(c.lower()))
        if key not in seen:
            seen.add(key)
            out.append(c)
    return out


def _cap(
    line: Line,
    found: list[str],
    shown: str,
    settings: RetrieveSettings,
    embed_texts: Callable[[list[str]], np.ndarray] | None,
) -> list[str]:
    """At most ``per_line`` of ``found``: the nearest the line in meaning, or a seeded draw."""
    k = settings.per_line
    if len(found) <= k:
        return found
    if settings.rank == "random" or embed_texts is None:
        rng = seeding.stream(settings.seed, "retrieve", line.field or "", line.line)
        return [found[i] for i in sorted(rng.choice(len(found), k, replace=False))]
    texts = [line.line.replace(SLOT, shown)] + [c.replace(SLOT, shown) for c in found]
    m = np.asarray(embed_texts(texts), dtype=float)
    m = m / np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-12)
    sims = m[1:] @ m[0]
    order = np.argsort(-sims, kind="stable")[:k]
    return [found[i] for i in sorted(order)]


def embedder(rank: Rank) -> Callable[[list[str]], np.ndarray] | None:
    """The embedding function ``rank`` orders candidates with (None: a random draw)."""
    if rank == "random":
        return None
    from sim2human.metrics.embeddings import embed

    def run(texts: list[str]) -> np.ndarray:
        matrix, _ = embed(texts, rank)
        out: np.ndarray = np.nan_to_num(np.asarray(matrix, dtype=float))
        return out

    return run
