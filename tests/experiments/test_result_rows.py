"""study.json's numbers as rows: every measured field of a row is a row, old files derive
them, a newer layout is one clear error."""

from __future__ import annotations

import types
import typing
from typing import Any

import pytest

from sim2human.errors import RunDirError
from sim2human.experiments.study.result_rows import BY_FAMILY, BY_SEED, ESTIMATES, ResultRow
from sim2human.experiments.study.results import ConditionRow, StudyResult, parse_study_result
from sim2human.metrics.outcomes import Estimate

NOT_MEASURES = {"real_reply_shares"}
"""Mappings of a row that are not a measure by split (the share of real replies of each kind)."""


def _kinds(annotation: Any) -> set[Any]:
    args = typing.get_args(annotation) if isinstance(annotation, types.UnionType) else ()
    return set(args) or {annotation}


def test_every_measured_field_of_a_row_is_a_row() -> None:
    estimates = {
        n for n, f in ConditionRow.model_fields.items() if Estimate in _kinds(f.annotation)
    }
    means = {
        n for n, f in ConditionRow.model_fields.items() if dict[str, float] in _kinds(f.annotation)
    }
    assert estimates == set(ESTIMATES)
    assert means - NOT_MEASURES == set(BY_FAMILY) | set(BY_SEED)


def _est(mean: float) -> dict[str, Any]:
    return {"mean": mean, "ci": [mean - 0.1, mean + 0.1], "n": 40}


def _old_file() -> dict[str, Any]:
    """A study.json as written before rows (schema version 1)."""
    row = {
        "name": "uniform",
        "episodes_trained": 64,
        "train_proxy": _est(0.9),
        "train_gold": _est(0.8),
        "heldout_proxy": _est(0.7),
        "heldout_gold": _est(0.5),
        "heldout_member_std": 0.1,
        "exploit_rate": 0.0,
        "heldout_gold_by_family": {"noisy-line": 0.4, "terse-guarded": 0.6},
        "heldout_gold_real_by_seed": {"0": 0.3, "1": 0.5},
        "sampler": "uniform",
        "role": "baseline",
    }
    return {"study": "s", "scenario": "intake", "seeds": [0, 1], "wall_seconds": 1.0,
            "conditions": [row]}  # fmt: skip


def test_an_old_file_gives_its_rows_and_is_written_back_unchanged() -> None:
    raw = _old_file()
    study = parse_study_result(raw, "study.json")
    assert study.schema_version == 1 and study.rows == []
    assert set(study.dump()) == set(raw)  # written back, nothing is added
    got = {(r.split, r.members, r.metric, r.seed): r.mean for r in study.measures}
    assert got == {
        ("train", "all", "proxy", None): 0.9,
        ("train", "all", "success", None): 0.8,
        ("heldout", "all", "proxy", None): 0.7,
        ("heldout", "all", "success", None): 0.5,
        ("heldout", "family:noisy-line", "success", None): 0.4,
        ("heldout", "family:terse-guarded", "success", None): 0.6,
        ("heldout", "real", "success", 0): 0.3,
        ("heldout", "real", "success", 1): 0.5,
    }
    held = next(
        r for r in study.measures if (r.split, r.members, r.metric) == ("heldout", "all", "success")
    )
    assert (held.agent, held.ci, held.n) == ("uniform", (0.4, 0.6), 40)


def test_the_current_layout_stores_the_rows() -> None:
    study = parse_study_result(_old_file(), "study.json").with_rows()
    stored = study.dump()
    assert stored["schema_version"] == 2
    assert all(set(r) == set(ResultRow.model_fields) for r in stored["rows"])  # every column
    again = StudyResult.model_validate(stored)
    assert again.rows == again.conditions[0].rows() == again.measures


def test_a_newer_layout_is_one_clear_error() -> None:
    with pytest.raises(RunDirError, match="schema_version 3 is newer than this sim2human reads"):
        parse_study_result({**_old_file(), "schema_version": 3}, "run/study.json")
