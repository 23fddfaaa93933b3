"""The summary tables a person reads, computed once: rows, column labels and cell text.

The terminal (``report.terminal``), ``report.md`` and ``report.html`` render these ``Table``s
and ``report.json`` stores them (``summary``), so every output shows the same cell under the
same label. Programmatic held-out families and real patients (``replay`` members) are separate,
named columns; nothing here pools them. The numbers come from ``study.json`` (a study) or, for a
run without one (``eval-agent``, an adapter, one sub-run), from its stored episodes; handle time
(agent turns per call, ``metrics.handle_time``) from ``study.json`` where it holds it, else
from the episodes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from sim2human.diagnostics.rundir import RunDir, SubRun
from sim2human.experiments.study.results import ConditionRow, StudyResult
from sim2human.metrics.handle_time import HandleTime, handle_time
from sim2human.metrics.outcomes import GOLDS, Estimate, cluster_bootstrap, member_std
from sim2human.report.format import est, pct
from sim2human.scenarios.core import GoldMetric, headline_metric
from sim2human.simulators.kinds import speaks_real_words
from sim2human.types import Episode

CONDITION = "condition"
TRAIN_PROXY = "train proxy"
TRAIN_GOLD = "train gold"
HELDOUT = "gold, held-out families"
"""Gold on the programmatic held-out families (persona, LLM members): never real people."""
REAL = "gold, real people"
"""Gold on replayed real people (``replay`` members: ACI-Bench patients, MultiWOZ callers)."""
TRAIN_SCORE = "train score"
HELDOUT_SCORE = "score, held-out families"
REAL_SCORE = "score, real people"
HELDOUT_SUCCESS = "success, held-out families"
"""Beside the score, for a scenario that leads with it: the share of held-out calls graded a
success (negotiation: an individually rational deal agreed)."""
LABELS: dict[GoldMetric, tuple[str, str, str]] = {
    "success": (TRAIN_GOLD, HELDOUT, REAL),
    "score": (TRAIN_SCORE, HELDOUT_SCORE, REAL_SCORE),
}
"""The gold columns' labels (train, held-out families, real people) by headline metric."""
REAL_FIELDS = "fields right, real people"
REAL_SEEDS = "real people, per seed"
REAL_CI = (
    "their CIs resample visits (each a recorded dialogue), then episodes within a visit, "
    "seeds pooled; each seed's own mean is in the real-people table."
)
REAL_PROXY = "proxy, real people"
N_CELLS = "n (held-out / real)"
EPISODES = "episodes trained"
MEMBER_STD = "held-out member std"
EXPLOIT = "exploit rate"
TURNS = {"train": "train", "heldout": "held-out families", "real": "real people"}
"""Handle-time column labels, by split."""
MISSING = "-"
AGENT = "agent"
"""An evaluation's first column: its rows are agents, not conditions trained."""
CI_STUDY = "Percentages, 95% CI by cluster bootstrap over training runs, then episodes."
CI_EVALUATION = (
    "Percentages, 95% CI by bootstrap over episodes (one run of an agent not trained here)."
)
REAL_CI_STUDY = "Held-out families' CIs resample training runs, then episodes"
REAL_CI_EVALUATION = "Held-out families' CIs resample episodes"
MEMBER_STD_NOTE = "Member std: of gold success across held-out members (real callers included)"
EXPLOIT_NOTE = (
    " Exploit rate: share of the agent's held-out turns that use a phrasing some training "
    "member's quirk over-rewards."
)


@dataclass(frozen=True)
class Table:
    """One table: ``rows`` of cell text under ``columns`` (labels; the first names the row)."""

    key: str
    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    note: str = ""

    def dump(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "title": self.title,
            "columns": list(self.columns),
            "rows": [list(r) for r in self.rows],
            "note": self.note,
        }

    @classmethod
    def load(cls, raw: dict[str, Any]) -> Table:
        rows = tuple(tuple(str(c) for c in r) for r in raw["rows"])
        cols = tuple(str(c) for c in raw["columns"])
        return cls(str(raw["key"]), str(raw["title"]), cols, rows, str(raw.get("note", "")))


@dataclass(frozen=True)
class Numbers:
    """What the tables show of one condition or reference agent. The gold estimates are of the
    scenario's headline ``metric`` (success, or the mean score); ``heldout_success`` is success
    beside a score."""

    name: str
    reference: bool = False
    metric: GoldMetric = "success"
    heldout_success: Estimate | None = None
    episodes_trained: int | None = None
    train_proxy: Estimate | None = None
    train_gold: Estimate | None = None
    heldout_gold: Estimate | None = None
    real_gold: Estimate | None = None
    real_fields: Estimate | None = None
    real_proxy: Estimate | None = None
    real_by_seed: tuple[float, ...] = ()
    """Each training run's mean gold on real people (one value for a reference agent)."""
    member_std: float | None = None
    exploit_rate: float | None = None
    by_family: dict[str, float] = field(default_factory=dict)
    turns: dict[str, HandleTime] = field(default_factory=dict)
    """Split (``train``, ``heldout``, ``real``) -> agent turns per call (``metrics``)."""

    @property
    def label(self) -> str:
        return f"{self.name} (reference)" if self.reference else self.name


def _evals(subs: Sequence[SubRun]) -> list[Episode]:
    return [e for s in subs for e in s.evals]


def _subs(run: RunDir | None) -> dict[str, list[SubRun]]:
    if run is None:
        return {}
    return {**run.conditions, **{name: [sub] for name, sub in run.reference.items()}}


def from_study_row(
    row: ConditionRow, subs: Sequence[SubRun], metric: GoldMetric = "success"
) -> Numbers:
    """``study.json``'s numbers (its ``heldout_gold`` leaves real patients out) as ``metric``
    says (``ConditionRow.gold``), with handle time from the episodes."""
    return Numbers(
        name=row.name,
        reference=row.is_reference or row.episodes_trained == 0,
        metric=metric,
        heldout_success=row.heldout_gold if metric == "score" else None,
        episodes_trained=row.episodes_trained,
        train_proxy=row.train_proxy,
        train_gold=row.gold("train", metric),
        heldout_gold=row.gold("heldout", metric),
        real_gold=row.gold("real", metric),
        real_fields=row.heldout_fields_real,
        real_proxy=row.heldout_proxy_real,
        real_by_seed=tuple(row.real_by_seed(metric).values()),
        member_std=row.heldout_member_std,
        exploit_rate=row.exploit_rate,
        by_family=dict(row.gold_by_family("heldout", metric)),
        turns=row.handle_time
        if row.handle_time is not None
        else handle_time(_evals(subs), speaks_real_words),
    )


def from_episodes(
    name: str,
    subs: Sequence[SubRun],
    n_boot: int,
    reference: bool,
    metric: GoldMetric = "success",
) -> Numbers:
    """A run without ``study.json``: the same estimates as ``experiments.study.aggregate`` makes
    (cluster bootstrap over training runs, or a reference's agents: the warm start's seeds, then
    episodes), from the stored evaluations; gold as ``metric`` says."""
    tagged = [(f"{s.run}/{e.condition}", e) for s in subs for e in s.evals]

    def estimate(split: str, real: bool, which: str) -> Estimate | None:
        pairs = [(r, e) for r, e in tagged if e.split == split and speaks_real_words(e) == real]
        if not pairs or (which == "fields" and not any(e.gold.fields for _, e in pairs)):
            return None  # no calls, or no fields to be right (a deal)
        values = [_metric(e, which) for _, e in pairs]
        clusters = [e.simulator_id if real else r for r, e in pairs]  # real people: by visit
        return cluster_bootstrap(values, clusters, n_boot=n_boot)

    runs: dict[str, list[float]] = {}
    for r, e in tagged:
        if e.split == "heldout" and speaks_real_words(e):
            runs.setdefault(r, []).append(_metric(e, metric))

    fams = sorted({e.family for _, e in tagged if e.split == "heldout"})
    return Numbers(
        name=name,
        reference=reference,
        metric=metric,
        heldout_success=estimate("heldout", False, "success") if metric == "score" else None,
        train_proxy=estimate("train", False, "proxy"),
        train_gold=estimate("train", False, metric),
        heldout_gold=estimate("heldout", False, metric),
        real_gold=estimate("heldout", True, metric),
        real_fields=estimate("heldout", True, "fields"),
        real_proxy=estimate("heldout", True, "proxy"),
        real_by_seed=tuple(float(np.mean(v)) for v in runs.values()),
        by_family={f: _family_gold(tagged, f, metric) for f in fams},
        member_std=_member_std(subs),
        turns=handle_time([e for _, e in tagged], speaks_real_words),
    )


def _metric(e: Episode, which: str) -> float:
    """``which`` of ``e``: ``proxy``, ``fields`` (share right) or a gold (``metrics.GOLDS``)."""
    if which == "proxy":
        return e.proxy
    return e.gold.field_accuracy if which == "fields" else GOLDS[which](e)


def _family_gold(tagged: Sequence[tuple[str, Episode]], family: str, metric: GoldMetric) -> float:
    eps = [e for _, e in tagged if e.split == "heldout" and e.family == family]
    return float(np.mean([GOLDS[metric](e) for e in eps]))


def _member_std(subs: Sequence[SubRun]) -> float | None:
    """As a study's sub-run summary has it (``member_std`` of its held-out evaluations), the
    mean over training runs; None without held-out evaluations."""
    spreads = [member_std(h) for s in subs if (h := [e for e in s.evals if e.split == "heldout"])]
    return float(np.mean(spreads)) if spreads else None


def numbers(study: StudyResult | None, run: RunDir | None) -> list[Numbers]:
    """One ``Numbers`` per condition and reference agent, in the study's order."""
    subs = _subs(run)
    if study is not None:
        m = study.gold_metric
        return [from_study_row(r, subs.get(r.name, []), m) for r in study.all_rows]
    if run is None:
        return []
    n_boot, m = run.n_boot, headline_metric(run.scenario)
    out = [from_episodes(n, s, n_boot, False, m) for n, s in run.conditions.items()]
    return out + [from_episodes(n, [s], n_boot, True, m) for n, s in run.reference.items()]


def _e(e: Estimate | None) -> str:
    return est(e, missing=MISSING)


def _p(x: float | None, suffix: str = "") -> str:
    return MISSING if x is None else f"{pct(x)}{suffix}"


def _turns(t: HandleTime | None) -> str:
    return MISSING if t is None else f"{t.median:g} / {t.p90:g}"


def _has_real(rows: Sequence[Numbers]) -> bool:
    return any(r.real_gold is not None for r in rows)


def _headline(rows: Sequence[Numbers]) -> GoldMetric:
    return rows[0].metric if rows else "success"


def gold_table(rows: Sequence[Numbers]) -> Table:
    """Proxy and gold, the gold as the scenario leads with it: success, or the mean score
    (x100) with success on the held-out families beside it."""
    real = _has_real(rows)
    metric = _headline(rows)
    train, held, people = LABELS[metric]
    beside = metric == "score"
    cols = (
        CONDITION,
        TRAIN_PROXY,
        train,
        held,
        *((HELDOUT_SUCCESS,) if beside else ()),
        *((people,) if real else ()),
    )
    cells = tuple(
        (
            r.label,
            _e(r.train_proxy),
            _e(r.train_gold),
            _e(r.heldout_gold),
            *((_e(r.heldout_success),) if beside else ()),
            *((_e(r.real_gold),) if real else ()),
        )
        for r in rows
    )
    note = CI_STUDY
    if beside:
        note += (
            " Gold is the mean score (Outcome.score in [0, 1], x100), as the scenario declares "
            "(gold_metric: score); success is the share of held-out calls graded a success."
        )
    if real:
        note += (
            " Real people (replayed recorded conversations) are never in the held-out families;"
            f" {REAL_CI}"
        )
    return Table("gold", "Proxy vs gold", cols, cells, note)


def handle_table(rows: Sequence[Numbers]) -> Table:
    splits = [s for s in TURNS if s != "real" or _has_real(rows)]
    cells = tuple((r.label, *(_turns(r.turns.get(s)) for s in splits)) for r in rows)
    return Table(
        "handle_time",
        "Handle time: agent turns per call (median / p90)",
        (CONDITION, *(TURNS[s] for s in splits)),
        cells,
        "Over the evaluation calls; fewer turns for the same gold is the better agent.",
    )


def spread_table(rows: Sequence[Numbers]) -> Table:
    cells = tuple(
        (
            r.label,
            MISSING if r.episodes_trained is None else str(r.episodes_trained),
            _p(r.member_std),
            _p(r.exploit_rate, "%"),
        )
        for r in rows
    )
    return Table(
        "spread",
        "Training and spread",
        (CONDITION, EPISODES, MEMBER_STD, EXPLOIT),
        cells,
        f"{MEMBER_STD_NOTE}, mean over training runs.{EXPLOIT_NOTE}",
    )


def family_table(rows: Sequence[Numbers]) -> Table:
    families = sorted({f for r in rows for f in r.by_family})
    cells = tuple(
        (r.label, *(pct(r.by_family[f]) if f in r.by_family else MISSING for f in families))
        for r in rows
    )
    title = "Held-out score by family" if _headline(rows) == "score" else "Held-out gold by family"
    return Table("families", title, (CONDITION, *families), cells)


def real_table(rows: Sequence[Numbers]) -> Table | None:
    """Real patients beside the programmatic held-out families; None without any."""
    shown = [r for r in rows if r.real_gold is not None]
    if not shown:
        return None
    fields = any(r.real_fields is not None for r in shown)  # a scenario without fields: no column
    cells = tuple(
        (
            r.label,
            _e(r.heldout_gold),
            _e(r.real_gold),
            *((_e(r.real_fields),) if fields else ()),
            _e(r.real_proxy),
            " / ".join(pct(x) for x in r.real_by_seed) or MISSING,
            f"{_n(r.heldout_gold)} / {_n(r.real_gold)}",
        )
        for r in shown
    )
    _, held, people = LABELS[_headline(rows)]
    cols = (CONDITION, held, people, *((REAL_FIELDS,) if fields else ()), REAL_PROXY, REAL_SEEDS)
    cols = (*cols, N_CELLS)
    note = f"{REAL_CI_STUDY}; real people: {REAL_CI}"
    return Table("real", "Real people", cols, cells, note)


def _n(e: Estimate | None) -> str:
    return MISSING if e is None else str(e.n)


def summary_tables(rows: Sequence[Numbers]) -> list[Table]:
    """The tables every output shows, in order (the terminal shows the first three); for an
    evaluation (no row trained: ``eval-agent``, an adapter's evaluation) in its own words."""
    real = real_table(rows)
    tables = [gold_table(rows), handle_table(rows), spread_table(rows), family_table(rows)]
    tables += [real] if real is not None else []
    if any(r.episodes_trained for r in rows):
        return tables
    return [t for t in map(_as_evaluation, tables) if len(t.columns) > 1]


def _as_evaluation(t: Table) -> Table:
    """``t`` as an evaluation's: rows are agents, CIs resample episodes (one run, no training
    runs to resample), and columns no evaluation fills (episodes trained, exploit rate) go."""
    empty = {i for i, c in enumerate(t.columns) if c in (EPISODES, EXPLOIT)}
    keep = [
        i for i in range(len(t.columns)) if i not in empty or any(r[i] != MISSING for r in t.rows)
    ]
    note = t.note.replace(CI_STUDY, CI_EVALUATION).replace(REAL_CI_STUDY, REAL_CI_EVALUATION)
    if t.key == "spread":
        note = f"{MEMBER_STD_NOTE}." + (
            EXPLOIT_NOTE if EXPLOIT in [t.columns[i] for i in keep] else ""
        )
    columns = (AGENT, *(t.columns[i] for i in keep[1:]))
    rows = tuple(tuple(row[i] for i in keep) for row in t.rows)
    return Table(t.key, "Spread" if t.key == "spread" else t.title, columns, rows, note)
