"""A fit's candidates saying a restyle cache's lines (``sim2human fit-family --voice``).

``lines_of`` reads the cache (a shipped restyled family's or a file; a pointer cache's turns
from the corpus in place), ``as_restyled`` makes a candidate family a restyled one saying it,
and ``voiced`` registers the words under the candidates' name while the fit plays them.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from sim2human.errors import UsageError
from sim2human.simulators.base import Family
from sim2human.simulators.restyle_entries import PointedLine, Restyle, resolve
from sim2human.simulators.restyled import CACHES, VOICES, RestyledFamily, Voice, read_restyled


@dataclass(frozen=True)
class Lines:
    """A restyle cache a fit's candidates say: where it is from (a shipped restyled family's
    name or a file), its entries as written (pointers stay pointers) and its voice (words)."""

    source: str
    corpus: str | None
    lines: tuple[Restyle, ...] | tuple[PointedLine, ...]
    voice: Voice


def lines_of(source: str, data: str | None = None) -> Lines:
    """The cache of shipped restyled family ``source``, or of the cache file at ``source`` (a
    pointer cache's turns read from the corpus: ``data`` or where ``aci_bench`` finds it)."""
    if source in CACHES:
        cache = CACHES[source]
        family, lines, where = cache.family, cache.lines, cache.where
    else:
        where = Path(source)
        if not where.is_file():
            known = ", ".join(sorted(CACHES))
            raise UsageError(f"--voice {source!r}: neither a restyled family ({known}) nor a file")
        family, lines = read_restyled(where.read_text(encoding="utf-8"), where)
    voice = Voice.of(resolve(family.name, family.corpus, lines, where, data))
    return Lines(source=source, corpus=family.corpus, lines=lines, voice=voice)


def as_restyled(family: Family, lines: Lines) -> RestyledFamily:
    """``family`` as a restyled family saying ``lines`` (registered under its name while a fit
    plays it: ``voiced``)."""
    dumped = family.model_dump(mode="json")
    return RestyledFamily.model_validate(dumped | {"corpus": lines.corpus})


@contextmanager
def voiced(name: str, lines: Lines | None) -> Iterator[None]:
    """Members of family ``name`` say ``lines`` meanwhile (``restyled.VOICES``); None: nothing."""
    if lines is None:
        yield
        return
    before = VOICES.get(name)
    VOICES[name] = lines.voice
    try:
        yield
    finally:
        if before is None:
            VOICES.pop(name, None)
        else:
            VOICES[name] = before
