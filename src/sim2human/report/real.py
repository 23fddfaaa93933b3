"""The study's "real patients" column: held-out gold on ``replay`` families (ACI-Bench)."""

from __future__ import annotations

from typing import Any

from sim2human.report.format import pct


def _fmt(est: dict[str, Any]) -> str:
    lo, hi = est["ci"]
    return f"{pct(est['mean'])} [{pct(lo)}, {pct(hi)}] (n={est['n']})"


def real_section(study: dict[str, Any]) -> list[str]:
    """A table of every condition on real patients next to the programmatic held-out families;
    empty when the study held out no ``replay`` family."""
    rows = [
        r for r in [*study["conditions"], *study.get("reference", [])] if "heldout_gold_real" in r
    ]
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
            f"| {r['name']} | {_fmt(r['heldout_gold_programmatic'])} | "
            f"{_fmt(r['heldout_gold_real'])} | {_fmt(r['heldout_fields_real'])} | "
            f"{_fmt(r['heldout_proxy_real'])} |"
        )
    shares = next((r["real_reply_shares"] for r in rows if r.get("real_reply_shares")), None)
    if shares:
        said = ", ".join(f"{k} {100 * v:.0f}%" for k, v in shares.items())
        lines += ["", f"Replayed replies (first row): {said}."]
    return [*lines, ""]
