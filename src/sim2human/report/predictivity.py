"""``predictivity.md`` and the report's "Which simulators predict people" section, from
``predictivity.json`` (``experiments.research.predictivity``)."""

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
    """Which family ranks agents as people do, which scores them closest, and whether the data
    support either over every other row."""
    return " ".join(
        _verdict(table.get(key), what, unit)
        for key, what, unit in (
            ("best", "Highest Spearman", ""),
            ("closest", "Smallest gap", " points"),
        )
    )


def _verdict(best: dict[str, Any] | None, what: str, unit: str) -> str:
    if best is None:
        return f"{what}: none defined."
    name = md_code(best["family"])
    over = best["over"]
    if not over:
        return f"{what}: {name}, the only row with one."
    if best["supported"]:
        return f"{what}: {name}, ahead of every other row (paired 95% CIs of the margin above 0)."
    # the rival the data separate least: the lowest lower bound of the margin's CI
    other, m = min(over.items(), key=lambda kv: (kv[1]["ci"] or [kv[1]["difference"]])[0])
    scale = 100 if unit else 1
    digits = 0 if unit else 2
    ci = m["ci"]
    span = f"{scale * m['difference']:+.{digits}f}"
    if ci:
        span += f" [{scale * ci[0]:+.{digits}f}, {scale * ci[1]:+.{digits}f}]{unit}"
    return (
        f"{what}: {name}, but the data do not support a winner: its paired margin over "
        f"{md_code(other)} is {span} (a CI that reaches 0)."
    )


def _table(table: dict[str, Any], title: str) -> list[str]:
    return [f"## {title}: {pool(table)}", "", *rows(table), "", verdict(table), ""]


def pool(table: dict[str, Any]) -> str:
    """The pool a table is over: how many agents, and their gold with the real patients."""
    return f"{table['agents']} agents, real patients' gold {100 * table['people_gold']:.0f}%"


def rows(table: dict[str, Any]) -> list[str]:
    """The table itself, a header and one Markdown row per family or mixture."""
    head = "| " + " | ".join(map(md, COLUMNS)) + " |"
    return [
        head,
        "|---|---|" + "---:|" * (len(COLUMNS) - 2),
        *("| " + " | ".join(cells(r)) + " |" for r in table["families"]),
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
