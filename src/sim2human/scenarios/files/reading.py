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

from sim2human.scenarios import readers
from sim2human.scenarios.files.markers import Marks
from sim2human.scenarios.files.schema import (
    CategoryField,
    DateField,
    FieldSpec,
    ListField,
    NumberField,
    YesNoField,
)
from sim2human.scenarios.spoken_numbers import spoken, with_digits
from sim2human.scenarios.vocab import Vocab, words
from sim2human.types import Value

_CLAUSES = re.compile(r"[.;!?\n]|\bbut\b")
_NUMBER = r"(\d+)"
"""A number field reads digits: spoken numbers are written as digits first (``with_digits``)."""
_DENIAL = re.compile(r"\b(no|none|nothing|not|never)\b")
_LEADING_ZERO = re.compile(r"\b0(\d[:.]\d\d)\b")
"""A clock time written with a leading zero ("09:15", MultiWOZ's own format): read as "9:15"."""
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
    """Every marked field's markers (``scenarios.files.markers``): this one's, if it has them,
    and its rivals'."""
    rival_units: tuple[str, ...] = ()
    """The other number fields' units: "90 days" said when this field is asked is theirs."""

    @cached_property
    def mentions(self) -> tuple[str, ...]:
        return tuple(c.lower() for c in (*self.spec.cues, self.label))

    def read(self, text: str, expecting: bool, asked: str | None = None) -> Value | None:
        """The value ``text`` states for this field, if it states one (``asked``: the field
        the line answers, if any)."""
        low = _LEADING_ZERO.sub(r"\1", text.lower())
        f = self.spec
        if isinstance(f, CategoryField) and self.vocab is not None:
            if self.name in self.marks.by_field:
                return self._marked(low, expecting)
            if self.marks.holds:
                return self._unmarked(low, asked)
            tokens = tuple(words(low))
            said = [n for n, first, _ in self.vocab.spans(tokens) if not _negated(tokens, first)]
            return said[0] if said else None
        if isinstance(f, ListField):
            return self._items(low, expecting)
        if isinstance(f, YesNoField):
            return self._yes_no(low, expecting)
        if isinstance(f, NumberField):
            low = with_digits(_said_aliases(f, _TIME.sub(" ", low)))
        clauses = [c for c in _CLAUSES.split(low) if c.strip()]
        about = [c for c in clauses if any(m in c for m in self.mentions)]
        if isinstance(f, NumberField):
            return self._number(low, about if not expecting else clauses)
        assert isinstance(f, DateField)
        for clause in clauses if (expecting or self.alone) else about:
            day = readers.birth_date(clause)
            if day is not None and f.range[0] <= date.fromisoformat(day) <= f.range[1]:
                return day
        return None

    def takes_back(self, text: str, value: Value) -> bool:
        """Whether ``text`` says "not" before ``value``, a name of this field's vocabulary."""
        if self.vocab is None or not isinstance(value, str):
            return False
        tokens = tuple(words(_LEADING_ZERO.sub(r"\1", text.lower())))
        return any(
            name == value and _negated(tokens, first)
            for name, first, _ in _every_span(self.vocab, tokens)
        )

    def _marked(self, low: str, expecting: bool) -> str | None:
        """The first value marked for this field; unmarked, the first where it was asked."""
        assert self.vocab is not None
        tokens = tuple(words(low))
        unmarked = None
        for name, first, last in self.vocab.spans(tokens):
            if _negated(tokens, first):
                continue
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
            if _negated(tokens, first):
                continue
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
            return readers.yes_no(low)
        for clause in _CLAUSES.split(low):
            if any(m in clause for m in self.mentions):
                return readers.yes_no(clause)
        return None

    def _number(self, low: str, clauses: list[str]) -> int | None:
        """A number said with this field's unit, anywhere; else one in ``clauses`` (where the
        line answers the field) that carries no other number field's unit ("90 days" said
        when the party size was asked is the other field's). A number after "not" is the one
        taken back ("not 40, 42")."""
        f = self.spec
        assert isinstance(f, NumberField)
        lo, hi = f.range
        units = tuple(u for u in (f.unit, *f.more_units) if u)
        if units:
            for m in re.finditer(rf"\b{_NUMBER}\s+(?:of\s+)?{_units(units)}\b", low):
                if lo <= (n := int(m[1])) <= hi and not _after_not(low, m.start()):
                    return n
        rival = rf"\s+(?:of\s+)?{_units(self.rival_units)}\b" if self.rival_units else None
        for clause in clauses:
            for m in re.finditer(rf"\b{_NUMBER}\b", clause):
                if rival and re.match(rival, clause[m.end() :]):
                    continue
                if lo <= (n := int(m[1])) <= hi and not _after_not(clause, m.start()):
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
        return say_with(pick(f.say), self.words(value, capacity, rng))

    def words(self, value: Value, capacity: float, rng: np.random.Generator) -> str:
        say_words = capacity >= 0.5 and rng.random() < 0.5
        if isinstance(value, tuple):
            names = [self._alias(v, capacity, rng) for v in value]
            return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
        if isinstance(self.spec, NumberField) and isinstance(value, int):
            said = [a for a, n in self.spec.aliases.items() if n == value]
            if said and capacity >= 0.5 and rng.random() < 0.5:
                return said[int(rng.integers(len(said)))]
            return spoken(value) if say_words and 0 <= value < 10**6 else str(value)
        if isinstance(self.spec, DateField):
            d = date.fromisoformat(str(value))
            month = readers.MONTHS[d.month - 1].capitalize()
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
            return f"{d.day} {readers.MONTHS[d.month - 1].capitalize()} {d.year}"
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


_LEADS = frozenset({"the", "on", "at", "for", "in", "to", "from", "a"})


def _negated(tokens: tuple[str, ...], first: int) -> bool:
    """Whether the value starting at ``tokens[first]`` is said with "not" before it ("sorry,
    not Tuesday: Wednesday"; "not on the north side"): the value the caller takes back."""
    before = tokens[max(0, first - 3) : first]
    while before and before[-1] in _LEADS:
        before = before[:-1]
    return bool(before) and before[-1] == "not"


def _units(units: tuple[str, ...]) -> str:
    """A pattern for any of ``units``, singular or plural."""
    return "(?:" + "|".join(re.escape(u.lower().rstrip("s")) + "s?" for u in units) + ")"


def _after_not(text: str, start: int) -> bool:
    return re.search(r"\bnot\s+$", text[:start]) is not None


def _said_aliases(f: NumberField, low: str) -> str:
    """``low`` with each of the field's number aliases ("a dozen") written as its digits."""
    for alias in sorted(f.aliases, key=len, reverse=True):
        low = re.sub(rf"\b{re.escape(alias.lower())}\b", str(f.aliases[alias]), low)
    return low


def say_with(template: str, said: str) -> str:
    """``template`` with ``said`` for ``{v}``, read as a person would say it: a word the
    template puts just before the value that the value itself starts with is said once ("It's
    my {v}" with "my usual order": "It's my usual order", not "my my")."""
    head, _, tail = template.partition("{v}")
    before, first = words(head), words(said)
    if before and first and before[-1] == first[0]:
        head = re.sub(rf"\b{re.escape(before[-1])}\s*$", "", head, flags=re.IGNORECASE)
    return (head + "{v}" + tail).format(v=said)


def _norm(text: str) -> str:
    return " ".join(words(text))
