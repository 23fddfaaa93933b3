"""``report.md``: the study table with CIs and plain-words findings, from ``study.json`` alone."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sim2human.report.format import pct
from sim2human.report.llm import llm_section
from sim2human.report.real import real_section

REPORT_MD = "report.md"


def fmt(est: dict[str, Any]) -> str:
    lo, hi = est["ci"]
    return f"{pct(est['mean'])} [{pct(lo)}, {pct(hi)}]"


def table(study: dict[str, Any]) -> list[str]:
    lines = [
        "| condition | episodes trained | train proxy | train gold | held-out gold "
        "| held-out member std | exploit rate |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for row in [*study["conditions"], *study.get("reference", [])]:
        name = row["name"] if row["episodes_trained"] else f"{row['name']} (reference)"
        lines.append(
            f"| {name} | {row['episodes_trained']} | {fmt(row['train_proxy'])} | "
            f"{fmt(row['train_gold'])} | {fmt(row['heldout_gold'])} | "
            f"{pct(row['heldout_member_std'])} | {pct(row['exploit_rate'])}% |"
        )
    return lines


def family_table(study: dict[str, Any]) -> list[str]:
    rows = [*study["conditions"], *study.get("reference", [])]
    families = sorted({f for r in rows for f in r.get("heldout_gold_by_family", {})})
    lines = ["| condition | " + " | ".join(families) + " |", "|---|" + "---:|" * len(families)]
    for r in rows:
        by_family = r.get("heldout_gold_by_family", {})
        cells = " | ".join(pct(by_family[f]) if f in by_family else "-" for f in families)
        lines.append(f"| {r['name']} | {cells} |")
    return lines


def _trains_on_one(row: dict[str, Any]) -> bool:
    """Whether a condition trained against one fixed simulator (its sampler; study.json files
    written before rows recorded it are read by the flagship's names)."""
    sampler = row.get("sampler")
    return sampler == "fixed" if sampler is not None else str(row["name"]).startswith("frozen")


def findings(study: dict[str, Any]) -> list[str]:
    """Claims the numbers support, each stated from the data (and said so when they do not)."""
    rows = {r["name"]: r for r in study["conditions"]}
    out: list[str] = []
    frozen = [r for r in rows.values() if _trains_on_one(r)]
    ensembles = [r for r in rows.values() if not _trains_on_one(r)]
    for r in frozen:
        gap = r["train_gold"]["mean"] - r["heldout_gold"]["mean"]
        out.append(
            f"- `{r['name']}`: train proxy {pct(r['train_proxy']['mean'])}, train gold "
            f"{pct(r['train_gold']['mean'])}, held-out gold {pct(r['heldout_gold']['mean'])}: "
            f"held-out is {pct(abs(gap))} points {'below' if gap >= 0 else 'above'} its own "
            "training gold."
        )
    if frozen and ensembles:
        best = max(ensembles, key=lambda r: r["heldout_gold"]["mean"])
        small = rows.get("frozen-small", frozen[0])
        lift = best["heldout_gold"]["mean"] - small["heldout_gold"]["mean"]
        separated = best["heldout_gold"]["ci"][0] > small["heldout_gold"]["ci"][1]
        out.append(
            f"- Best ensemble condition `{best['name']}`: held-out gold "
            f"{pct(best['heldout_gold']['mean'])}, "
            f"{pct(lift)} points above `{small['name']}`"
            + (
                " (the 95% CIs do not overlap)."
                if separated
                else " (the 95% CIs overlap: not a supported difference)."
            )
        )
    if "frozen-large" in rows and "frozen-small" in rows:
        large, small = rows["frozen-large"], rows["frozen-small"]
        better = large["heldout_gold"]["ci"][0] > small["heldout_gold"]["ci"][1]
        ens_best = max((r["heldout_gold"]["mean"] for r in ensembles), default=0.0)
        verdict = (
            "holds: the larger frozen simulator's agent does not transfer better"
            if not better
            else "does not hold: the larger frozen simulator's agent transfers measurably better"
        )
        out.append(
            f"- 'A bigger frozen simulator does not save you' {verdict} "
            f"(held-out gold {pct(large['heldout_gold']['mean'])} vs "
            f"{pct(small['heldout_gold']['mean'])}"
            f" for frozen-small and {pct(ens_best)} for the best ensemble)."
        )
    for r in study.get("reference", []):
        by_family = r.get("train_gold_by_family", {})
        if by_family:
            cells = ", ".join(f"{f} {pct(v)}" for f, v in by_family.items())
            out.append(f"- Reference `{r['name']}` agent, gold on the training families: {cells}.")
    return out


def write_markdown(study: dict[str, Any], out: Path, name: str = REPORT_MD) -> Path:
    seeds = ", ".join(str(s) for s in study["seeds"])
    lines = [
        f"# Study `{study['study']}` ({study['scenario']})",
        "",
        f"Seeds: {seeds}. Wall time: {study['wall_seconds']} s. Percentages; 95% CIs by cluster "
        "bootstrap over seeds and episodes. Proxy = the simulator's satisfaction (what training "
        "sees); gold = `grade()` on the hidden profile (never seen by training).",
        "",
        *table(study),
        "",
        "## Held-out gold by family",
        "",
        *family_table(study),
        "",
        "## Findings",
        "",
        *findings(study),
        "",
        "`exploit rate`: share of the agent's held-out turns that use a phrasing some training "
        "member's quirk over-rewards. Held-out members are never used for training, tuning or "
        "early stopping.",
        "",
        *llm_section(study),
        *real_section(study),
    ]
    path = out / name
    path.write_text("\n".join(lines), encoding="utf-8")
    return path
