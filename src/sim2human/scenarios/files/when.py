"""Fields that apply only to some profiles: a field's ``when:`` names category fields and the
values under which it applies (``when: {domain: hotel}``).

A field applies to a set of values (a profile, or what an agent has recorded so far) when every
field its ``when`` names applies too and holds one of the named values; a condition whose field is
still unknown (None, or absent) does not hold, so an agent learns the category first. The checks
here (unknown field, a value outside its vocabulary, a cycle) run before any row is read, so
``applies`` never meets a cycle.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from sim2human.scenarios.files.lines import KeyPath
from sim2human.scenarios.files.schema import CategoryField, FieldSpec
from sim2human.scenarios.vocab import Vocab, words

Problem = tuple[KeyPath, str]
Conditions = dict[str, dict[str, frozenset[str]]]
"""Field -> (category field -> the values under which it applies); unconditional fields absent."""


def conditions(fields: Mapping[str, FieldSpec]) -> Conditions:
    """Each conditional field's ``when``, its values as canonical names."""
    out: Conditions = {}
    for name, f in fields.items():
        if f.when:
            out[name] = {
                c: frozenset(" ".join(words(v)) for v in ((a,) if isinstance(a, str) else a))
                for c, a in f.when.items()
            }
    return out


def applies(conds: Conditions, name: str, values: Mapping[str, object]) -> bool:
    """Whether field ``name`` applies given ``values`` (field -> value, None while unknown)."""
    when = conds.get(name)
    if when is None:
        return True
    return all(values.get(c) in ok and applies(conds, c, values) for c, ok in when.items())


def applicable(
    fields: tuple[str, ...], conds: Conditions, values: Mapping[str, object]
) -> tuple[str, ...]:
    """The fields (in file order) that apply given ``values``."""
    return tuple(f for f in fields if applies(conds, f, values))


def draw_order(fields: tuple[str, ...], conds: Conditions) -> tuple[str, ...]:
    """The fields with each one after those its ``when`` names (file order otherwise)."""
    out: list[str] = []

    def visit(f: str) -> None:
        if f not in out:
            for c in conds.get(f, {}):
                visit(c)
            out.append(f)

    for f in fields:
        visit(f)
    return tuple(out)


def when_problems(
    fields: Mapping[str, FieldSpec], vocabs: Mapping[str, Vocab]
) -> Iterator[Problem]:
    """What is wrong with the fields' ``when`` keys: an unknown or non-category field, a value
    outside that field's vocabulary, a field depending on itself (a cycle)."""
    for name, f in fields.items():
        for cond, allowed in (f.when or {}).items():
            at: KeyPath = ("fields", name, "when", cond)
            target = fields.get(cond)
            if target is None:
                yield at, f"unknown field {cond!r} (fields: {', '.join(fields)})"
                continue
            if not isinstance(target, CategoryField):
                yield at, f"{cond!r} is a {target.kind} field; 'when' names category fields"
                continue
            vocab = vocabs[cond]
            for v in (allowed,) if isinstance(allowed, str) else allowed:
                if " ".join(words(v)) not in vocab.canonical:
                    yield (
                        at,
                        (
                            f"{v!r} is not in {cond}'s vocabulary "
                            f"(e.g. {', '.join(vocab.canonical[:3])})"
                        ),
                    )
    yield from _cycles(fields)


def _cycles(fields: Mapping[str, FieldSpec]) -> Iterator[Problem]:
    deps = {n: [c for c in (f.when or {}) if c in fields] for n, f in fields.items()}
    for start in fields:
        path = _loop(deps, start, (start,))
        if path is not None:
            yield ("fields", start, "when"), f"a cycle: {' -> '.join(path)}"
            return


def _loop(deps: Mapping[str, list[str]], at: str, path: tuple[str, ...]) -> tuple[str, ...] | None:
    """A path from ``path[0]`` back to itself through ``at``, if there is one."""
    for nxt in deps[at]:
        if nxt == path[0]:
            return (*path, nxt)
        if nxt not in path and (found := _loop(deps, nxt, (*path, nxt))) is not None:
            return found
    return None
