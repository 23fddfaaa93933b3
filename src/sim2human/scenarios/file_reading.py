"""How a file scenario reads and says values, by field kind: the generic half of a slot-filling
scenario that ``intake`` writes by hand.

Reading a line, each field looks for its own value: a category or list item by its vocabulary
(typo-tolerant, ``scenarios.vocab``; with ``markers``, by the words around it too), a yes/no by
the caller's own yes and no sentences, a number by its unit ("4 people"; a clock time is never
a number) and a date in any spoken form. Numbers without their unit, dates (where
a scenario has several) and bare yes/no count only where the line answers the field: it was just
asked, or the same clause names the field (its label or a cue, as in a read-back).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date
from functools import cached_property

import numpy as np

from sim2human.scenarios.file_markers import Marks
from sim2human.scenarios.files import (
    CategoryField,
    DateField,
    FieldSpec,
    ListField,
    NumberField,
    YesNoField,
)
from sim2human.scenarios.intake import parsing
from sim2human.scenarios.vocab import Vocab, words
from sim2human.types import Value

_CLAUSES = re.compile(r"[.;!?\n]|\bbut\b")
_NUMBER_WORDS = {k: v for k, v in parsing.NUMBER_WORDS.items() if k not in ("no", "a", "an")}
_NUMBER = r"(\d+|" + "|".join(sorted(_NUMBER_WORDS, key=len, reverse=True)) + r")"
_SPOKEN = {v: k for k, v in _NUMBER_WORDS.items() if k not in ("couple", "few")}
_DENIAL = re.compile(r"\b(no|none|nothing|not|never)\b")
_TIME = re.compile(r"\b\d{1,2}[:.]\d\d\b(?:\s*[ap]\.?m\b)?|\b\d{1,2}\s*(?:[ap]\.?m\b|o'?clock\b)")
"""A clock time ("17:01", "5.30", "7 pm", "8 o'clock"): no number field's answer (a party of
17:01 is no party of 1)."""


def n_forms(capacity: float, n: int) -> int:
    """How many of ``n`` forms (most common first) a caller of ``capacity`` uses."""
    return 1 + round(capacity * (n - 1))


@dataclass(frozen=True)
class FieldReader:
    """One field's reading and speech."""

    name: str
    spec: FieldSpec
    vocab: Vocab | None
    label: str
    alone: bool
    """The only field of its kind (a date read anywhere is this one's)."""
    marks: Marks = field(default_factory=lambda: Marks({}))
    """Every marked field's markers (``scenarios.file_markers``): this one's, if it has them,
    and its rivals'."""

    @cached_property
    def mentions(self) -> tuple[str, ...]:
        return tuple(c.lower() for c in (*self.spec.cues, self.label))

    def read(self, text: str, expecting: bool, asked: str | None = None) -> Value | None:
        """The value ``text`` states for this field, if it states one (``asked``: the field
        the line answers, if any)."""
        low = text.lower()
        f = self.spec
        if isinstance(f, CategoryField) and self.vocab is not None:
            if self.name in self.marks.by_field:
                return self._marked(low, expecting)
            if self.marks.holds:
                return self._unmarked(low, asked)
            found = self.vocab.find(low)
            return found[0] if found else None
        if isinstance(f, ListField):
            return self._items(low, expecting)
        if isinstance(f, YesNoField):
            return self._yes_no(low, expecting)
        if isinstance(f, NumberField):
            low = _TIME.sub(" ", low)
        clauses = [c for c in _CLAUSES.split(low) if c.strip()]
        about = [c for c in clauses if any(m in c for m in self.mentions)]
        if isinstance(f, NumberField):
            return self._number(low, about if not expecting else clauses)
        assert isinstance(f, DateField)
        for clause in clauses if (expecting or self.alone) else about:
            day = parsing.birth_date(clause)
            if day is not None and f.range[0] <= date.fromisoformat(day) <= f.range[1]:
                return day
        return None

    def _marked(self, low: str, expecting: bool) -> str | None:
        """The first value marked for this field; unmarked, the first where it was asked."""
        assert self.vocab is not None
        tokens = tuple(words(low))
        unmarked = None
        for name, first, last in self.vocab.spans(tokens):
            owner = self.marks.owner(tokens, first, last)
            if owner == self.name:
                return name
            if owner is None and unmarked is None:
                unmarked = name
        return unmarked if expecting else None

    def _unmarked(self, low: str, asked: str | None) -> str | None:
        """The first value said that is neither marked for another field holding it nor the
        answer of such a field just asked ("booked for 18:30, how about 17:30?" is 17:30 for
        a ``time`` beside an ``old_time`` marked by "booked for"; a bare "18:30" answering the
        old time is not ``time``'s). A value said twice counts twice: in a read-back "original
        time: 18:30; time: 18:30" the second is ``time``'s."""
        assert self.vocab is not None
        tokens = tuple(words(low))
        spans = _every_span(self.vocab, tokens)
        answer = self._answer_of(asked, tokens, spans)
        for name, first, last in spans:
            if first != answer and not self.marks.taken(tokens, first, last, name):
                return name
        return None

    def _answer_of(
        self, asked: str | None, tokens: tuple[str, ...], spans: list[tuple[str, int, int]]
    ) -> int | None:
        """Where the value the ``asked`` marked field takes as its answer starts (the first
        value marked for no field, when none is marked for it), or None."""
        held = self.marks.holds.get(asked or "")
        if asked is None or asked == self.name or held is None:
            return None
        owners = [(n, f, self.marks.owner(tokens, f, last)) for n, f, last in spans if n in held]
        if any(owner == asked for _, _, owner in owners):
            return None
        return next((f for _, f, owner in owners if owner is None), None)

    def _items(self, low: str, expecting: bool) -> Value | None:
        assert isinstance(self.spec, ListField) and self.vocab is not None
        found = self.vocab.find(low)
        if found:
            return tuple(sorted(set(found)))[: self.spec.size[1]]
        said_none = any(_norm(n) in _norm(low) for n in self.spec.none)
        if said_none or (expecting and _DENIAL.search(low)):
            return ()
        return None

    def _yes_no(self, low: str, expecting: bool) -> bool | None:
        assert isinstance(self.spec, YesNoField)
        text = _norm(low)
        for value, forms in ((True, self.spec.said_yes), (False, self.spec.said_no)):
            if any(_norm(form) in text for form in forms):
                return value
        if expecting:
            return parsing.yes_no(low)
        for clause in _CLAUSES.split(low):
            if any(m in clause for m in self.mentions):
                return parsing.yes_no(clause)
        return None

    def _number(self, low: str, clauses: list[str]) -> int | None:
        assert isinstance(self.spec, NumberField)
        lo, hi = self.spec.range
        unit = self.spec.unit
        if unit:
            unit_re = re.escape(unit.lower().rstrip("s"))
            for m in re.finditer(rf"\b{_NUMBER}\s+{unit_re}s?\b", low):
                if lo <= (n := _value(m[1])) <= hi:
                    return n
        for clause in clauses:
            for m in re.finditer(rf"\b{_NUMBER}\b", clause):
                if lo <= (n := _value(m[1])) <= hi:
                    return n
        return None

    def say(self, value: Value, capacity: float, rng: np.random.Generator) -> str:
        """One way a caller of ``capacity`` says ``value``."""
        f = self.spec

        def pick(options: tuple[str, ...]) -> str:
            return options[int(rng.integers(n_forms(capacity, len(options))))]

        if isinstance(f, YesNoField):
            return pick(f.said_yes if value else f.said_no)
        if isinstance(f, ListField) and isinstance(value, tuple) and not value:
            return pick(f.none)
        template = pick(f.say)
        return template.format(v=self.words(value, capacity, rng))

    def words(self, value: Value, capacity: float, rng: np.random.Generator) -> str:
        spoken = capacity >= 0.5 and rng.random() < 0.5
        if isinstance(value, tuple):
            names = [self._alias(v, capacity, rng) for v in value]
            return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
        if isinstance(self.spec, NumberField) and isinstance(value, int):
            return _SPOKEN.get(value, str(value)) if spoken else str(value)
        if isinstance(self.spec, DateField):
            d = date.fromisoformat(str(value))
            month = parsing.MONTHS[d.month - 1].capitalize()
            styles = (f"{month} {d.day}, {d.year}", f"{d.day} {month} {d.year}")
            return styles[int(rng.integers(n_forms(capacity, len(styles))))]
        return self._alias(str(value), capacity, rng)

    def _alias(self, canonical: str, capacity: float, rng: np.random.Generator) -> str:
        """A name of ``canonical`` for a caller of ``capacity``, spelled as its file writes it."""
        if self.vocab is None:
            return canonical
        if capacity < 0.5:
            return self.vocab.spell(canonical)
        names = [a for a, c in self.vocab.aliases.items() if c == canonical]
        return self.vocab.spell(names[int(rng.integers(n_forms(capacity, len(names))))])

    def plain(self, value: Value) -> str:
        """``value`` in plain words that this reader reads back (read-backs, LLM prompts)."""
        f = self.spec
        if isinstance(value, bool):
            return "yes" if value else "no"
        if isinstance(value, tuple):
            return " and ".join(self._spell(v) for v in value) if value else "none"
        if isinstance(f, NumberField) and f.unit:
            return f"{value} {f.unit}"
        if isinstance(f, DateField):
            d = date.fromisoformat(str(value))
            return f"{d.day} {parsing.MONTHS[d.month - 1].capitalize()} {d.year}"
        return self._spell(str(value))

    def _spell(self, name: str) -> str:
        """A vocabulary item as its file writes it ("19:30", not the name "19 30")."""
        return self.vocab.spell(name) if self.vocab is not None else name


def _every_span(vocab: Vocab, tokens: tuple[str, ...]) -> list[tuple[str, int, int]]:
    """``vocab.spans`` with a name said again counted again (``spans`` finds each once): after
    each span found, what follows it is searched anew."""
    out: list[tuple[str, int, int]] = []
    start = 0
    while start < len(tokens):
        found = vocab.spans(tokens[start:])
        if not found:
            break
        name, first, last = found[0]
        out.append((name, start + first, start + last))
        start += last + 1
    return out


def _value(token: str) -> int:
    return int(token) if token.isdigit() else _NUMBER_WORDS[token]


def _norm(text: str) -> str:
    return " ".join(words(text))
