"""Number formatting shared by the HTML and markdown reports."""

from __future__ import annotations

import math

from sim2human.metrics.outcomes import Estimate


def pct(x: float | None) -> str:
    """Percentage points, no decimals; empty for a missing value."""
    return "" if x is None or math.isnan(x) else f"{100 * x:.0f}"


def num(x: float | None, digits: int = 2) -> str:
    return "" if x is None or math.isnan(x) else f"{x:.{digits}f}"


def est(e: Estimate | None) -> str:
    """``mean [lo, hi]`` in percentage points."""
    if e is None or e.n == 0:
        return ""
    return f"{pct(e.mean)} [{pct(e.ci[0])}, {pct(e.ci[1])}]"
