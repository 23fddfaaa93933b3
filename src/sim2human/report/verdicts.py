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
    out = [f'says "{r.text}" in {pct(r.share)}% of turns' for r in c.exploits if r.exploit]
    tr = c.transfer
    if tr is not None and tr.drop.ci[0] > d.thresholds.max_drop:
        out.append(f"held-out {pct(tr.drop.mean)} points below train")
    if tr is not None and tr.gap.ci[0] > d.thresholds.max_gap:
        out.append(f"proxy {pct(tr.gap.mean)} points above gold in training")
    return out or ["see the report"]


def verdict_line(c: ConditionDiagnosis, d: Diagnosis) -> VerdictLine:
    v = c.verdict
    if not v.checked:
        return VerdictLine(c.name, INCONCLUSIVE, _unjudged(c))
    if v.collapse:
        reason = "; ".join(_collapse_reasons(c, d))
    else:
        tr = c.transfer
        drop = est(tr.drop) if tr is not None else "?"
        reason = (
            f"no exploited phrasing; held-out drop {drop} points "
            f"(limit {pct(d.thresholds.max_drop)})"
        )
    return VerdictLine(c.name, COLLAPSED if v.collapse else CLEAN, reason)


def verdict_lines(d: Diagnosis) -> list[VerdictLine]:
    return [verdict_line(c, d) for c in [*d.conditions, *d.reference]]
