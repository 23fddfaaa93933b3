"""``predictivity.md`` and the report's "Which simulators predict people" section, from
``predictivity.json`` (``experiments.predictivity``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sim2human.escape import md, md_code

COLUMNS = (
    "simulator family",
    "split",
    "members",
    "simulator gold",
    "Spearman vs real patients",
    "mean |gap| (points)",
)


def _num(v: float | None, ci: Sequence[float] | None, scale: float = 1.0) -> str:
    if v is None:
        return "n/a"
    digits = 2 if scale == 1 else 0
    text = f"{scale * v:.{digits}f}"
    if ci is not None:
        text += f" [{scale * ci[0]:.{digits}f}, {scale * ci[1]:.{digits}f}]"
    return text


def cells(row: dict[str, Any]) -> list[str]:
    """One table row: a family (or mixture) against the real patients."""
    return [
        md(row["family"]),
        md(row["split"]),
        str(row["members"]),
        f"{100 * row['sim_gold']:.0f}",
        _num(row["spearman"], row["spearman_ci"]),
        _num(row["mean_abs_gap"], row["mean_abs_gap_ci"], 100),
    ]


def verdict(table: dict[str, Any]) -> str:
    """Which family predicts people best, and whether the data supports it over every other."""
    best = table["best"]
    if best is None:
        return "No family's gold has a rank correlation with the real patients' (constant ranks)."
    name = md_code(best["family"])
    over = best["over"]
    closest = min(over.items(), key=lambda kv: kv[1]["difference"]) if over else None
    if best["supported"]:
        return (
            f"Best: {name}; its Spearman beats every other row's (paired 95% CIs of the "
            "difference all above 0)."
        )
    if closest is None:
        return f"Best: {name}, the only row with a defined Spearman."
    other, m = closest
    ci = m["ci"]
    span = f"{m['difference']:+.2f} [{ci[0]:+.2f}, {ci[1]:+.2f}]" if ci else "n/a"
    return (
        f"Highest Spearman: {name}, but the data do not support a winner: its paired "
        f"difference with {md_code(other)} is {span} (the CI includes 0)."
    )


def _table(table: dict[str, Any], title: str) -> list[str]:
    head = "| " + " | ".join(COLUMNS) + " |"
    return [
        f"## {title}: {table['agents']} agents, real patients' gold "
        f"{100 * table['people_gold']:.0f}%",
        "",
        head,
        "|---|---|" + "---:|" * (len(COLUMNS) - 2),
        *("| " + " | ".join(cells(r)) + " |" for r in table["families"]),
        "",
        verdict(table),
        "",
    ]


def markdown(result: dict[str, Any], level: int = 1) -> list[str]:
    """The page (``level`` 1) or a report section (2: every heading one level down)."""
    b = result["budget"]
    lines = [
        "# Which simulators predict people",
        "",
        f"Every agent of the pool (final and probe checkpoints of each sub-run) played each "
        f"simulator family's members ({b['per_member']} episodes each) and all "
        f"{result['visits']} replayed real patients of {md_code(result['people'])} "
        f"({b['per_visit']} per visit). Per family, across agents: the Spearman rank "
        "correlation of its gold with the real patients' gold, and the mean absolute gap "
        f"(simulator gold %, points). {md(result['note'])}.",
        "",
        *_table(result["all_agents"], "All agents"),
    ]
    if result.get("not_frozen") is not None:
        lines += _table(result["not_frozen"], "Agents of conditions not frozen")
    if level > 1:
        lines = [("#" * (level - 1) + line if line.startswith("#") else line) for line in lines]
    return lines
