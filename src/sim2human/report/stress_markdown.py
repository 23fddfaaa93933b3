"""``stress.md``: the stress results as Markdown, from ``stress.json`` alone (the tables and
findings of ``stress.html`` without the plots and transcripts), for a README, a pull request or
a terminal."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sim2human import outputs
from sim2human.report.format import md, md_code, pct
from sim2human.report.stress_findings import episodes_per_member, findings, fmt
from sim2human.store.layout import STRESS_MD


def _row(cells: list[str]) -> str:
    """A table row of cells already escaped (``format.md`` on every text from stress.json)."""
    return "| " + " | ".join(cells) + " |"


def _table(head: list[str], rows: list[list[str]], numeric_from: int = 1) -> list[str]:
    align = ["---" if i < numeric_from else "---:" for i in range(len(head))]
    return [_row(head), "|" + "|".join(align) + "|", *(_row(r) for r in rows)]


def stress_markdown(stress: dict[str, Any]) -> str:
    """The whole ``stress.md`` page."""
    perts: list[str] = stress["perturbations"]
    agents: dict[str, Any] = stress["agents"]
    grid = ", ".join(f"{s:g}" for s in stress["grid"])
    families = ", ".join(md_code(f) for f in stress.get("heldout_families") or []) or "held-out"
    lines = [
        f"# Stress test of study {md_code(stress.get('study', ''))}",
        "",
        f"Gold success on the {families} members with each perturbation layered onto their "
        f"own noise at severities {grid}, {episodes_per_member(stress)}. "
        "Robustness = the area under the gold-success curve divided by the clean success "
        "(100 = unaffected); absolute AUC = that area itself. %, with 95% CIs (bootstrap over "
        "training seeds, then episodes).",
        "",
        *_table(
            ["agent", "seeds", "clean gold", "robustness", "absolute AUC", *map(md, perts)],
            [
                [
                    md(name),
                    str(len(a["seeds"])),
                    fmt(a["clean"]),
                    fmt(a["overall"]),
                    fmt(a["overall_auc"]),
                    *(fmt(a["per_perturbation"][p]) for p in perts),
                ]
                for name, a in agents.items()
            ],
        ),
        "",
        "## Findings",
        "",
        *(md(f) for f in findings(stress)),
    ]
    lines += _search_lines(stress)
    if wall := stress.get("wall_seconds"):
        lines += ["", f"Wall time {md(wall)} s."]
    return "\n".join(lines) + "\n"


def _search_lines(stress: dict[str, Any]) -> list[str]:
    """The adversarial search's section (none when the run did not search)."""
    searches: dict[str, Any] = stress.get("adversarial") or {}
    if not searches:
        return []
    threshold = (stress.get("search_config") or {}).get("threshold", "")
    members = stress.get("adversarial_members") or "heldout"
    return [
        "",
        f"## Adversarial search: the cheapest breaking mix ({md(members)} members)",
        "",
        f"Broken = gold success below {md(threshold)} x the agent's clean success (one-sided "
        "Wilson bound), confirmed by replaying the mix on fresh seeds.",
        "",
        *_table(
            ["agent", "status", "clean", "target", "total severity", "search", "fresh seeds"],
            [
                [
                    md(name),
                    md(s["status"]),
                    pct(s.get("clean")),
                    f"< {pct(s.get('target'))}" if s.get("target") else "",
                    f"{s['total_severity']:.2f}" if s.get("total_severity") is not None else "",
                    pct(s.get("success")),
                    fmt(s["confirm"]) if s.get("confirm") else "",
                ]
                for name, s in searches.items()
            ],
            numeric_from=2,
        ),
    ]


def write_stress_markdown(stress: dict[str, Any], out: Path) -> Path:
    """``out/stress.md``, written atomically (``outputs``)."""
    path = out / STRESS_MD
    outputs.write_text(path, stress_markdown(stress), inside=out)
    return path
