"""The report's LLM section: held-out results by member kind, LLM member health, token costs.

Present only for studies with ``llm`` members; it reads ``study.json`` alone, like the rest.
"""

from __future__ import annotations

from collections.abc import Mapping

from sim2human.experiments.study.results import ConditionRow, StudyResult
from sim2human.metrics.outcomes import Estimate
from sim2human.report.format import est, md, md_code, pct


def _fmt(e: Estimate | None) -> str:
    return est(e, n=True)


def _mean(e: Estimate | None) -> float:
    return e.mean if e is not None else float("nan")


def llm_section(study: StudyResult) -> list[str]:
    rows = [r for r in study.all_rows if r.heldout_gold_llm is not None]
    if not rows:
        return []
    lines = [
        "## Held-out persona vs held-out LLM members",
        "",
        "| condition | episodes trained | held-out persona gold | held-out LLM gold "
        "| held-out LLM fields right | held-out persona fields right |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {md(r.name)} | {r.episodes_trained} | {_fmt(r.heldout_gold_persona)} | "
            f"{_fmt(r.heldout_gold_llm)} | {_fmt(r.heldout_fields_llm)} | "
            f"{_fmt(r.heldout_fields_persona)} |"
        )
    lines += [
        "",
        "LLM member health, over the evaluation episodes on LLM members:",
        "",
        "| condition | LLM episodes | errors | replies | role retries | role failures "
        "| judge failures |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        retries, failures = r.llm_role_retries or 0, r.llm_role_failures or 0
        n = max(1, r.llm_replies or 0)
        lines.append(
            f"| {md(r.name)} | {r.llm_episodes} | {r.llm_errors} | {r.llm_replies} | "
            f"{retries} ({pct(retries / n)}%) | {failures} ({pct(failures / n)}%) | "
            f"{r.llm_judge_failures} |"
        )
    lines += ["", *_findings(rows), *_accounting(study.llm_accounting or {}), ""]
    return lines


def _compare(rows: list[ConditionRow], key: str, label: str) -> list[str]:
    """Best and worst row on ``key``, and whether their 95% CIs separate them."""

    def of(r: ConditionRow) -> Estimate:
        e = getattr(r, key)
        assert isinstance(e, Estimate), key
        return e

    ranked = sorted(rows, key=lambda r: -of(r).mean)
    best, worst = ranked[0], ranked[-1]
    if best is worst:
        return []
    sep = of(best).ci[0] > of(worst).ci[1]
    return [
        f"- {label}: best {md_code(best.name)} {pct(of(best).mean)}, "
        f"worst {md_code(worst.name)} {pct(of(worst).mean)}"
        + (
            " (the 95% CIs do not overlap)."
            if sep
            else " (the 95% CIs overlap: no supported difference at this n)."
        )
    ]


def _findings(rows: list[ConditionRow]) -> list[str]:
    if any(_mean(r.heldout_gold_llm) > 0 for r in rows):
        out = _compare(rows, "heldout_gold_llm", "Held-out LLM gold")
    else:
        out = [
            "- No agent, the scripted reference included, completed a call with a held-out LLM "
            "member: these members rarely get every fact across (see the role failures above), "
            "so gold success cannot rank agents on them; fields right can."
        ]
    out += _compare(rows, "heldout_fields_llm", "Held-out LLM fields right")
    for r in rows:
        gap = _mean(r.heldout_gold_persona) - _mean(r.heldout_gold_llm)
        out.append(
            f"- {md_code(r.name)}: held-out LLM members {pct(abs(gap))} points "
            f"{'below' if gap >= 0 else 'above'} held-out persona members in gold success."
        )
    return out


def _accounting(acc: Mapping[str, int | float]) -> list[str]:
    if not acc:
        return []
    return [
        "",
        f"LLM cost of the whole study: {acc['requests']:g} requests ({acc['cache_hits']:g} from "
        f"the cache), {acc['retries']:g} retries, {acc['failures']:g} failures, "
        f"{acc['prompt_tokens']:g} prompt and {acc['completion_tokens']:g} completion tokens, "
        f"{acc['latency_s']:.0f} s summed request latency.",
    ]
