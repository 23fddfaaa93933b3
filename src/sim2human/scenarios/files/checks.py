"""The checks of a scenario file that look across keys: every name it refers to exists, every
profile value is in its field's domain, and the scenario can read its own words (each ask
wording holds a cue of its field, each close a close cue). Each problem comes with the key path
to name (``lines.Lines`` turns it into a line)."""

from __future__ import annotations

import re
import string
from collections.abc import Iterator
from datetime import date

from sim2human.scenarios.files.lines import KeyPath
from sim2human.scenarios.files.markers import marker_problems
from sim2human.scenarios.files.schema import (
    ROLE_KINDS,
    CategoryField,
    DateField,
    FieldSpec,
    ListField,
    NumberField,
    ScenarioFile,
    YesNoField,
)
from sim2human.scenarios.files.when import Conditions, applies, conditions, when_problems
from sim2human.scenarios.vocab import Vocab, words
from sim2human.types import Value

Problem = tuple[KeyPath, str]
ACT_PLACEHOLDERS = frozenset({"readback", "last_question"})


def problems(spec: ScenarioFile, vocabs: dict[str, Vocab]) -> Iterator[Problem]:
    """Every cross-key problem of ``spec`` (its vocabularies loaded), in file order."""
    yield from _field_problems(spec, vocabs)
    yield from marker_problems(spec.fields)
    when = list(when_problems(spec.fields, vocabs))
    yield from when
    yield from _act_problems(spec)
    yield from _name_problems(spec)
    if spec.profiles is not None and not when:  # rows are read by the (acyclic) conditions
        conds = conditions(spec.fields)
        for i, row in enumerate(spec.profiles.rows):
            yield from _row_problems(spec, vocabs, conds, ("profiles", "rows", i), row)


def _known(spec: ScenarioFile, name: str) -> str | None:
    if name in spec.fields:
        return None
    return f"unknown field {name!r} (fields: {', '.join(spec.fields)})"


def _name_problems(spec: ScenarioFile) -> Iterator[Problem]:
    refs: list[tuple[KeyPath, str]] = [
        *((("gold", "fields", i), f) for i, f in enumerate(spec.gold.fields or ())),
        *((("user", "knows", i), f) for i, f in enumerate(spec.user.knows or ())),
        *((("user", "withholds", i), f) for i, f in enumerate(spec.user.withholds)),
    ]
    if spec.persona.opening_field is not None:
        refs.append((("persona", "opening_field"), spec.persona.opening_field))
    for loc, name in refs:
        if (why := _known(spec, name)) is not None:
            yield loc, why
    known = set(spec.user.knows or spec.fields)
    for i, f in enumerate(spec.gold.fields or spec.fields):
        if f not in known:
            yield ("gold", "fields", i), f"{f!r} is not in user.knows: no caller could tell it"
    if spec.persona.opening_field in spec.user.withholds:
        yield ("persona", "opening_field"), "a withheld field is never said unasked"
    acts = {a.id: a.kind for a in spec.acts}
    for role, act_id in spec.reference.items():
        kind = ROLE_KINDS.get(role, role)
        if act_id not in acts:
            yield ("reference", role), f"unknown act {act_id!r} (acts: {', '.join(acts)})"
        elif acts[act_id] != kind:
            yield ("reference", role), f"act {act_id!r} is a {acts[act_id]!r}, not {kind!r}"
    for group in ("tastes", "triggers"):
        for i, act_id in enumerate(getattr(spec.quirks, group)):
            if act_id not in acts:
                yield ("quirks", group, i), f"unknown act {act_id!r} (acts: {', '.join(acts)})"
            elif group == "triggers" and acts[act_id] != "style":
                yield ("quirks", group, i), f"act {act_id!r} is a {acts[act_id]!r}, not 'style'"


def _act_problems(spec: ScenarioFile) -> Iterator[Problem]:
    first: dict[str, int] = {}
    for i, act in enumerate(spec.acts):
        if act.id in first:
            yield ("acts", i, "id"), f"duplicate act id {act.id!r} (first at acts.{first[act.id]})"
        first.setdefault(act.id, i)
        if act.kind == "ask":
            yield ("acts", i, "kind"), "asks come from each field's 'ask' wordings, not acts"
        if (bad := _placeholders(act.text) - ACT_PLACEHOLDERS) != set():
            yield ("acts", i, "text"), f"unknown placeholder {{{sorted(bad)[0]}}}"
        cue = {"close": spec.cues.close, "confirm": spec.cues.confirm}.get(act.kind)
        if cue is not None and not _holds(act.text, cue):
            yield ("acts", i, "text"), f"a {act.kind} act must hold one of cues.{act.kind}"
        if act.kind == "greet" and not act.text.lower().startswith(tuple(spec.cues.greet)):
            yield ("acts", i, "text"), "a greet act must start with one of cues.greet"
    for kind in ("greet", "confirm", "close"):
        if not any(a.kind == kind for a in spec.acts):
            yield ("acts",), f"no act of kind {kind!r} (a slot-filling call needs one)"


def _field_problems(spec: ScenarioFile, vocabs: dict[str, Vocab]) -> Iterator[Problem]:
    for name, f in spec.fields.items():
        at: KeyPath = ("fields", name)
        for style in ("plain", "jargon"):
            for i, text in enumerate(getattr(f.ask, style)):
                if not _holds(text, f.cues):
                    yield (*at, "ask", style, i), f"{text!r} holds none of the field's cues"
        for key in _templates(f):
            for i, text in enumerate(getattr(f, key)):
                if (bad := _placeholders(text) - {"v"}) != set():
                    yield (*at, key, i), f"unknown placeholder {{{sorted(bad)[0]}}}"
                elif key == "say" and not isinstance(f, YesNoField) and "{v}" not in text:
                    yield (*at, key, i), "a 'say' template needs {v} (where the value goes)"
        yield from _domain_problems(at, f, vocabs.get(name))


def _templates(f: FieldSpec) -> tuple[str, ...]:
    if isinstance(f, YesNoField):
        return ("say", "said_yes", "said_no")
    return ("say", "none") if isinstance(f, ListField) else ("say",)


def _domain_problems(at: KeyPath, f: FieldSpec, vocab: Vocab | None) -> Iterator[Problem]:
    if isinstance(f, NumberField) and f.range[0] > f.range[1]:
        yield (*at, "range"), f"low end {f.range[0]} is above high end {f.range[1]}"
    if isinstance(f, DateField) and f.range[0] > f.range[1]:
        yield (*at, "range"), f"low end {f.range[0]} is after high end {f.range[1]}"
    if isinstance(f, ListField) and vocab is not None:
        lo, hi = f.size
        if lo > hi:
            yield (*at, "size"), f"fewest {lo} is above most {hi}"
        elif hi > len(vocab.canonical):
            yield (*at, "size"), f"{hi} items, but the vocabulary has {len(vocab.canonical)}"
    if isinstance(f, CategoryField | ListField) and vocab is not None:
        yield from _vocabulary_problems(at, f, vocab)
    if isinstance(f, NumberField):
        yield from _number_problems(at, f)
    weights = getattr(f, "weights", None) or {}
    for key in weights:
        if (why := value_problem(f, vocab, key)) is not None:
            yield (*at, "weights", key), why
    if weights and not sum(weights.values()) > 0:
        yield (*at, "weights"), "the weights sum to 0"


_NONE_ITEMS = frozenset({"none", "nothing", "no", "n a", "nil"})


def _vocabulary_problems(
    at: KeyPath, f: CategoryField | ListField, vocab: Vocab
) -> Iterator[Problem]:
    """The silent mistakes of a vocabulary: "none" as a list item, a range written as one item,
    an alias that is another item (the finder reads it as that item)."""
    for alias, canonical in f.aliases.items():
        name, target = " ".join(words(alias)), " ".join(words(canonical))
        if target not in vocab.canonical:
            yield (*at, "aliases", alias), f"{canonical!r} is not in the vocabulary"
        elif (other := vocab.aliases.get(name, target)) != target:
            yield (
                (*at, "aliases", alias),
                f"{alias!r} already names {other!r} in the vocabulary, so it cannot also "
                f"name {canonical!r}: drop this alias or the other name",
            )
    if isinstance(f, ListField) and (none := _NONE_ITEMS & set(vocab.canonical)):
        yield (
            (*at, "vocabulary"),
            f"{sorted(none)[0]!r} is a list item: a caller with no items says one of the "
            "field's 'none' lines and profiles hold an empty list; remove it from the vocabulary",
        )
    for written in vocab.spelled.values():
        if "..." in written or "\u2026" in written:
            yield (
                (*at, "vocabulary"),
                f"{written!r} is a range written as one item: write every item out "
                "(one per line, or one per list entry)",
            )
            return


def _number_problems(at: KeyPath, f: NumberField) -> Iterator[Problem]:
    """A unit no ``say`` template says: the number would be read only where it is asked."""
    if f.unit is None:
        return
    unit = re.escape(f.unit.lower().rstrip("s"))
    if not any(re.search(rf"\{{v\}}\s+(?:of\s+)?{unit}s?\b", t.lower()) for t in f.say):
        yield (
            (*at, "unit"),
            f"unit {f.unit!r} is in none of the 'say' templates, so no caller says it: "
            f"write '{{v}} {f.unit}' in a template, or drop the unit",
        )


def _row_problems(
    spec: ScenarioFile,
    vocabs: dict[str, Vocab],
    conds: Conditions,
    at: KeyPath,
    row: dict[str, object],
) -> Iterator[Problem]:
    for key in row:
        if key not in spec.fields:
            yield (*at, key), f"unknown field {key!r} (fields: {', '.join(spec.fields)})"
    for name, f in spec.fields.items():
        applies_here = applies(conds, name, row)
        if name not in row and applies_here:
            yield (
                at,
                f"missing field {name!r}"
                + (f" (it applies: {_when(conds, name)})" if name in conds else ""),
            )
        elif name in row and not applies_here:
            yield (
                (*at, name),
                f"field {name!r} does not apply to this profile ({_when(conds, name)})",
            )
        elif name not in row:
            continue
        elif (why := value_problem(f, vocabs.get(name), row[name])) is not None:
            yield (*at, name), why


def _when(conds: Conditions, name: str) -> str:
    """A field's condition in words: ``when domain is hotel``."""
    return "when " + " and ".join(
        f"{c} is {' or '.join(sorted(ok))}" for c, ok in conds[name].items()
    )


def value_problem(f: FieldSpec, vocab: Vocab | None, value: object) -> str | None:
    """What is wrong with ``value`` for field ``f`` (None: it is in the field's domain)."""
    if isinstance(f, YesNoField):
        return None if isinstance(value, bool) else f"{value!r} is not yes or no"
    if isinstance(f, NumberField):
        if isinstance(value, bool) or not isinstance(value, int):
            return f"{value!r} is not a whole number"
        lo, hi = f.range
        return None if lo <= value <= hi else f"{value} is outside the range [{lo}, {hi}]"
    if isinstance(f, DateField):
        return _date_problem(f, value)
    assert vocab is not None
    items = value if isinstance(f, ListField) else (value,)
    if not isinstance(items, list | tuple) or not all(isinstance(v, str) for v in items):
        return f"{value!r} is not {'a list of names' if isinstance(f, ListField) else 'a name'}"
    if bad := [v for v in items if v not in vocab.canonical]:
        return f"{bad[0]!r} is not in the vocabulary (e.g. {', '.join(vocab.canonical[:3])})"
    if isinstance(f, ListField) and not f.size[0] <= len(items) <= f.size[1]:
        return f"{len(items)} items, outside size [{f.size[0]}, {f.size[1]}]"
    return None


def _date_problem(f: DateField, value: object) -> str | None:
    try:
        day = value if isinstance(value, date) else date.fromisoformat(str(value))
    except ValueError:
        return f"{value!r} is not a date (YYYY-MM-DD)"
    lo, hi = f.range
    return None if lo <= day <= hi else f"{day} is outside the range [{lo}, {hi}]"


def canonical_value(f: FieldSpec, value: object) -> Value:
    """A checked row value as profiles hold it (dates as ISO text, lists as sorted tuples)."""
    if isinstance(f, DateField):
        return value.isoformat() if isinstance(value, date) else str(value)
    if isinstance(f, ListField):
        assert isinstance(value, list | tuple)
        return tuple(sorted(str(v) for v in value))
    assert isinstance(value, str | int | bool)
    return value


def _placeholders(text: str) -> set[str]:
    """The placeholders of a template; a format spec or conversion is a problem of its own (a
    width of a billion would make every line a gigabyte)."""
    try:
        parts = [(n, spec, conv) for _, n, spec, conv in string.Formatter().parse(text) if n]
    except ValueError:
        return {"unbalanced braces"}
    return {
        n + (f"!{conv}" if conv else "") + (f":{spec}" if spec else "") for n, spec, conv in parts
    }


def _holds(text: str, cues: tuple[str, ...]) -> bool:
    low = text.lower()
    return any(re.search(re.escape(c.lower()), low) for c in cues)
