"""A restyle cache's entries: a line and its rewrites in words, or pointers into the corpus.

A family whose cache names a corpus (``retrieved-aci``) ships pointers (an encounter, a patient
turn, a span, a hash), never the corpus's words (the project's data rule: corpora are read where
the user keeps them); ``resolve`` reads them back from the corpus in place, once per folder.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path
from typing import Final

from pydantic import Field

from sim2human.corpora import aci_bench
from sim2human.errors import ConfigError, UsageError
from sim2human.types import FrozenConfig

SLOT: Final = "{v}"
"""Where a template's value goes, in the original and in each of its rewrites."""


class Restyle(FrozenConfig):
    """One original line and the rewrites that passed the acceptance rule."""

    line: str
    field: str | None = None
    """The field a template's ``{v}`` holds (or a fixed answer's field); None: no field."""
    rewrites: tuple[str, ...] = ()


class Pointer(FrozenConfig):
    """Where a retrieved rewrite is in the corpus: a patient turn of a train encounter (as
    ``corpora.aci_bench.detokenize`` gives it), and for a template the span that becomes
    ``{v}``; ``hash`` (``turn_hash``) tells another version of the corpus apart."""

    encounter: str
    turn: int = Field(ge=0)
    """The turn's index among the encounter's patient turns."""
    span: tuple[int, int] | None = None
    """Characters ``[a, b)`` of the turn that become ``{v}`` (a template's); None: all of it."""
    hash: str = Field(pattern=r"^[0-9a-f]{8}$")


class PointedLine(FrozenConfig):
    """One original line and where its rewrites are in the corpus (a pointer cache's entry)."""

    line: str
    field: str | None = None
    rewrites: tuple[Pointer, ...] = ()


def turn_hash(text: str) -> str:
    """A turn's short hash (8 hex digits of its SHA-256): what a pointer checks it against."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]


def resolve(
    name: str,
    corpus: str | None,
    lines: tuple[Restyle, ...] | tuple[PointedLine, ...],
    where: Path,
    data: Path | str | None = None,
) -> tuple[Restyle, ...]:
    """Family ``name``'s ``lines`` with words: as they are (no ``corpus``), or each pointer's
    turn read from the corpus (one clear
    error when the corpus is not found, or a pointer's turn is not there or not the one hashed)."""
    if corpus is None:
        return lines  # type: ignore[return-value]  # a cache of words
    if (why := aci_bench.missing(data)) is not None:
        raise UsageError(f"family {name!r} reads ACI-Bench in place: {why}")
    turns = _train_turns(aci_bench.resolve_dir(data).resolve())
    out: list[Restyle] = []
    for r in lines:
        words = []
        for k, p in enumerate(r.rewrites):
            assert isinstance(p, Pointer)
            at = f"{where}: line {r.line!r}, rewrite {k + 1} (encounter {p.encounter}, "
            at += f"turn {p.turn})"
            said = turns.get(p.encounter, ())
            if p.turn >= len(said):
                raise ConfigError(f"{at}: no such patient turn in the corpus's train split")
            turn = said[p.turn]
            if turn_hash(turn) != p.hash:
                raise ConfigError(
                    f"{at}: the corpus's turn does not match the hash {p.hash} (another version "
                    "of ACI-Bench? remake the cache with sim2human retrieve-family)"
                )
            if p.span is None:
                words.append(turn)
                continue
            a, b = p.span
            if not 0 <= a < b <= len(turn):
                raise ConfigError(f"{at}: span {a}-{b} is outside the turn")
            words.append(turn[:a] + SLOT + turn[b:])
        out.append(Restyle(line=r.line, field=r.field, rewrites=tuple(words)))
    return tuple(out)


@lru_cache(maxsize=4)
def _train_turns(folder: Path) -> dict[str, tuple[str, ...]]:
    """Each train encounter's patient turns, detokenised (what a pointer's index counts)."""
    train = aci_bench.split_of(aci_bench.load(folder), "train")
    return {t.encounter_id: tuple(aci_bench.detokenize(x) for x in t.patient_turns) for t in train}
