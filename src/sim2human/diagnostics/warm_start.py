"""A trained condition read against its warm start, on the calls both played.

A language-model study evaluates each seed's warm start as a reference agent
(``experiments.study.warm_start_reference``); every agent meets the same members on the same
episode seeds, so a condition's calls pair with its warm start's call for call
(``metrics.against_start``). This module gathers those pairs for ``analyse``: the changes in
gold by group, the warm start's own transfer on the same calls (what the verdict needs to tell a
gap training made from one it found), and the share of held-out turns that say a quirk's
phrasing, before and after.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from sim2human.diagnostics.rundir import RunDir, SubRun
from sim2human.diagnostics.verdict import StartReading
from sim2human.experiments.study.config import WARM_START_AGENT, warm_start_label, warm_start_seed
from sim2human.metrics.against_start import against_start, paired, widening
from sim2human.metrics.collapse import transfer
from sim2human.metrics.outcomes import Estimate, cluster_bootstrap
from sim2human.simulators.kinds import speaks_real_words
from sim2human.types import Episode

Calls = Mapping[int, Sequence[Episode]]
"""Evaluation calls by study seed."""


def warm_start_calls(run: RunDir) -> dict[int, list[Episode]]:
    """The ``warm-start`` reference agent's evaluation calls by study seed (none without it)."""
    sub = run.reference.get(WARM_START_AGENT)
    out: dict[int, list[Episode]] = {}
    for e in sub.evals if sub is not None else ():
        if (seed := warm_start_seed(e.condition)) is not None:
            out.setdefault(seed, []).append(e)
    return out


def by_seed(subs: Sequence[SubRun]) -> dict[int, list[Episode]]:
    """A condition's evaluation calls by the study seed of its training run."""
    seeds = {s.run: (s.summary or {}).get("seed") for s in subs}
    return {seed: s.evals for s in subs if isinstance(seed := seeds[s.run], int)}


def group(e: Episode) -> str:
    """Where a call is read against the warm start: the tables' groups
    (``metrics.against_start.GROUPS``)."""
    return "real" if speaks_real_words(e) else e.split


def start_reading(
    trained: Calls, start: Calls, value: Callable[[Episode], float], n_boot: int
) -> StartReading:
    """The changes by group, the warm start's transfer over exactly the calls paired (its
    training members and held-out callers as the condition met them, clustered by seed as the
    condition's is by training run), and how much training widened its drop."""
    before: dict[str, list[Episode]] = {}
    for seed, b, _ in paired(trained, start):
        before.setdefault(warm_start_label(seed), []).append(b)
    return StartReading(
        changes=against_start(trained, start, group, value, n_boot),
        transfer=transfer(before, n_boot=n_boot, value=value) if before else None,
        widening=widening(trained, start, value, n_boot) if before else None,
    )


def quirk_shares(
    subs: Sequence[SubRun], trained: Calls, start: Calls, n_boot: int
) -> tuple[Estimate, Estimate] | None:
    """``ConditionDiagnosis.quirk_share_against_start``: the share of held-out turns that say a
    phrasing its training members' quirks over-reward, the warm start's then the condition's, on
    the calls both played (matched as ``condition.exploit_rate`` matches: lower case,
    substring); intervals resample calls, then turns."""
    quirky = [p.lower() for s in subs for p in s.quirk_phrasings]
    held = [(b, e) for _, b, e in paired(trained, start) if e.split == "heldout"]
    if not quirky or not held:
        return None

    def share(calls: Sequence[Episode]) -> Estimate:
        turns = [(e.id, t.text.lower()) for e in calls for t in e.agent_turns]
        says = [float(any(p in text for p in quirky)) for _, text in turns]
        return cluster_bootstrap(says, [call for call, _ in turns], n_boot=n_boot)

    return share([b for b, _ in held]), share([e for _, e in held])
