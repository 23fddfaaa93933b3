"""Fields that share a vocabulary, told apart by the words around a value: a category field's
``markers: {before: [to, arriving in], after: [...]}``.

A value a field's vocabulary finds in a turn is *marked* for a field when one of that field's
``before`` markers ends just before it (``the`` may stand between: "from the airport") or one of
its ``after`` markers starts just after it; the nearest marker wins. A field with markers reads
the first value marked for it, or, only where the turn answers that field (it was just asked),
the first value marked for no field: "from Ely to Cambridge" gives the departure Ely and the
destination Cambridge whatever was asked; a bare "Cambridge" answers the question asked.
A field without markers skips a value marked for another field whose vocabulary holds it, and
the value answering such a field just asked ("booked for 18:30, how about 17:30?" gives the
unmarked ``time`` 17:30 when the original time is marked by "booked for";
``files.reading.FieldReader``), and otherwise reads as before. The checks here (no marker at all, a
marker two fields share, a ``say`` wording that carries none of its field's markers) run with the
file's others.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from sim2human.scenarios.files.lines import KeyPath
from sim2human.scenarios.files.schema import CategoryField, FieldSpec
from sim2human.scenarios.vocab import words

Problem = tuple[KeyPath, str]
Phrase = tuple[str, ...]
_BETWEEN = frozenset({"the"})
"""Words that may stand between a ``before`` marker and its value."""


@dataclass(frozen=True)
class Marks:
    """Every marked field's markers, as words: field -> (before phrases, after phrases)."""

    by_field: Mapping[str, tuple[tuple[Phrase, ...], tuple[Phrase, ...]]]
    holds: Mapping[str, frozenset[str]] = field(default_factory=dict)
    """Marked field -> the canonical names its vocabulary holds (a value marked for it that an
    unmarked field's vocabulary also finds is the marked field's, not the unmarked one's)."""

    def taken(self, tokens: tuple[str, ...], first: int, last: int, name: str) -> bool:
        """Whether the value ``name`` at ``tokens[first..last]`` is marked for a field that can
        hold it (so a field without markers leaves it to that field)."""
        owner = self.owner(tokens, first, last)
        return owner is not None and name in self.holds.get(owner, frozenset())

    def owner(self, tokens: tuple[str, ...], first: int, last: int) -> str | None:
        """The field a value at ``tokens[first..last]`` is marked for, or None (unmarked)."""
        best: tuple[int, str] | None = None
        for name, (before, after) in self.by_field.items():
            for gap in _gaps(tokens, first, before, after, last):
                if best is None or gap < best[0]:
                    best = (gap, name)
        return best[1] if best is not None else None


def _gaps(
    tokens: tuple[str, ...],
    first: int,
    before: tuple[Phrase, ...],
    after: tuple[Phrase, ...],
    last: int,
) -> Iterator[int]:
    """How far each marker that fits stands from the value (0: right beside it)."""
    for phrase in before:
        for gap in (0, 1):
            end = first - gap
            if gap and (end < 0 or tokens[end] not in _BETWEEN):
                continue
            if end >= len(phrase) and tokens[end - len(phrase) : end] == phrase:
                yield gap
    for phrase in after:
        if tokens[last + 1 : last + 1 + len(phrase)] == phrase:
            yield 0


def marks(
    fields: Mapping[str, FieldSpec], holds: Mapping[str, frozenset[str]] | None = None
) -> Marks:
    """The markers of the file's category fields that have them (with ``holds``: each field's
    canonical names, so unmarked fields leave values marked for a field holding them)."""
    out: dict[str, tuple[tuple[Phrase, ...], tuple[Phrase, ...]]] = {}
    for name, f in fields.items():
        if isinstance(f, CategoryField) and f.markers is not None:
            out[name] = (_phrases(f.markers.before), _phrases(f.markers.after))
    return Marks(out, {n: v for n, v in (holds or {}).items() if n in out})


def _phrases(markers: tuple[str, ...]) -> tuple[Phrase, ...]:
    return tuple(p for m in markers if (p := tuple(words(m))))


def carries(template: str, before: tuple[Phrase, ...], after: tuple[Phrase, ...]) -> bool:
    """Whether a ``say`` template marks its ``{v}`` with one of these markers."""
    head, _, tail = template.partition("{v}")
    left, right = tuple(words(head)), tuple(words(tail))
    beside = (left, left[:-1] if left and left[-1] in _BETWEEN else ())
    return any(side[-len(p) :] == p for side in beside for p in before) or any(
        right[: len(p)] == p for p in after
    )


def marker_problems(fields: Mapping[str, FieldSpec]) -> Iterator[Problem]:
    """What is wrong with the fields' ``markers``."""
    seen: dict[Phrase, tuple[str, str]] = {}
    for name, f in fields.items():
        if not isinstance(f, CategoryField) or f.markers is None:
            continue
        at: KeyPath = ("fields", name, "markers")
        m = f.markers
        if not m.before and not m.after:
            yield at, "give 'before' or 'after' (the words around this field's values)"
            continue
        for side in ("before", "after"):
            for i, text in enumerate(getattr(m, side)):
                phrase = tuple(words(text))
                if not phrase:
                    yield (*at, side, i), f"{text!r} has no words"
                elif (other := seen.get(phrase)) is not None and other[0] != name:
                    yield (
                        (*at, side, i),
                        f"{text!r} is also a marker of {other[0]} ({other[1]}): "
                        "a value after it could be either's",
                    )
                else:
                    seen.setdefault(phrase, (name, side))
        before, after = _phrases(m.before), _phrases(m.after)
        for i, text in enumerate(f.say):
            if "{v}" in text and not carries(text, before, after):
                yield (
                    ("fields", name, "say", i),
                    f"{text!r} carries none of the field's markers, so a caller saying it "
                    "unasked would not be heard",
                )
