"""Term tables read from data files, and a typo- and word-order-tolerant finder over them.

A term matches when every one of its words appears, fuzzily (rapidfuzz ratio), within a short
window of the text: "pain in my lower back" finds "lower back pain", "metfromin" finds
"metformin". Word-level fuzzy lookups are cached because simulated users repeat words a lot.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources

from rapidfuzz import fuzz, process

_WORD = re.compile(r"[a-z0-9']+")
_SHORT = 4  # words this short must match exactly: fuzzy matching them finds noise


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


@dataclass(frozen=True)
class Vocab:
    """Canonical names with aliases; ``find`` returns canonical names in order of appearance."""

    name: str
    canonical: tuple[str, ...]
    aliases: dict[str, str] = field(hash=False, compare=False)
    """alias (lower-case, one space between words) -> canonical name; includes the canonical."""
    spelled: dict[str, str] = field(default_factory=dict, hash=False, compare=False)
    """A name (canonical or alias, as keyed above) -> how the file writes it. Names keep words
    and digits only, for reading; saying one uses the file's own spelling, so a time written
    "19:30" is said "19:30", not "19 30" (``spell``)."""
    close: dict[str, frozenset[str]] = field(
        default_factory=dict, hash=False, compare=False, repr=False
    )
    """Word -> the vocabulary words it could be a typo of (``_close_words``' memo: one kept per
    vocabulary, so a lookup hashes the word alone, not the vocabulary too)."""

    def __hash__(self) -> int:
        # by name only: every memo below is keyed on the vocabulary, and hashing its whole
        # canonical tuple on each lookup was 7% of reading a line (equal vocabularies
        # have equal names, so this agrees with ==)
        return hash(self.name)

    @classmethod
    def load(cls, scenario: str, name: str) -> Vocab:
        text = resources.files("sim2human.scenarios").joinpath(scenario, "data", f"{name}.txt")
        return cls.parse(name, text.read_text(encoding="utf-8"))

    @classmethod
    def parse(cls, name: str, text: str) -> Vocab:
        canonical: list[str] = []
        aliases: dict[str, str] = {}
        spelled: dict[str, str] = {}
        for raw in text.splitlines():
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            written = [" ".join(n.split()) for n in line.split("|")]
            names = [" ".join(words(n)) for n in written]
            canonical.append(names[0])
            for alias, form in zip(names, written, strict=True):
                aliases.setdefault(alias, names[0])
                spelled.setdefault(alias, form)
        return cls(name, tuple(canonical), aliases, spelled)

    def spell(self, name: str) -> str:
        """``name`` (canonical or alias) as the file writes it; itself when the file does not
        spell it otherwise."""
        return self.spelled.get(name, name)

    def hearing(self, heard: Vocab) -> Vocab:
        """This vocabulary plus ``heard``'s aliases, for reading only: what a caller may say that
        no programmatic caller does (brand and lay names). Its own name, so the caches keep it
        apart from the spoken one; every heard canonical must be one of ours."""
        unknown = sorted(set(heard.canonical) - set(self.canonical))
        if unknown:
            raise ValueError(f"{heard.name}: not in {self.name}: {', '.join(unknown)}")
        aliases = dict(self.aliases)
        for alias, canonical in heard.aliases.items():
            aliases.setdefault(alias, canonical)
        spelled = {**heard.spelled, **self.spelled}
        return Vocab(f"{self.name}+{heard.name}", self.canonical, aliases, spelled)

    def find(self, text: str) -> list[str]:
        return [name for name, _, _ in _find(self, tuple(words(text)))]

    def spans(self, tokens: tuple[str, ...]) -> tuple[tuple[str, int, int], ...]:
        """What ``find`` finds in ``tokens`` (``words(text)``), each canonical name with the
        first and last token positions its alias took, in order of appearance."""
        return _find(self, tokens)


@lru_cache(maxsize=64)
def _word_table(vocab: Vocab) -> tuple[str, ...]:
    return tuple(sorted({w for alias in vocab.aliases for w in alias.split()}))


@lru_cache(maxsize=64)
def _longest_first(vocab: Vocab) -> tuple[str, ...]:
    return tuple(sorted(vocab.aliases, key=lambda a: (-len(a.split()), a)))


@lru_cache(maxsize=64)
def _by_first_word(vocab: Vocab) -> dict[str, tuple[tuple[int, str, tuple[str, ...]], ...]]:
    """Aliases by their first word, each with its rank in ``_longest_first`` and its words: a
    text looks only at the aliases its words can start (scanning every alias was most of
    ``find``)."""
    out: dict[str, list[tuple[int, str, tuple[str, ...]]]] = {}
    for rank, alias in enumerate(_longest_first(vocab)):
        parts = tuple(alias.split())
        out.setdefault(parts[0], []).append((rank, alias, parts))
    return {w: tuple(v) for w, v in out.items()}


_CLOSE_KEPT = 200_000
"""Words a vocabulary's ``close`` memo keeps; past that it starts afresh (bounded memory)."""


def _close_words(vocab: Vocab, word: str) -> frozenset[str]:
    """The vocabulary words that ``word`` could be a typo of (kept in ``vocab.close``)."""
    table = _word_table(vocab)
    if word in table or len(word) <= _SHORT:
        near = frozenset([word]) if word in table else frozenset()
    else:
        cutoff = 88 if len(word) <= 6 else 82  # one slip in a short word is a large share of it
        hits = process.extract(word, table, scorer=fuzz.ratio, score_cutoff=cutoff, limit=4)
        near = frozenset(h[0] for h in hits if len(h[0]) > _SHORT)
    if len(vocab.close) >= _CLOSE_KEPT:
        vocab.close.clear()
    vocab.close[word] = near
    return near


@lru_cache(maxsize=100_000)
def _find(vocab: Vocab, tokens: tuple[str, ...]) -> tuple[tuple[str, int, int], ...]:
    """Longest aliases first; a shorter alias may not reuse words a longer one matched. Each
    canonical name once, with the first and last positions of its first match."""
    memo = vocab.close
    close = [memo[t] if t in memo else _close_words(vocab, t) for t in tokens]
    at: dict[str, list[int]] = {}  # vocabulary word -> the positions it may stand at
    for i, near in enumerate(close):
        for w in near:
            at.setdefault(w, []).append(i)
    if not at:
        return ()
    index = _by_first_word(vocab)
    used: set[int] = set()
    found: dict[str, tuple[int, int, int]] = {}  # name -> (start, first, last position)
    for _, alias, parts in sorted(c for w in at for c in index.get(w, ())):
        for start in at[parts[0]]:
            if start in used:
                continue
            span = _span(close, parts, start, len(parts) + 3, used)
            if span is not None:
                used.update(span)
                found.setdefault(vocab.aliases[alias], (start, min(span), max(span)))
                break
    return tuple((c, found[c][1], found[c][2]) for c in sorted(found, key=lambda c: found[c][0]))


def _span(
    close: list[frozenset[str]], parts: tuple[str, ...], start: int, window: int, used: set[int]
) -> list[int] | None:
    """Positions of every alias word near ``start`` (each word once, the nearest to ``start``:
    in "18:30, or 17:30" the name "17 30" takes the 30 after 17, not the one of 18:30), or None
    if one is missing."""
    span = [start]
    for part in parts[1:]:
        lo, hi = max(0, start - window), min(len(close), start + window)
        near = sorted(range(lo, hi), key=lambda i: (abs(i - start), i))
        hit = next((i for i in near if i not in used and i not in span and part in close[i]), None)
        if hit is None:
            return None
        span.append(hit)
    return span
