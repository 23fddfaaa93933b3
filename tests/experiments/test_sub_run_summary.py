"""``summary.json`` typed (``SubRunSummary``): the study's writers keep the keys they always
wrote, the file reads back to the same model, and a reader takes other shapes or says what is
wrong with the file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from sim2human.errors import RunDirError
from sim2human.experiments.study.condition import reference_scripted, run_condition
from sim2human.experiments.study.config import parse_study
from sim2human.experiments.study.sub_run_summary import SubRunSummary
from tiny_study import TINY

SUB_RUN_KEYS = [
    "train",
    "heldout",
    "heldout_by_family",
    "heldout_member_std",
    "exploit_rate",
    "condition",
    "seed",
    "episodes_trained",
    "wall_seconds",
    "phase_seconds",
    "phase_work",
    "episodes_logged",
]
"""What a trained sub-run's summary.json held before it was typed (``phase_work`` since this
stop), in its order: scripts and dashboards read these names."""


def test_a_sub_run_writes_the_keys_it_always_wrote(tmp_path: Path) -> None:
    cfg = parse_study(TINY)
    cond = next(c for c in cfg.conditions if c.name == "ensemble-uniform")
    returned = run_condition(cfg, cond, 0, tmp_path)
    stored = json.loads((tmp_path / "summary.json").read_text())
    assert list(stored) == SUB_RUN_KEYS and stored == returned
    assert set(stored["train"]) == {"n", "gold_success", "field_accuracy", "dropped_rate",
                                    "proxy", "turns"}  # fmt: skip
    typed = SubRunSummary.read(tmp_path / "summary.json")
    assert typed.document() == stored  # read back, written again: the same document
    assert typed.condition == "ensemble-uniform" and typed.episodes_logged == sum(
        1 for _ in (tmp_path / "episodes.jsonl").open()
    )


def test_the_reference_writes_its_own_keys(tmp_path: Path) -> None:
    cfg = parse_study(TINY)
    stored = reference_scripted(cfg, tmp_path)
    assert list(stored) == [
        *SUB_RUN_KEYS[:8],
        "train_by_family",
        "episodes_logged",
    ]  # no training, so no wall or phases of its own
    assert set(stored["train_by_family"]) == set(cfg.ensemble.train)
    assert stored == json.loads((tmp_path / "summary.json").read_text())


def test_a_reader_takes_other_shapes_and_names_a_bad_file(tmp_path: Path) -> None:
    other = {"condition": "llm", "seed": 0, "rows": [1, 2], "population_hash": "ab"}
    typed = SubRunSummary.of(other)  # eval-agent's keys: left out of the typed view
    assert typed.condition == "llm" and typed.heldout is None
    assert typed.document() == {"condition": "llm", "seed": 0}
    path = tmp_path / "summary.json"
    path.write_text("[1, 2]")
    with pytest.raises(RunDirError, match=r"summary\.json: not a JSON object"):
        SubRunSummary.read(path)
    path.write_text(json.dumps({"seed": "first"}))
    with pytest.raises(RunDirError, match=r"summary\.json: seed: .*integer"):
        SubRunSummary.read(path)


def test_a_misspelt_key_is_refused() -> None:
    with pytest.raises(ValidationError, match="conditoin"):
        SubRunSummary.model_validate({"conditoin": "x"})
