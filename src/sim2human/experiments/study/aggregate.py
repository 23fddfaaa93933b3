"""``study.json`` from the sub-runs a study stored: one row per condition (and reference agent)
with CIs, held-out results split by member kind, and endpoint accounting."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from sim2human.experiments.study.condition import trained_episodes
from sim2human.experiments.study.config import (
    WARM_START_AGENT,
    Condition,
    StudyConfig,
    warm_start_label,
)
from sim2human.experiments.study.results import FailedRun, StudyResult
from sim2human.experiments.study.sub_run_summary import SubRunSummary
from sim2human.experiments.study.wholeness import read_whole
from sim2human.metrics.handle_time import handle_time
from sim2human.metrics.outcomes import Estimate, StoredEstimate, cluster_bootstrap
from sim2human.metrics.robustness import curve_mean, episodes_to_reach, worst_decile_estimate
from sim2human.scenarios.capabilities import quirks_shared
from sim2human.scenarios.catalog import get_scenario
from sim2human.scenarios.core import headline_metric
from sim2human.simulators.kinds import played_on_endpoint, speaks_real_words
from sim2human.simulators.replay import reply_shares
from sim2human.store.layout import CURVE_LOG, REFERENCE, SUMMARY, RunLayout, sub_run_relative
from sim2human.store.rundir import iter_jsonl
from sim2human.types import Episode

RERUN = "continue the study with --resume to rerun it"


def aggregate(
    cfg: StudyConfig, root: Path, wall_seconds: float, failed: Sequence[FailedRun] = ()
) -> StudyResult:
    """study.json from the sub-runs on disk: CIs by cluster bootstrap over seeds and episodes.

    Each sub-run is read whole or not at all (``wholeness.read_whole``: a torn one is refused).
    ``failed``: sub-runs (``path`` relative to ``root``) whose workers died; they are left out
    and listed in the result, as are conditions left with no finished seed."""
    gone = {f.path for f in failed}
    rows = []
    for condition in cfg.conditions:
        by_seed: dict[int, list[Episode]] = {}
        summaries = []
        curves = []
        for seed in cfg.seeds:
            sub = sub_run_relative(condition.name, seed)
            if str(sub) in gone:
                continue
            summary, episodes = read_whole(root / sub, cfg.scenario, RERUN)
            by_seed[seed] = [e for e in episodes if e.phase == "eval"]
            summaries.append(summary)
            curve_path = root / sub / CURVE_LOG
            curves.append([r for _, r in iter_jsonl(curve_path)] if curve_path.exists() else [])
        if by_seed:
            rows.append(_trained_row(cfg, condition, by_seed, summaries, curves))
    _episodes_to_baseline_final(rows)
    reference = []
    for name in cfg.reference_agents:
        if str(Path(REFERENCE) / name) in gone:
            continue
        summary, episodes = read_whole(RunLayout(root).reference(name), cfg.scenario, RERUN)
        row = _condition_row(name, cfg, _by_agent(name, cfg, episodes), [summary])
        row["episodes_trained"] = 0
        reference.append(row)
    extra: dict[str, Any] = {"failed": [f.model_dump() for f in failed]} if failed else {}
    scenario = get_scenario(cfg.scenario)
    result = StudyResult.model_validate(
        {
            "study": cfg.name,
            "scenario": cfg.scenario,
            "seeds": list(cfg.seeds),
            "wall_seconds": round(wall_seconds, 1),
            "conditions": _known_comparisons(rows) if failed else rows,
            "reference": reference,
            **_llm_accounting(root, cfg, gone),
            **extra,
            "gold_metric": headline_metric(scenario),
            "quirks_shared": quirks_shared(scenario),
        }
    )
    return result.with_rows()


def _by_agent(name: str, cfg: StudyConfig, episodes: Sequence[Episode]) -> dict[int, list[Episode]]:
    """A reference agent's episodes by the agent that played them: the scripted agent's as one,
    the LM warm start's by study seed (each seed's warm start is its own model, a bootstrap
    cluster as a trained condition's seed is)."""
    if name != WARM_START_AGENT:
        return {0: list(episodes)}
    return {s: [e for e in episodes if e.condition == warm_start_label(s)] for s in cfg.seeds}


def _trained_row(
    cfg: StudyConfig,
    condition: Condition,
    by_seed: dict[int, list[Episode]],
    summaries: list[dict[str, Any]],
    curves: list[list[dict[str, Any]]],
) -> dict[str, Any]:
    row = _condition_row(condition.name, cfg, by_seed, summaries)
    row["episodes_trained"] = trained_episodes(cfg, condition)
    row["sampler"] = condition.sampler
    row["role"] = condition.role
    row["compare_to"] = condition.compare_to
    programmatic = {s: [e for e in eps if not speaks_real_words(e)] for s, eps in by_seed.items()}
    w = worst_decile_estimate(programmatic, n_boot=cfg.eval.bootstrap)
    row["heldout_worst_decile"] = w.stored()
    row["heldout_curve"] = [list(p) for p in curve_mean(curves)] if all(curves) else []
    return row


def _known_comparisons(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``rows`` with a ``compare_to`` naming a condition left out (every seed failed) cleared:
    that comparison cannot be made until ``--resume`` reruns it."""
    names = {r["name"] for r in rows}
    return [r if r["compare_to"] in names else {**r, "compare_to": None} for r in rows]


def _llm_accounting(root: Path, cfg: StudyConfig, gone: set[str]) -> dict[str, Any]:
    """Endpoint accounting summed over every sub-run (absent for studies without LLMs)."""
    subs = [sub_run_relative(c.name, s) for c in cfg.conditions for s in cfg.seeds]
    subs += [Path(REFERENCE) / name for name in cfg.reference_agents]
    total: dict[str, float] = {}
    for sub in subs:
        if str(sub) in gone:
            continue
        for stats in (SubRunSummary.read(root / sub / SUMMARY).llm or {}).values():
            for k, v in stats.items():
                total[k] = total.get(k, 0) + v
    return {"llm_accounting": total} if total else {}


def _episodes_to_baseline_final(rows: list[dict[str, Any]]) -> None:
    """Episodes each condition needed to reach the study's first ``baseline`` condition's final
    held-out gold on the curve subset (seed-mean curves); None when it never did, or without
    curves or a baseline. Stored as ``episodes_to_uniform_final`` (the baseline is a uniform
    ensemble unless a study says otherwise)."""
    ref = next((r for r in rows if r["role"] == "baseline"), None)
    for r in rows:
        r["episodes_to_uniform_final"] = (
            episodes_to_reach(
                [(int(n), g) for n, g in r["heldout_curve"]], ref["heldout_curve"][-1][1]
            )
            if ref is not None and ref["heldout_curve"] and r["heldout_curve"]
            else None
        )


def _condition_row(
    name: str,
    cfg: StudyConfig,
    by_seed: dict[int, list[Episode]],
    summaries: Sequence[dict[str, Any]],
) -> dict[str, Any]:
    tagged = [(seed, e) for seed, eps in by_seed.items() for e in eps]

    def est(split: str, metric: Callable[[Episode], float]) -> StoredEstimate:
        # real patients (replay families) have their own column: real_patient_rows
        pairs = [(seed, e) for seed, e in tagged if e.split == split and not speaks_real_words(e)]
        r: Estimate = cluster_bootstrap(
            [metric(e) for _, e in pairs], [seed for seed, _ in pairs], n_boot=cfg.eval.bootstrap
        )
        return r.stored()

    held = [e for _, e in tagged if e.split == "heldout"]
    trained = [e for _, e in tagged if e.split == "train"]
    families = sorted({e.family for e in held})
    extra: dict[str, Any] = {}
    if any(played_on_endpoint(e) for e in held):
        extra = llm_rows(tagged, cfg.eval.bootstrap)
    if any(speaks_real_words(e) for e in held):
        extra |= real_patient_rows(tagged, cfg.eval.bootstrap)
    rules = {e.record_source for _, e in tagged}
    if rules != {"heard"} and rules:  # left out for act-level agents: their rows as before
        extra["gold_rule"] = "submitted" if rules == {"submitted"} else "mixed"
    return {
        **extra,
        "name": name,
        "episodes_trained": cfg.train.episodes,
        "train_proxy": est("train", lambda e: e.proxy),
        "train_gold": est("train", lambda e: float(e.gold.success)),
        "heldout_proxy": est("heldout", lambda e: e.proxy),
        "heldout_gold": est("heldout", lambda e: float(e.gold.success)),
        "heldout_member_std": float(np.mean([s["heldout_member_std"] for s in summaries])),
        "exploit_rate": float(np.mean([s["exploit_rate"] for s in summaries])),
        "heldout_gold_by_family": {
            f: float(np.mean([e.gold.success for e in held if e.family == f])) for f in families
        },
        "train_gold_by_family": {
            f: float(np.mean([e.gold.success for e in trained if e.family == f]))
            for f in sorted({e.family for e in trained})
        },
        "heldout_dropped_rate": float(np.mean([e.gold.dropped for e in held])) if held else 0.0,
        "handle_time": {
            k: v.model_dump()
            for k, v in handle_time(
                [e for _, e in tagged if e.phase == "eval"], speaks_real_words
            ).items()
        },
        **score_rows(tagged, cfg.eval.bootstrap),
    }


def score_rows(tagged: Sequence[tuple[int, Episode]], n_boot: int) -> dict[str, Any]:
    """Gold as the mean ``Outcome.score`` beside success: what a scenario that leads with its
    score (``gold_metric: score``, negotiation) shows, for every scenario (where the score is
    success, as in slot filling, these equal the success columns)."""

    def est(split: str, real: bool) -> StoredEstimate:
        pairs = [(s, e) for s, e in tagged if e.split == split and speaks_real_words(e) == real]
        clusters = [e.simulator_id if real else s for s, e in pairs]  # real people: by visit
        return cluster_bootstrap([e.gold.score for _, e in pairs], clusters, n_boot=n_boot).stored()

    def by_family(split: str) -> dict[str, float]:
        eps = [e for _, e in tagged if e.split == split]
        fams = sorted({e.family for e in eps})
        return {f: float(np.mean([e.gold.score for e in eps if e.family == f])) for f in fams}

    real = any(e.split == "heldout" and speaks_real_words(e) for _, e in tagged)
    return {
        "train_score": est("train", False),
        "heldout_score": est("heldout", False),
        "heldout_score_by_family": by_family("heldout"),
        "train_score_by_family": by_family("train"),
        **(
            {
                "heldout_score_real": est("heldout", True),
                "heldout_score_real_by_seed": by_seed(tagged, lambda e: e.gold.score),
            }
            if real
            else {}
        ),
    }


def real_patient_rows(tagged: Sequence[tuple[int, Episode]], n_boot: int) -> dict[str, Any]:
    """Held-out results on real patients (``replay`` families) and on the programmatic rest.

    Real people's CIs resample visits (``simulator_id``: one recorded dialogue), then episodes
    within a visit, every seed's episodes of a visit pooled: which visits were drawn is most of
    the variance there, and seed-to-seed spread is shown beside, as each seed's mean
    (``heldout_gold_real_by_seed``). The programmatic rest resamples seeds, as everywhere."""

    def est(real: bool, metric: Callable[[Episode], float]) -> StoredEstimate:
        pairs = [(s, e) for s, e in tagged if e.split == "heldout" and speaks_real_words(e) == real]
        clusters = [e.simulator_id if real else s for s, e in pairs]
        r = cluster_bootstrap([metric(e) for _, e in pairs], clusters, n_boot=n_boot)
        return r.stored()

    real = [e for _, e in tagged if e.split == "heldout" and speaks_real_words(e)]
    graded = any(e.gold.fields for e in real)  # a deal has no fields to be right (negotiation)
    return {
        "heldout_gold_real": est(True, lambda e: float(e.gold.success)),
        "heldout_fields_real": est(True, lambda e: e.gold.field_accuracy) if graded else None,
        "heldout_proxy_real": est(True, lambda e: e.proxy),
        "heldout_gold_programmatic": est(False, lambda e: float(e.gold.success)),
        "heldout_gold_real_by_seed": by_seed(tagged, lambda e: float(e.gold.success)),
        "real_reply_shares": reply_shares(real),
    }


def by_seed(
    tagged: Sequence[tuple[int, Episode]], metric: Callable[[Episode], float]
) -> dict[str, float]:
    """Each seed's mean ``metric`` on held-out real people (keys: the seed, as JSON has it)."""
    seeds: dict[int, list[float]] = {}
    for s, e in tagged:
        if e.split == "heldout" and speaks_real_words(e):
            seeds.setdefault(s, []).append(metric(e))
    return {str(s): float(np.mean(v)) for s, v in sorted(seeds.items())}


def llm_rows(tagged: Sequence[tuple[int, Episode]], n_boot: int) -> dict[str, Any]:
    """Held-out results split into persona and ``llm`` members (CIs), and LLM member health."""

    def est(pick: Callable[[Episode], bool], metric: Callable[[Episode], float]) -> StoredEstimate:
        pairs = [(seed, e) for seed, e in tagged if pick(e)]
        r = cluster_bootstrap([metric(e) for _, e in pairs], [s for s, _ in pairs], n_boot=n_boot)
        return r.stored()

    def is_llm(e: Episode) -> bool:
        return played_on_endpoint(e)

    llm_eps = [e for _, e in tagged if is_llm(e)]
    replies = sum(e.diagnostics.get("replies", 0.0) for e in llm_eps)
    return {
        "heldout_gold_persona": est(
            lambda e: e.split == "heldout" and not is_llm(e), lambda e: float(e.gold.success)
        ),
        "heldout_gold_llm": est(
            lambda e: e.split == "heldout" and is_llm(e), lambda e: float(e.gold.success)
        ),
        "heldout_fields_llm": est(
            lambda e: e.split == "heldout" and is_llm(e), lambda e: e.gold.field_accuracy
        ),
        "heldout_fields_persona": est(
            lambda e: e.split == "heldout" and not is_llm(e), lambda e: e.gold.field_accuracy
        ),
        "train_fields": est(lambda e: e.split == "train", lambda e: e.gold.field_accuracy),
        "llm_episodes": len(llm_eps),
        "llm_errors": sum(e.termination == "error" for e in llm_eps),
        "llm_replies": int(replies),
        "llm_role_retries": int(sum(e.diagnostics.get("role_retries", 0) for e in llm_eps)),
        "llm_role_failures": int(sum(e.diagnostics.get("role_failures", 0) for e in llm_eps)),
        "llm_judge_failures": int(sum(e.diagnostics.get("judge_failures", 0) for e in llm_eps)),
    }
