"""Metrics over stored episodes and texts: pure functions, no I/O."""

from __future__ import annotations

from sim2human.metrics.diversity import (
    DiversitySummary,
    distinct_n,
    diversity_summary,
    ensemble_diversity,
    self_bleu,
    vendi_score,
)
from sim2human.metrics.embeddings import embed

__all__ = [
    "DiversitySummary",
    "distinct_n",
    "diversity_summary",
    "embed",
    "ensemble_diversity",
    "self_bleu",
    "vendi_score",
]
