"""What the viewer shows, taken from a run directory: every evaluation episode as compact rows.

The page embeds every episode once, as JSON, and renders a page of rows at a time; at 50,000
episodes the transcripts are most of the bytes, and most of their text repeats (an agent's
phrasings, a persona's stock replies), so every string goes into one table (``Strings``) and the
rows hold its indices. Everything here is plain data (lists, dicts, numbers), ready for
``json.dumps``; nothing is escaped here (``viewer.page`` escapes the JSON for the page and the
page renders every string with ``textContent``).
"""

from __future__ import annotations

import functools
import json
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sim2human.diagnostics.replay import phrasing
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
    return [i for i, t in enumerate(e.turns) if t.speaker == "agent" and phrasing(t) in flagged]


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


def episode_row(e: Episode, g: Group, s: Strings, phrasings: Iterable[str]) -> dict[str, Any]:
    """One episode for the page (short keys: 50,000 of them are embedded)."""
    return {
        "id": e.id,
        "c": s(g.condition),
        "r": s(g.run),
        "m": s(e.simulator_id),
        "f": s(e.family),
        "k": s(e.kind),
        "s": s(e.split),
        "p": round(e.proxy, 3),
        "g": round(e.gold.score, 3),
        "ok": int(e.gold.success),
        "x": int(is_exploit(e)),
        "t": s(str(e.termination)),
        "n": e.n_turns,
        "why": reasons(e, s),
        "d": [[s(k), round(v, 3)] for k, v in e.gold.detail.items()],
        "err": e.error,
        "tu": turns(e, s),
        "h": flagged_turns(e, phrasings),
    }


@dataclass
class PageData:
    """The embedded JSON of a viewer page: the string table and the episode rows."""

    strings: Strings = field(default_factory=Strings)
    episodes: list[dict[str, Any]] = field(default_factory=list)

    def payload(self) -> dict[str, Any]:
        return {"strings": self.strings.items, "episodes": self.episodes}


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
                data.episodes.append(episode_row(e, g, data.strings, phrasings))
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
