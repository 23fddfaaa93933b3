"""The report's LLM section reads study.json rows and says only what their CIs support."""

from __future__ import annotations

from typing import Any

from planted_runs import study_result, study_row
from sim2human.report.llm import llm_section


def est(mean: float, lo: float, hi: float, n: int = 12) -> dict[str, Any]:
    return {"mean": mean, "ci": [lo, hi], "n": n}


def row(name: str, llm_gold: float, llm_fields: tuple[float, float, float]) -> dict[str, Any]:
    return study_row(
        name,
        heldout_gold_persona=est(0.3, 0.2, 0.4),
        heldout_gold_llm=est(llm_gold, 0, llm_gold),
        heldout_fields_llm=est(*llm_fields),
        heldout_fields_persona=est(0.7, 0.6, 0.8),
        llm_episodes=12,
        llm_errors=0,
        llm_replies=100,
        llm_role_retries=0,
        llm_role_failures=40,
        llm_judge_failures=0,
    )


def test_all_zero_llm_gold_is_said_and_fields_right_ranks_instead() -> None:
    study = study_result(row("a", 0.0, (0.5, 0.45, 0.55)), row("b", 0.0, (0.2, 0.1, 0.3)))
    text = "\n".join(llm_section(study))
    assert "No agent, the scripted reference included, completed a call" in text
    assert "Held-out LLM gold: best" not in text  # no ranking of zeros
    assert (
        "Held-out LLM fields right: best `a` 50, worst `b` 20 (the 95% CIs do not overlap)" in text
    )


def test_overlapping_cis_are_no_supported_difference() -> None:
    study = study_result(row("a", 0.2, (0.5, 0.3, 0.7)), row("b", 0.1, (0.4, 0.2, 0.6)))
    text = "\n".join(llm_section(study))
    assert "completed a call" not in text
    assert "Held-out LLM gold: best `a` 20, worst `b` 10 (the 95% CIs overlap" in text
    assert "fields right: best `a` 50, worst `b` 40 (the 95% CIs overlap" in text
