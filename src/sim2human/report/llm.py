"""The report's LLM section: held-out results by member kind, LLM member health, token costs.

Present only for studies with ``llm`` members; it reads ``study.json`` alone, like the rest.
"""

from __future__ import annotations

from typing import Any

from sim2human.report.format import pct


def _fmt(est: dict[str, Any]) -> str:
    lo, hi = est["ci"]
    return f"{pct(est['mean'])} [{pct(lo)}, {pct(hi)}] (n={est['n']})"


def llm_section(study: dict[str, Any]) -> list[str]:
    rows = [
        r for r in [*study["conditions"], *study.get("reference", [])] if "heldout_gold_llm" in r
    ]
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
            f"| {r['name']} | {r['episodes_trained']} | {_fmt(r['heldout_gold_persona'])} | "
            f"{_fmt(r['heldout_gold_llm'])} | {_fmt(r['heldout_fields_llm'])} | "
            f"{_fmt(r['heldout_fields_persona'])} |"
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
        n = max(1, r["llm_replies"])
        lines.append(
            f"| {r['name']} | {r['llm_episodes']} | {r['llm_errors']} | {r['llm_replies']} | "
            f"{r['llm_role_retries']} ({pct(r['llm_role_retries'] / n)}%) | "
            f"{r['llm_role_failures']} ({pct(r['llm_role_failures'] / n)}%) | "
            f"{r['llm_judge_failures']} |"
        )
    lines += ["", *_findings(rows), *_accounting(study.get("llm_accounting", {})), ""]
    return lines


def _compare(rows: list[dict[str, Any]], key: str, label: str) -> list[str]:
    """Best and worst row on ``key``, and whether their 95% CIs separate them."""
    ranked = sorted(rows, key=lambda r: -r[key]["mean"])
    best, worst = ranked[0], ranked[-1]
    if best is worst:
        return []
    sep = best[key]["ci"][0] > worst[key]["ci"][1]
    return [
        f"- {label}: best `{best['name']}` {pct(best[key]['mean'])}, "
        f"worst `{worst['name']}` {pct(worst[key]['mean'])}"
        + (
            " (the 95% CIs do not overlap)."
            if sep
            else " (the 95% CIs overlap: no supported difference at this n)."
        )
    ]


def _findings(rows: list[dict[str, Any]]) -> list[str]:
    if any(r["heldout_gold_llm"]["mean"] > 0 for r in rows):
        out = _compare(rows, "heldout_gold_llm", "Held-out LLM gold")
    else:
        out = [
            "- No agent, the scripted reference included, completed a call with a held-out LLM "
            "member: these members rarely get every fact across (see the role failures above), "
            "so gold success cannot rank agents on them; fields right can."
        ]
    out += _compare(rows, "heldout_fields_llm", "Held-out LLM fields right")
    for r in rows:
        gap = r["heldout_gold_persona"]["mean"] - r["heldout_gold_llm"]["mean"]
        out.append(
            f"- `{r['name']}`: held-out LLM members {pct(abs(gap))} points "
            f"{'below' if gap >= 0 else 'above'} held-out persona members in gold success."
        )
    return out


def _accounting(acc: dict[str, Any]) -> list[str]:
    if not acc:
        return []
    return [
        "",
        f"LLM cost of the whole study: {acc['requests']} requests ({acc['cache_hits']} from the "
        f"cache), {acc['retries']} retries, {acc['failures']} failures, "
        f"{acc['prompt_tokens']} prompt and {acc['completion_tokens']} completion tokens, "
        f"{acc['latency_s']:.0f} s summed request latency.",
    ]
