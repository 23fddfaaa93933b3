"""The report's "against the warm start" section: each language-model condition's gold beside
its warm start's on the same calls (``diagnostics``' ``against_start``), so a gap the table
shows is read as what GRPO did or as what the supervised start had already."""

from __future__ import annotations

from sim2human.diagnostics.analyse import Diagnosis
from sim2human.metrics.against_start import GROUPS
from sim2human.metrics.outcomes import Estimate
from sim2human.report.format import md

INTRO = (
    "Each condition's gold beside its warm start's (the `warm-start` reference agent) on the "
    "same calls: the same members, profiles and study seed. The change is the mean over calls "
    "of trained minus warm start, with its 95% interval (resampling members, then calls)."
)


def against_start_section(d: Diagnosis) -> list[str]:
    """The section as Markdown; empty for a run without a warm-start reference agent."""
    rows = [(c.name, g, ch) for c in d.conditions for g in GROUPS if (ch := c.against_start.get(g))]
    if not rows:
        return []
    lines = [
        "## Against the warm start",
        "",
        INTRO,
        "",
        "| condition | callers | warm start | trained | change | calls |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for name, group, ch in rows:
        lo, hi = ch.change.ci
        lines.append(
            f"| {md(name)} | {GROUPS[group]} | {100 * ch.start:.0f} | {100 * ch.trained:.0f} | "
            f"{100 * ch.change.mean:+.0f} [{100 * lo:+.0f}, {100 * hi:+.0f}] | {ch.change.n} |"
        )
    shares = [(c.name, q) for c in d.conditions if (q := c.quirk_share_against_start)]
    if shares:
        lines += [
            "",
            "Held-out turns that say a phrasing the condition's training members over-reward:",
            "",
        ]
        for name, (start, own) in shares:
            lines.append(
                f"- {md(name)}: {_share(own)} of its turns; {_share(start)} of its warm start's"
            )
    return [*lines, ""]


def _share(e: Estimate) -> str:
    return f"{100 * e.mean:.0f}% [{100 * e.ci[0]:.0f}, {100 * e.ci[1]:.0f}] (n={e.n})"
