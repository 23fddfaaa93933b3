"""The pizza order is a catalog scenario like intake: a study names it, and every piece that reads
a run (report, diagnose, stress) works on it. It has its own act ids and no style acts, which
crashed a study before (no trigger phrasing to draw; the scripted agent knew intake's ids)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from sim2human.cli.app import main
from sim2human.experiments.study.results import load_study_result
from sim2human.scenarios.catalog import get_scenario
from sim2human.store.rundir import read_episodes
from tiny_study import TINY


@pytest.fixture
def pizza_run(tmp_path: Path) -> Path:
    study = tmp_path / "pizza.yaml"
    study.write_text(yaml.safe_dump({**TINY, "name": "pizza-tiny", "scenario": "pizza"}))
    run = tmp_path / "run"
    assert main(["study", str(study), "--out", str(run), "--workers", "1"]) == 0
    return run


def test_a_pizza_study_runs_end_to_end(pizza_run: Path) -> None:
    study = load_study_result(pizza_run)
    assert study.scenario == "pizza"
    assert [r.name for r in study.conditions] == ["frozen-small", "ensemble-uniform"]
    fields = set(get_scenario("pizza").fields)
    episodes = list(read_episodes(next(pizza_run.rglob("episodes.jsonl"))))
    assert episodes and all(set(e.profile) == fields for e in episodes)
    [reference] = study.reference
    assert reference.name == "scripted"
    assert reference.heldout_gold.mean > 0.5  # the reference agent solves the task
    assert main(["report", str(pizza_run)]) == 0
    assert (pizza_run / "report.html").is_file()
    assert main(["diagnose", str(pizza_run)]) == 0
    cheap = ["--no-search", "--grid", "1", "--perturbations", "typos", "--episodes-per-member", "1"]
    assert main(["stress", str(pizza_run), "--workers", "1", *cheap]) == 0
    assert (pizza_run / "stress.json").is_file()
