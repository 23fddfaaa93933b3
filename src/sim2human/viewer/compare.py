"""``sim2human compare``: two runs, or two conditions, side by side.

A side is one condition of one run. Each pair of sides gets its proxy and gold with CIs
(``metrics.collapse.transfer``, as the study table computes them) and the episodes where the two
differ: evaluation episodes are played with seeds derived from the run seed and the member, so
two conditions (or two runs of one study config) evaluate the same member with the same seed,
and those pairs can be read one beside the other. Pairs match on (training run, member, split,
seed); where the two sides share no training run name (a condition against a reference agent)
they match without it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sim2human.metrics.collapse import N_BOOT, Transfer, transfer
from sim2human.types import Episode
from sim2human.viewer.data import Group, PageData

Key = tuple[str, str, str, int]


@dataclass(frozen=True)
class Side:
    label: str
    """``RUN:condition``, as the page names it."""
    groups: list[Group]

    def by_run(self) -> dict[str, list[Episode]]:
        out: dict[str, list[Episode]] = {}
        for g in self.groups:
            out.setdefault(g.run, []).extend(g.episodes)
        return out


def side(label: str, groups: Sequence[Group], condition: str) -> Side | None:
    """The side of ``condition`` among ``groups``; None when it has no evaluation episodes."""
    mine = [g for g in groups if g.condition == condition]
    return Side(f"{label}:{condition}", mine) if mine else None


def differs(a: Episode, b: Episode) -> bool:
    """Whether two plays of one member and seed ended differently for the grader."""
    return a.gold.success != b.gold.success or abs(a.gold.score - b.gold.score) > 1e-9


def _keyed(s: Side, with_run: bool) -> dict[Key, tuple[Group, Episode]]:
    out: dict[Key, tuple[Group, Episode]] = {}
    for g in s.groups:
        for e in g.episodes:
            out.setdefault((g.run if with_run else "", e.simulator_id, e.split, e.seed), (g, e))
    return out


def pairs(a: Side, b: Side) -> tuple[int, list[tuple[Group, Episode, Group, Episode]]]:
    """How many episodes pair up, and the pairs that differ (``differs``), in ``a``'s order."""
    with_run = bool({g.run for g in a.groups} & {g.run for g in b.groups})
    left, right = _keyed(a, with_run), _keyed(b, with_run)
    shared = [k for k in left if k in right]
    found = [(*left[k], *right[k]) for k in shared]
    return len(shared), [p for p in found if differs(p[1], p[3])]


@dataclass(frozen=True)
class Comparison:
    a: Side
    b: Side
    ta: Transfer
    tb: Transfer
    paired: int
    differing: int


def comparison_data(
    sides: Sequence[tuple[Side, Side]], n_boot: int = N_BOOT
) -> tuple[list[Comparison], PageData, dict[str, Any]]:
    """Each pair of sides' estimates, and the page's data: every differing pair's two
    episodes (``viewer.data``), and what the index adds: ``pairs`` of their indices, and the
    sides' ``labels``."""
    data = PageData()
    index: list[list[int]] = []
    out = []
    for a, b in sides:
        paired, found = pairs(a, b)
        for ga, ea, gb, eb in found:
            index.append([data.add(ea, _labelled(ga, a), ()), data.add(eb, _labelled(gb, b), ())])
        ta, tb = transfer(a.by_run(), n_boot=n_boot), transfer(b.by_run(), n_boot=n_boot)
        out.append(Comparison(a, b, ta, tb, paired, len(found)))
    labels = ["A", "B"] if len(sides) != 1 else [sides[0][0].label, sides[0][1].label]
    return out, data, {"pairs": index, "labels": labels}


def _labelled(g: Group, s: Side) -> Group:
    """``g`` named after its side, so the page's condition filter tells the sides apart."""
    return Group(s.label, g.run, g.episodes)
