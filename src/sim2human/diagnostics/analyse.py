"""From a run directory to a ``Diagnosis``: every collapse metric of every condition, and verdicts.

This is the one place that knows how the pieces combine; ``report`` renders a ``Diagnosis`` and
``diagnose`` prints and gates on one.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pydantic import Field

from sim2human.diagnostics import side_by_side
from sim2human.diagnostics.replay import ablate, phrasings_of
from sim2human.diagnostics.rundir import RunDir, SubRun
from sim2human.diagnostics.verdict import Thresholds, Verdict, judge
from sim2human.diagnostics.warm_start import by_seed, quirk_shares, start_reading, warm_start_calls
from sim2human.experiments.study.results import StudyResult
from sim2human.metrics.against_start import Change
from sim2human.metrics.collapse import (
    N_BOOT,
    Behaviour,
    ExploitRow,
    GroupRow,
    Paired,
    Robustness,
    Transfer,
    behaviour,
    by_group,
    exploit_table,
    robustness,
    transfer,
)
from sim2human.metrics.heard_unrecorded import Unrecorded, unrecorded
from sim2human.metrics.outcomes import GOLDS, Estimate
from sim2human.metrics.overoptimisation import EvalPoint, OverFit, fit_overoptimisation
from sim2human.metrics.task_pay import TaskPay, task_pay
from sim2human.scenarios.core import AnyScenario, headline_metric
from sim2human.simulators.base import SimulatorSpec
from sim2human.simulators.kinds import is_programmatic
from sim2human.types import Episode, Frozen, Turn

MAX_PHRASINGS = 6
"""Phrasings ablated per condition: the agent's most frequent ones (at least 1% of its turns)."""
PER_PHRASING = 20
"""Episodes ablated per phrasing, per split and training run (replays cost ~5 ms each)."""


class CurvePoint(Frozen):
    run: str
    update: int
    episodes: int
    train_proxy: float | None = None
    train_gold: float | None = None
    heldout_gold: float | None = None
    heldout_field_accuracy: float | None = None
    heldout_n: int = 0
    d: float | None = None
    entropy: float | None = None
    top_act_share: float | None = None
    reward_std: float | None = None


class ConditionDiagnosis(Frozen):
    name: str
    runs: list[str]
    finished_runs: int
    transfer: Transfer | None
    families: list[GroupRow]
    members: list[GroupRow]
    curve: list[CurvePoint]
    eval_points: list[EvalPoint]
    overfit: OverFit | None
    checkpoints: dict[str, str]
    """Training run -> checkpoint path (relative to the run directory) to stop at."""
    exploits: list[ExploitRow]
    quirks: dict[str, list[str]]
    """Phrasing -> recorded quirks of this condition's training members that it matches."""
    examples: dict[str, list[str]]
    """Phrasing -> one transcript (``speaker: text`` lines) where it paid the most."""
    behaviour: Behaviour | None
    robustness: Robustness | None
    verdict: Verdict
    own_words: float | None = None
    """A language-model agent's share of held-out turns that are no line of its warm start
    (mean over runs): whether it writes its own words; None for an act-level agent."""
    task_pay: TaskPay | None = None
    """What its training reward paid, within GRPO's groups, for doing the task better; None
    for a run without groups (PPO)."""
    unrecorded: dict[str, Unrecorded] = Field(default_factory=dict)
    """Split (``train``, ``heldout``) -> the share of the fields its calls made heard that the
    record it submitted lacks; only for an agent that acts through tools (``Episode.record_source``
    ``submitted``), whose callers cannot see its record."""
    against_start: dict[str, Change] = Field(default_factory=dict)
    """Group (``train``, ``heldout``: programmatic families, ``real``: real people) -> its gold
    against its warm start's on the same calls (``metrics.against_start``): what training
    changed. Only for a language-model study with its ``warm-start`` reference agent."""
    quirk_share_against_start: tuple[Estimate, Estimate] | None = None
    """Of the held-out turns of the calls both played, the share that say a phrasing its
    training members' quirks over-reward (its exploit rate's reading): the warm start's, then
    its own; None without a warm start or without quirks."""


def _curve(sub: SubRun) -> list[CurvePoint]:
    def num(row: dict[str, Any], key: str) -> float | None:
        v = row.get(key)
        return float(v) if isinstance(v, int | float) else None

    points = []
    for row in sub.metrics:
        if not isinstance(row.get("update"), int):
            continue
        kl = num(row, "kl_init")
        points.append(
            CurvePoint(
                run=sub.run,
                update=row["update"],
                episodes=int(row.get("episodes_seen") or 0),
                train_proxy=num(row, "train_proxy"),
                train_gold=num(row, "train_gold"),
                heldout_gold=num(row, "heldout_gold"),
                heldout_field_accuracy=num(row, "heldout_field_accuracy"),
                heldout_n=int(num(row, "heldout_n") or 0),
                d=num(row, "d")
                if "d" in row
                else (max(0.0, kl) ** 0.5 if kl is not None else None),
                entropy=num(row, "entropy"),
                top_act_share=num(row, "top_act_share"),
                reward_std=num(row, "reward_std"),
            )
        )
    return points


def _quirks(specs: Sequence[SimulatorSpec], texts: dict[str, str]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for key, text in texts.items():
        hits = []
        for s in specs:
            q = s.traits.quirks
            if q.trigger and q.trigger.lower() == text.lower():
                hits.append(f"trigger of {s.id}")
            if any(p.lower() == text.lower() for p in q.over_rewarded):
                hits.append(f"over-rewarded by {s.id}")
        if hits:
            out[key] = hits
    return out


def _transcript(e: Episode) -> list[str]:
    return [f"{t.speaker}: {t.text}" for t in e.turns]


def _usage(
    subs: Sequence[SubRun],
) -> tuple[Counter[str], dict[str, str], dict[str, Turn], int]:
    """Per phrasing (``phrasings_of``): the evaluation turns that say it, its words, a turn
    that says it alone (what an ablation says instead); and the turns in all."""
    usage: Counter[str] = Counter()
    texts: dict[str, str] = {}
    said: dict[str, Turn] = {}
    turns = 0
    for s in subs:
        for e in s.evals:
            for t in e.agent_turns:
                turns += 1
                for p in phrasings_of(t):
                    usage[p] += 1
                    texts.setdefault(p, t.text if t.act else p)
                    alone = t if t.act or p == t.text else t.model_copy(update={"text": p})
                    said.setdefault(p, alone)
    return usage, texts, said, max(1, turns)


def _exploits(
    subs: Sequence[SubRun], scenario: AnyScenario, limits: Thresholds, n_boot: int
) -> tuple[list[ExploitRow], dict[str, str], dict[str, list[str]], dict[str, list[str]]]:
    usage, texts, said, total = _usage(subs)
    candidates = [p for p, n in usage.most_common(MAX_PHRASINGS) if n / total >= 0.01]
    pairs: list[Paired] = []
    by_id: dict[str, Episode] = {}
    for s in subs:
        # Replays need a programmatic simulator; LLM-played members are left out of the finder.
        specs = {k: v for k, v in s.specs.items() if is_programmatic(v)}
        for split in ("train", "heldout"):
            eps = [e for e in s.evals if e.split == split]
            ablated = ablate(
                eps,
                specs,
                scenario,
                candidates,
                max_turns=s.max_turns,
                per_phrasing=PER_PHRASING,
                turns=said,
            )
            for a in ablated:
                key = f"{s.run}/{a.episode.id}"
                by_id[key] = a.episode
                pairs.append(
                    Paired(
                        phrasing=a.phrasing,
                        split=split,
                        member=a.episode.simulator_id,
                        run=s.run,
                        d_proxy=a.base.proxy - a.without.proxy,
                        d_field=a.base.field_accuracy - a.without.field_accuracy,
                        d_success=float(a.base.success) - float(a.without.success),
                        episode_id=key,
                    )
                )
    rows = exploit_table(
        pairs,
        usage,
        texts,
        turns=total,
        min_unearned=limits.min_unearned,
        min_share=limits.min_share,
        n_boot=n_boot,
    )
    trained = {s.id: s for sub in subs for s in sub.trained_on}
    quirks = _quirks(list(trained.values()), {r.phrasing: r.text for r in rows})
    examples = {r.phrasing: _transcript(by_id[r.example]) for r in rows if r.example in by_id}
    return rows, texts, quirks, examples


def diagnose_condition(
    name: str,
    subs: Sequence[SubRun],
    limits: Thresholds,
    scenario: AnyScenario,
    n_boot: int = N_BOOT,
    start: Mapping[int, Sequence[Episode]] | None = None,
) -> ConditionDiagnosis:
    """``n_boot``: bootstrap replicates; a study's own (``eval.bootstrap``) makes these CIs the
    ones its study.json holds (the same ``cluster_bootstrap``, clusters and seed). ``start``:
    the warm start's evaluation calls by study seed, to read the condition's against."""
    by_run = {s.run: s.evals for s in subs if s.evals}
    metric = headline_metric(scenario)
    value = GOLDS[metric]
    tr = transfer(by_run, n_boot=n_boot, value=value) if by_run else None
    curve = [p for s in subs for p in _curve(s)]
    # The overoptimisation fit reads gold as field accuracy: success rates of a few dozen
    # probe episodes sit at 0 for most of a collapsing run and hide the rise and fall.
    points = [
        EvalPoint(run=p.run, update=p.update, d=p.d, gold=p.heldout_field_accuracy, n=p.heldout_n)
        for p in curve
        if p.heldout_field_accuracy is not None and p.d is not None
    ]
    fit = fit_overoptimisation(points)
    exploits, _, quirks, examples = _exploits(subs, scenario, limits, n_boot)
    held = [e for eps in by_run.values() for e in eps if e.split == "heldout"]
    trained = by_seed(subs)  # its calls by study seed, read against the warm start's
    reading = start_reading(trained, start, value, n_boot) if start else None
    return ConditionDiagnosis(
        name=name,
        runs=[s.run for s in subs],
        finished_runs=sum(s.finished for s in subs),
        transfer=tr,
        families=by_group(by_run, "family", n_boot=n_boot, value=value),
        members=by_group(by_run, "simulator_id", n_boot=n_boot, value=value),
        curve=curve,
        eval_points=points,
        overfit=fit,
        checkpoints=_checkpoints(subs, fit),
        exploits=exploits,
        quirks=quirks,
        examples=examples,
        behaviour=behaviour(held) if held else None,
        robustness=robustness(held) if held else None,
        verdict=judge(name, tr, exploits, quirks, limits, metric, reading),
        own_words=_own_words(subs),
        task_pay=task_pay({s.run: s.episodes for s in subs}, n_boot=n_boot),
        unrecorded={
            split: found
            for split in ("train", "heldout")
            if (found := unrecorded(by_run, scenario, split, n_boot=n_boot)) is not None
        },
        against_start=reading.changes if reading else {},
        quirk_share_against_start=quirk_shares(subs, trained, start, n_boot) if start else None,
    )


def _checkpoints(subs: Sequence[SubRun], fit: OverFit | None) -> dict[str, str]:
    """Training run -> the checkpoint the overoptimisation fit says to stop at, where saved."""
    out: dict[str, str] = {}
    for s in subs:
        if fit is not None and s.run in fit.stop:
            row = next((r for r in s.metrics if r.get("update") == fit.stop[s.run]), {})
            if isinstance(row.get("checkpoint"), str):
                out[s.run] = str((s.path / row["checkpoint"]).as_posix())
    return out


def _own_words(subs: Sequence[SubRun]) -> float | None:
    shares = [
        float(s.summary["novel_turn_share"])
        for s in subs
        if s.summary is not None and isinstance(s.summary.get("novel_turn_share"), int | float)
    ]
    return sum(shares) / len(shares) if shares else None


class Diagnosis(Frozen):
    root: str
    kind: str
    name: str
    thresholds: Thresholds
    conditions: list[ConditionDiagnosis]
    reference: list[ConditionDiagnosis]
    problems: list[str]
    study: StudyResult | None = None

    @property
    def unit(self) -> str:
        """What one row judges: an evaluated ``agent`` (a run that trained nothing), else a
        study's ``condition``; the pages call their rows by it."""
        return "agent" if self.kind == "evaluation" else "condition"


def diagnose(
    run: RunDir,
    limits: Thresholds | None = None,
    *,
    on_condition: Callable[[str], None] | None = None,
    workers: int = 1,
) -> Diagnosis:
    """Every condition and reference agent of ``run`` diagnosed; ``workers`` > 1 diagnoses them
    side by side in forked processes (``side_by_side``: the same results), for callers that
    own their process (the commands, not the web app). ``on_condition``: each condition's name
    as it is waited for."""
    limits = limits or Thresholds()
    scenario = run.scenario
    jobs: list[tuple[str, Sequence[SubRun], bool]] = [
        *((name, subs, True) for name, subs in run.conditions.items()),
        *((name, [sub], False) for name, sub in run.reference.items()),
    ]

    def waiting(job: tuple[str, Sequence[SubRun], bool]) -> None:
        if on_condition is not None and job[2]:
            on_condition(job[0])

    start = warm_start_calls(run)
    diagnosed = side_by_side.each(
        lambda job: diagnose_condition(
            job[0], job[1], limits, scenario, run.n_boot, start if job[2] else None
        ),
        jobs,
        workers,
        cost=lambda job: sum(len(s.evals) for s in job[1]),
        on_wait=waiting,
    )
    n = len(run.conditions)
    return Diagnosis(
        root=str(run.root),
        kind=run.kind,
        name=run.name,
        thresholds=limits,
        conditions=diagnosed[:n],
        reference=diagnosed[n:],
        problems=run.all_problems(),
        study=run.study,
    )
