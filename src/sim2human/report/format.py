"""Formatting for the reports: ``est`` is the one estimate formatter (it lives beside
``Estimate`` in ``metrics/outcomes.py``, so that lower layers' text, such as the diagnosis
verdicts, is written by it too), ``pct`` the one percentage, and ``md``/``md_code`` the one
escape of run-directory text for Markdown (``sim2human.escape``, at the bottom layer so that
``human.md`` uses it too)."""

from __future__ import annotations

import math

from sim2human.escape import md, md_code
from sim2human.metrics.outcomes import fmt_estimate as est
from sim2human.metrics.outcomes import fmt_pct as pct

__all__ = ["est", "md", "md_code", "num", "pct"]


def num(x: float | None, digits: int = 2) -> str:
    return "" if x is None or math.isnan(x) else f"{x:.{digits}f}"
