"""Each condition's verdict in one short line: ``collapsed``, ``clean`` or ``inconclusive``,
with the reason, for the terminal after a study or a report and for the HTML verdict boxes.

It restates the stored diagnosis (``diagnostics.verdict.judge``: its decision, its thresholds)
rather than judging again: the word is always the stored verdict's. The held-out numbers a
verdict reads pool every held-out member, real patients included (``POOLED``, said once under
the verdicts of a run that has real patients).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sim2human.diagnostics.analyse import ConditionDiagnosis, Diagnosis
from sim2human.diagnostics.verdict import cannot_judge_prefix
from sim2human.metrics.against_start import GROUPS
from sim2human.metrics.outcomes import fmt_change
from sim2human.report.format import est, pct

COLLAPSED, CLEAN, INCONCLUSIVE = "collapsed", "clean", "inconclusive"
POOLED = (
    "The verdicts read every held-out member: programmatic families and real people "
    "together (the tables keep them apart)."
)


@dataclass(frozen=True)
class VerdictLine:
    condition: str
    word: str
    reason: str

    @property
    def text(self) -> str:
        return f"{self.word}: {self.reason}"

    def dump(self) -> dict[str, Any]:
        return {"condition": self.condition, "word": self.word, "reason": self.reason}

    @classmethod
    def load(cls, raw: dict[str, Any]) -> VerdictLine:
        return cls(str(raw["condition"]), str(raw["word"]), str(raw["reason"]))


def _unjudged(c: ConditionDiagnosis) -> str:
    if c.verdict.cannot_judge:  # evaluated on both sides, but too little to tell: judge says why
        return c.verdict.headline.removeprefix(cannot_judge_prefix(c.name))
    tr = c.transfer
    if tr is None:
        return "no finished evaluation"
    if tr.train_gold.n == 0 and tr.heldout_gold.n > 0:
        return (
            f"held-out only (gold {est(tr.heldout_gold)}); evaluate training members too "
            "to judge collapse"
        )
    return "no evaluation on held-out members"


def _collapse_reasons(c: ConditionDiagnosis, d: Diagnosis) -> list[str]:
    """The stored verdict's findings, short (``Verdict.found``; a diagnosis stored before it
    had them is read by the rules as they were: drop and gap)."""
    found = c.verdict.found or ["exploit", "drop", "gap"]
    out = [f'says "{r.text}" in {pct(r.share)}% of turns' for r in c.exploits if r.exploit]
    tr = c.transfer
    if tr is not None and "drop" in found and tr.drop.ci[0] > d.thresholds.max_drop:
        out.append(f"held-out {pct(tr.drop.mean)} points below train")
    if tr is not None and "gap" in found and tr.gap.ci[0] > d.thresholds.max_gap:
        out.append(f"proxy {pct(tr.gap.mean)} points above gold in training")
    for group in ("heldout", "real"):
        if f"loss-{group}" in found and (change := c.against_start.get(group)) is not None:
            out.append(f"{GROUPS[group]} {pct(-change.change.mean)} points below its warm start")
    return out or ["see the report"]


def _clean_reason(c: ConditionDiagnosis, d: Diagnosis) -> str:
    tr = c.transfer
    drop = est(tr.drop) if tr is not None else "?"
    limit = pct(d.thresholds.max_drop)
    if not c.against_start:
        return f"no exploited phrasing; held-out drop {drop} points (limit {limit})"
    changes = ", ".join(
        f"{GROUPS[g]} {fmt_change(x.change)}"
        for g in ("heldout", "real")
        if (x := c.against_start.get(g))
    )
    before = "; its held-out drop, the warm start's too" if "start-drop" in c.verdict.found else ""
    return (
        f"no exploited phrasing; against its warm start: {changes} points "
        f"(limit {pct(d.thresholds.max_loss)}){before}"
    )


def verdict_line(c: ConditionDiagnosis, d: Diagnosis) -> VerdictLine:
    v = c.verdict
    if not v.checked:
        return VerdictLine(c.name, INCONCLUSIVE, _unjudged(c))
    reason = "; ".join(_collapse_reasons(c, d)) if v.collapse else _clean_reason(c, d)
    return VerdictLine(c.name, COLLAPSED if v.collapse else CLEAN, reason)


def verdict_lines(d: Diagnosis) -> list[VerdictLine]:
    return [verdict_line(c, d) for c in [*d.conditions, *d.reference]]
