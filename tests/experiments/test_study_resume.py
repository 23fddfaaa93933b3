"""Resuming a study: finished sub-runs are kept, broken and torn ones rerun, numbers as straight
through; another study's sub-run is refused."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from rich.console import Console

from sim2human.cli.app import main
from sim2human.cli.report import finish_study
from sim2human.errors import RunDirError, UsageError
from sim2human.experiments.study.config import parse_study
from sim2human.experiments.study.results import StudyResult
from sim2human.experiments.study.runner import run_study
from sim2human.store.layout import EPISODES, SUMMARY
from tiny_study import study_numbers

TINY: dict[str, Any] = {
    "name": "tiny-adaptive",
    "seeds": [0],
    "train": {"episodes": 64, "batch_episodes": 32, "epochs": 1, "eval_every": 1},
    "ensemble": {"members_per_family": 1},
    "eval": {"episodes_per_member": 2, "bootstrap": 100, "curve_episodes_per_member": 1},
    "conditions": [
        {"name": "ensemble-uniform", "sampler": "uniform"},
        {"name": "ensemble-plr", "sampler": "plr", "sampler_args": {"min_levels": 4}},
    ],
}


@pytest.fixture(scope="module")
def straight_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[StudyResult, Path]:
    """The study run straight through (and reported), once for this module."""
    out = tmp_path_factory.mktemp("straight") / "a"
    return run_study(parse_study(TINY), out, workers=1, finish=finish_study), out


def test_resume_gives_the_numbers_of_a_straight_run(
    straight_run: tuple[StudyResult, Path], tmp_path: Path
) -> None:
    cfg = parse_study(TINY)
    straight, a = straight_run
    row = straight.row("ensemble-plr")
    assert row is not None and row.heldout_worst_decile is not None and row.heldout_curve
    assert "## Adaptive ensembles" in (a / "report.md").read_text()
    assert (a / "adaptive" / "adaptive.html").exists()

    # a copy interrupted mid-way: one sub-run unfinished (no summary, a torn episode log)
    shutil.copytree(a, tmp_path / "b")
    broken = tmp_path / "b" / "conditions" / "ensemble-plr" / "seed-0"
    (broken / "summary.json").unlink()
    (broken / "episodes.jsonl").write_text('{"id": "torn')
    (tmp_path / "b" / "study.json").unlink()
    kept = tmp_path / "b" / "conditions" / "ensemble-uniform" / "seed-0" / "summary.json"
    before = kept.stat().st_mtime_ns

    # started by a version that stored no roles: the same study, so it resumes
    stored = tmp_path / "b" / "config.yaml"
    old = yaml.safe_load(stored.read_text())
    for c in old["conditions"]:
        del c["role"], c["compare_to"]
    stored.write_text(yaml.safe_dump(old, sort_keys=False))

    resumed = run_study(cfg, tmp_path / "b", workers=1, resume=True)
    assert study_numbers(resumed) == study_numbers(straight)
    assert kept.stat().st_mtime_ns == before  # the finished sub-run was not rerun


def test_resume_runs_a_finished_sub_run_with_a_torn_log_again(
    straight_run: tuple[StudyResult, Path], tmp_path: Path
) -> None:
    """Finding 8: half of a finished sub-run's log gone; its summary says what it logged."""
    straight, a = straight_run
    copy = tmp_path / "c"
    shutil.copytree(a, copy)
    log = copy / "conditions" / "ensemble-uniform" / "seed-0" / EPISODES
    data = log.read_bytes()
    log.write_bytes(data[: len(data) // 2])
    kept = copy / "conditions" / "ensemble-plr" / "seed-0" / SUMMARY
    before = kept.stat().st_mtime_ns

    notes = io.StringIO()
    console = Console(file=notes, width=400)
    resumed = run_study(parse_study(TINY), copy, workers=1, resume=True, console=console)
    said = notes.getvalue()
    assert (
        f"note: {copy}: conditions/ensemble-uniform/seed-0: torn: its episodes.jsonl holds" in said
    )
    assert "that summary.json records; running it again" in said
    assert study_numbers(resumed) == study_numbers(straight)
    assert log.read_bytes() == (a / log.relative_to(copy)).read_bytes()
    assert kept.stat().st_mtime_ns == before  # the whole one was kept


def test_resume_refuses_a_sub_run_of_another_scenario(
    straight_run: tuple[StudyResult, Path], tmp_path: Path
) -> None:
    _, a = straight_run
    copy = tmp_path / "d"
    shutil.copytree(a, copy)
    log = copy / "conditions" / "ensemble-plr" / "seed-0" / EPISODES
    log.write_text(log.read_text().replace('"scenario":"intake"', '"scenario":"pizza"'))
    study_json = (copy / "study.json").read_bytes()
    with pytest.raises(RunDirError, match="is of scenario 'pizza', but the study's scenario is"):
        run_study(parse_study(TINY), copy, workers=1, resume=True)
    assert "pizza" in log.read_text()  # refused before anything was cleared or rewritten
    assert (copy / "study.json").read_bytes() == study_json


def test_resume_may_add_conditions_and_reference_agents_and_nothing_else(
    straight_run: tuple[StudyResult, Path], tmp_path: Path
) -> None:
    """A run started without the PLR condition and the scripted reference resumes with both:
    the other condition's sub-run kept, the new ones run beside it, the numbers the straight
    run's. Any other change is refused before anything is written."""
    straight, a = straight_run
    copy = tmp_path / "e"
    shutil.copytree(a, copy)
    stored = copy / "config.yaml"
    old = yaml.safe_load(stored.read_text())
    old["reference_agents"] = []
    old["conditions"] = [c for c in old["conditions"] if c["name"] != "ensemble-plr"]
    stored.write_text(yaml.safe_dump(old, sort_keys=False))
    for gone in ("reference", "conditions/ensemble-plr", "adaptive"):
        shutil.rmtree(copy / gone)
    (copy / "study.json").unlink()
    kept = copy / "conditions" / "ensemble-uniform" / "seed-0" / SUMMARY
    before = kept.stat().st_mtime_ns

    other = parse_study({**TINY, "eval": {**TINY["eval"], "bootstrap": 200}})
    with pytest.raises(UsageError, match="conditions and reference agents may be added"):
        run_study(other, copy, workers=1, resume=True)
    changed = [{**TINY["conditions"][0], "sampler": "randomized"}, TINY["conditions"][1]]
    with pytest.raises(UsageError, match="differs from the one it was started with"):
        run_study(parse_study({**TINY, "conditions": changed}), copy, workers=1, resume=True)
    assert yaml.safe_load(stored.read_text())["reference_agents"] == []  # nothing written
    assert (copy / "diversity.json").exists()

    notes = io.StringIO()
    console = Console(file=notes, width=400)
    resumed = run_study(parse_study(TINY), copy, workers=1, resume=True, console=console)
    said = notes.getvalue()
    assert f"{copy}: resuming with condition ensemble-plr, reference agent scripted added" in said
    assert "diversity.json: made again (it reads every condition)" in said
    assert study_numbers(resumed) == study_numbers(straight)
    assert [r.name for r in resumed.reference] == ["scripted"] and kept.stat().st_mtime_ns == before
    assert yaml.safe_load(stored.read_text())["reference_agents"] == ["scripted"]


def test_resume_guards(tmp_path: Path) -> None:
    cfg = parse_study(TINY)
    with pytest.raises(UsageError, match="nothing to resume"):
        run_study(cfg, tmp_path / "none", resume=True)
    (tmp_path / "x" / "conditions").mkdir(parents=True)
    with pytest.raises(UsageError, match="--resume"):
        run_study(cfg, tmp_path / "x")
    (tmp_path / "x" / "config.yaml").write_text("name: other\n")
    with pytest.raises(UsageError, match="differs"):
        run_study(cfg, tmp_path / "x", resume=True)


def test_cli_resume_needs_out(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(json.dumps(TINY))
    assert main(["study", str(path), "--resume"]) == 2
