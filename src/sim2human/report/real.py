"""The study's "real patients" column: held-out gold on ``replay`` families (ACI-Bench)."""

from __future__ import annotations

from sim2human.experiments.results import StudyResult
from sim2human.report.format import est, md


def real_section(study: StudyResult) -> list[str]:
    """A table of every condition on real patients next to the programmatic held-out families;
    empty when the study held out no ``replay`` family."""
    rows = [r for r in study.all_rows if r.heldout_gold_real is not None]
    if not rows:
        return []
    lines = [
        "## Real patients",
        "",
        "Held-out gold on replayed ACI-Bench patients (their own words, a card derived from the "
        "visit) next to the programmatic held-out families. The scripted agent's score says how "
        "solvable the replayed calls are.",
        "",
        "| condition | held-out gold, programmatic | real patients: gold | real patients: "
        "fields right | real patients: proxy |",
        "|---|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {md(r.name)} | {est(r.heldout_gold_programmatic, n=True)} | "
            f"{est(r.heldout_gold_real, n=True)} | {est(r.heldout_fields_real, n=True)} | "
            f"{est(r.heldout_proxy_real, n=True)} |"
        )
    # what a replayed patient could say verbatim depends on what the agent asked: per agent
    shared = [(r.name, r.real_reply_shares) for r in rows if r.real_reply_shares]
    if shared:
        lines += ["", "Replayed replies, by agent:", ""]
        for name, shares in shared:
            said = ", ".join(f"{md(k)} {100 * v:.0f}%" for k, v in shares.items())
            lines.append(f"- {md(name)}: {said}")
    return [*lines, ""]
