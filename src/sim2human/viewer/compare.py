"""``sim2human compare``: two runs, or two conditions, side by side.

A side is one condition of one run. Each pair of sides gets its proxy and gold with CIs
(``metrics.collapse.transfer``, as the study table computes them) and the episodes where the two
differ: evaluation episodes are played with seeds derived from the run seed and the member, so
two conditions (or two runs of one study config) evaluate the same member with the same seed,
and those pairs can be read one beside the other. Pairs match on (training run, member, split,
seed); where the two sides share no training run name (a condition against a reference agent)
they match without it.

Where the sides share pairs, each metric also gets its *paired* difference (B − A over the
episodes both sides played with one member and seed) with a bootstrap CI: what a second agent
on the same callers changed, without the caller-to-caller spread that two independent means
carry. The CI resamples members, then each member's pairs (``cluster_bootstrap``): members are
the population's unit, and one member's seeds are not independent of each other.

A side is named by the agent it evaluated where its run recorded one (``eval-agent``'s
``config.json`` ``agent.label``), and carries its population's hash (recorded, or computed from the
members it played: ``experiments.study.agent_record``); two sides on populations that differ are
compared all the same, with a warning (``viewer.build``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from sim2human.metrics.collapse import N_BOOT, Transfer, transfer
from sim2human.metrics.outcomes import Estimate, cluster_bootstrap, gold
from sim2human.types import Episode
from sim2human.viewer.data import Group, PageData

Key = tuple[str, str, str, int]


@dataclass(frozen=True)
class Side:
    label: str
    """``RUN:condition``, or the agent's recorded label, as the page names it."""
    groups: list[Group]
    population: str | None = None
    """The population's short content hash; None where it cannot be known."""

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


Pair = tuple[Group, Episode, Group, Episode]


def shared_pairs(a: Side, b: Side) -> list[Pair]:
    """Every episode of ``a`` with ``b``'s play of the same member and seed, in ``a``'s order."""
    with_run = bool({g.run for g in a.groups} & {g.run for g in b.groups})
    left, right = _keyed(a, with_run), _keyed(b, with_run)
    return [(*left[k], *right[k]) for k in left if k in right]


def pairs(a: Side, b: Side) -> tuple[int, list[Pair]]:
    """How many episodes pair up, and the pairs that differ (``differs``), in ``a``'s order."""
    shared = shared_pairs(a, b)
    return len(shared), [p for p in shared if differs(p[1], p[3])]


def paired_differences(shared: Sequence[Pair], n_boot: int = N_BOOT) -> dict[str, Estimate]:
    """B − A per metric of ``Transfer`` over the ``shared`` pairs, CIs over members (see the
    module docstring); the drop has none (it is not one episode's number), nor a split no pair
    is of."""

    def est(split: str, value: Callable[[Episode], float]) -> Estimate:
        on = [(ea, eb) for _, ea, _, eb in shared if ea.split == split]
        if not on:
            return Estimate(mean=float("nan"), ci=(float("nan"), float("nan")), n=0)
        diffs = [value(eb) - value(ea) for ea, eb in on]
        return cluster_bootstrap(diffs, [ea.simulator_id for ea, _ in on], n_boot=n_boot)

    def unearned(e: Episode) -> float:
        return e.proxy - gold(e)

    return {
        "train_proxy": est("train", lambda e: e.proxy),
        "train_gold": est("train", gold),
        "heldout_proxy": est("heldout", lambda e: e.proxy),
        "heldout_gold": est("heldout", gold),
        "gap": est("train", unearned),
    }


@dataclass(frozen=True)
class Comparison:
    a: Side
    b: Side
    ta: Transfer
    tb: Transfer
    paired: int
    differing: int
    diff: dict[str, Estimate]
    """``paired_differences``: B − A over the pairs, per metric."""


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
        shared = shared_pairs(a, b)
        found = [p for p in shared if differs(p[1], p[3])]
        for ga, ea, gb, eb in found:
            index.append([data.add(ea, _labelled(ga, a), ()), data.add(eb, _labelled(gb, b), ())])
        ta, tb = transfer(a.by_run(), n_boot=n_boot), transfer(b.by_run(), n_boot=n_boot)
        diff = paired_differences(shared, n_boot)
        out.append(Comparison(a, b, ta, tb, len(shared), len(found), diff))
    labels = ["A", "B"] if len(sides) != 1 else [sides[0][0].label, sides[0][1].label]
    return out, data, {"pairs": index, "labels": labels}


def _labelled(g: Group, s: Side) -> Group:
    """``g`` named after its side, so the page's condition filter tells the sides apart."""
    return Group(s.label, g.run, g.episodes)
