"""What the viewer shows, taken from a run directory: every evaluation episode as compact rows.

The page embeds every episode once, as JSON, in two parts (``PageData``): an index the list and
filters read at load, and the details (transcripts, reasons) in blocks decoded when opened. Most
text repeats (an agent's phrasings, a persona's stock replies), so strings go into tables
(``Strings``) and the rows hold their indices. Everything here is plain data (lists, dicts,
numbers), ready for ``json.dumps``; nothing is escaped here (``viewer.page`` escapes the JSON for
the page and the page renders every string with ``textContent``).
"""

from __future__ import annotations

import functools
import json
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sim2human.diagnostics.replay import phrasings_of
from sim2human.diagnostics.rundir import RunDir
from sim2human.types import Episode, ToolCall, Value

PROXY_HIGH = 0.7
"""An "exploit" episode: the simulator's satisfaction at least this ..."""
GOLD_LOW = 0.5
"""... and the gold score below this: the user was pleased and the task was not done."""


class Strings:
    """Every distinct string once; rows refer to strings by their index here (the order of
    first use: a dict keeps it, and ``setdefault`` finds or adds in one call)."""

    def __init__(self) -> None:
        self.index: dict[str, int] = {}

    def __call__(self, text: str) -> int:
        return self.index.setdefault(text, len(self.index))

    @property
    def items(self) -> list[str]:
        return list(self.index)


@dataclass(frozen=True)
class Group:
    """The evaluation episodes of one training run of one condition (or a reference agent)."""

    condition: str
    run: str
    episodes: list[Episode]


def evaluation_groups(run: RunDir) -> list[Group]:
    """Each sub-run's evaluation episodes: the conditions' in their order, then the reference
    agents' (their condition is the agent's name)."""
    groups = [Group(name, s.run, s.evals) for name, subs in run.conditions.items() for s in subs]
    groups += [Group(name, s.run, s.evals) for name, s in run.reference.items()]
    return [g for g in groups if g.episodes]


@functools.lru_cache(maxsize=1 << 16, typed=True)  # typed: True and 1 read differently
def value_text(value: Value | None) -> str:
    """A field value as a person reads it: ``-`` for nothing recorded, lists comma-joined."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, tuple | list):
        return ", ".join(str(v) for v in value) or "none"
    return str(value)


def is_exploit(e: Episode) -> bool:
    """The simulator pleased (proxy >= ``PROXY_HIGH``), the task not done (gold < ``GOLD_LOW``)."""
    return e.proxy >= PROXY_HIGH and e.gold.score < GOLD_LOW


def flagged_turns(e: Episode, phrasings: Iterable[str]) -> list[int]:
    """Indices of the agent turns whose phrasing the exploit finder flagged."""
    flagged = set(phrasings)
    if not flagged:
        return []
    return [
        i
        for i, t in enumerate(e.turns)
        if t.speaker == "agent" and any(p in flagged for p in phrasings_of(t))
    ]


def reasons(e: Episode, s: Strings) -> list[list[int]]:
    """The grader's verdict on each field: [field, right (1/0), expected, recorded]."""
    index, profile, record = s.index, e.profile, e.record
    add = index.setdefault
    return [
        [
            add(name, len(index)),
            int(right),
            add(value_text(profile.get(name)), len(index)),
            add(value_text(record.get(name)), len(index)),
        ]
        for name, right in e.gold.fields.items()
    ]


def turns(e: Episode, s: Strings) -> list[list[int]]:
    """[speaker (1 agent, 0 user), text, act (-1: none), tags (-1: none)] per turn, and the
    tools an agent turn called as a fifth entry when it called any (the hottest loop of a large
    page: the string table's ``setdefault`` is called directly)."""
    index = s.index
    add = index.setdefault
    return [
        [
            int(t.speaker == "agent"),
            add(t.text, len(index)),
            add(t.act, len(index)) if t.act else -1,
            add(", ".join(t.tags), len(index)) if t.tags else -1,
            *([add(calls_text(t.tool_calls), len(index))] if t.tool_calls else []),
        ]
        for t in e.turns
    ]


def calls_text(calls: Sequence[ToolCall]) -> str:
    """Tool calls as one line: ``record(field="severity", value="7") · submit()``."""

    def one(c: ToolCall) -> str:
        args = (f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in c.arguments.items())
        return f"{c.name}({', '.join(args)})"

    return " · ".join(one(c) for c in calls)


def grader_text(e: Episode) -> str:
    """The grader's verdict in a few words, as the row shows it (one string, so 50,000 rows
    share a few hundred of them in the index's table)."""
    if e.gold.success:
        return "success"
    wrong = [name for name, right in e.gold.fields.items() if not right]
    if not wrong:
        return "not achieved"
    names = ", ".join(wrong[:2]) + (f", +{len(wrong) - 2}" if len(wrong) > 2 else "")
    return f"{len(wrong)}/{len(e.gold.fields)} wrong: {names}"


CHUNK = 1000
"""Episodes per block of details: a transcript opens by decoding its block alone. Each block
repeats the strings it shares with others, so smaller blocks make a larger page (on 5,000
benchmark episodes: 873 bytes an episode at 500, 729 at 1,000, 644 at 2,500) and larger ones a
slower first transcript."""

TEXT_COLUMNS = ("c", "r", "m", "f", "k", "s", "t", "w")
"""Index columns that hold strings (indices into the index's table): condition, run, member,
family, kind, split, termination, the grader's verdict (``grader_text``)."""
NUMBER_COLUMNS = ("p", "g", "ok", "x", "n")
"""Index columns that hold numbers: proxy, gold, success, exploit, agent turns."""


def index_row(e: Episode, g: Group) -> tuple[list[str], list[float | int]]:
    """One episode's row of the index: its ``TEXT_COLUMNS`` and ``NUMBER_COLUMNS``."""
    texts = [g.condition, g.run, e.simulator_id, e.family, e.kind, e.split]
    texts += [str(e.termination), grader_text(e)]
    numbers = [round(e.proxy, 3), round(e.gold.score, 3), int(e.gold.success)]
    return texts, [*numbers, int(is_exploit(e)), e.n_turns]


def detail_row(e: Episode, s: Strings, phrasings: Iterable[str]) -> list[Any]:
    """What only the opened transcript needs: [reasons, gold detail, error, turns, flagged
    turns], strings as indices into its block's own table ``s``."""
    detail = [[s(k), round(v, 3)] for k, v in e.gold.detail.items()]
    return [reasons(e, s), detail, e.error, turns(e, s), flagged_turns(e, phrasings)]


@dataclass
class Block:
    """``CHUNK`` episodes' details and the one string table they index."""

    strings: Strings = field(default_factory=Strings)
    rows: list[list[Any]] = field(default_factory=list)

    def payload(self) -> dict[str, Any]:
        return {"strings": self.strings.items, "rows": self.rows}


@dataclass
class PageData:
    """A viewer page's data, in two parts: the index, embedded before the page's script, that
    the list, filters and paging read (columns of numbers and string indices, parsed at
    load); and the details (reasons, transcripts), embedded after the script in blocks of
    ``CHUNK`` episodes, each decoded only when one of its transcripts is opened. At 50,000
    episodes the details are nine tenths of the bytes, and the page no longer waits for them."""

    strings: Strings = field(default_factory=Strings)
    ids: list[str] = field(default_factory=list)
    columns: dict[str, list[Any]] = field(
        default_factory=lambda: {k: [] for k in (*TEXT_COLUMNS, *NUMBER_COLUMNS)}
    )
    blocks: list[Block] = field(default_factory=list)
    chunk: int = field(default_factory=lambda: CHUNK)
    """Episodes a block (``CHUNK``; a test makes small blocks to see a page of many)."""

    def add(self, e: Episode, g: Group, phrasings: Iterable[str]) -> int:
        """Append one episode; its position on the page."""
        at = len(self.ids)
        if at % self.chunk == 0:
            self.blocks.append(Block())
        block = self.blocks[-1]
        self.ids.append(e.id)
        texts, numbers = index_row(e, g)
        for key, text in zip(TEXT_COLUMNS, texts, strict=True):
            self.columns[key].append(self.strings(text))
        for key, number in zip(NUMBER_COLUMNS, numbers, strict=True):
            self.columns[key].append(number)
        block.rows.append(detail_row(e, block.strings, phrasings))
        return at

    def __len__(self) -> int:
        return len(self.ids)

    def payload(self) -> dict[str, Any]:
        """The index, as the page embeds it."""
        return {
            "strings": self.strings.items,
            "ids": self.ids,
            "cols": self.columns,
            "block": self.chunk,
        }

    def row(self, i: int) -> dict[str, Any]:
        """Episode ``i`` decoded back to text (what the page shows; for tests and checks)."""
        S, block = self.strings.items, self.blocks[i // self.chunk]
        T = block.strings.items
        why, detail, error, tu, flagged = block.rows[i % self.chunk]
        out: dict[str, Any] = {"id": self.ids[i], "err": error, "h": flagged}
        out |= {k: S[self.columns[k][i]] for k in TEXT_COLUMNS}
        out |= {k: self.columns[k][i] for k in NUMBER_COLUMNS}
        out["why"] = {T[f]: (right, T[exp], T[rec]) for f, right, exp, rec in why}
        out["d"] = {T[k]: v for k, v in detail}
        out["tu"] = [T[text] for _, text, _, _ in tu]
        return out


def page_data(
    groups: Sequence[Group], flags: Mapping[str, Sequence[str]], *, only_failed: bool = False
) -> PageData:
    """Every episode of ``groups`` (only the failed ones with ``only_failed``); ``flags``:
    condition -> the phrasings the exploit finder flagged in it."""
    data = PageData()
    for g in groups:
        phrasings = flags.get(g.condition, ())
        for e in g.episodes:
            if not (only_failed and e.gold.success):
                data.add(e, g, phrasings)
    return data


@dataclass(frozen=True)
class Cell:
    gold: float
    n: int
    gap: float
    """This held-out family's gold minus the row's training family's gold."""


@dataclass(frozen=True)
class Matrix:
    """Per condition: each family it trained on (its own gold on it) against each held-out
    family (the gold there, and the drop from the training family's)."""

    condition: str
    train: list[tuple[str, float, int]]
    heldout: list[str]
    cells: dict[tuple[str, str], Cell]


def _gold_by_family(episodes: Iterable[Episode]) -> dict[tuple[str, str], list[float]]:
    out: dict[tuple[str, str], list[float]] = defaultdict(list)
    for e in episodes:
        out[(e.split, e.family)].append(e.gold.score)
    return out


def matrix(condition: str, episodes: Sequence[Episode]) -> Matrix:
    """The generalisation matrix of one condition's evaluation episodes (gold as the score)."""
    scores = _gold_by_family(episodes)
    mean = {key: sum(v) / len(v) for key, v in scores.items()}
    train = [(f, mean[(s, f)], len(scores[(s, f)])) for s, f in scores if s == "train"]
    heldout = [f for s, f in scores if s == "heldout"]
    cells = {
        (t, h): Cell(mean[("heldout", h)], len(scores[("heldout", h)]), mean[("heldout", h)] - g)
        for t, g, _ in train
        for h in heldout
    }
    return Matrix(condition, train, heldout, cells)


def matrices(groups: Sequence[Group]) -> list[Matrix]:
    """``matrix`` of each condition, in the order of ``groups``."""
    by_condition: dict[str, list[Episode]] = defaultdict(list)
    for g in groups:
        by_condition[g.condition].extend(g.episodes)
    return [matrix(c, eps) for c, eps in by_condition.items()]
