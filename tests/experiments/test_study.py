"""A tiny end-to-end study: files on disk, identical numbers on rerun, interrupts keep episodes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sim2human.cli.report import finish_study
from sim2human.experiments.study.condition import run_condition
from sim2human.experiments.study.config import parse_study
from sim2human.experiments.study.results import load_study_result
from sim2human.experiments.study.runner import run_study
from sim2human.store.rundir import read_episodes
from tiny_study import TINY, study_numbers


def test_tiny_study_end_to_end_is_deterministic(tmp_path: Path) -> None:
    cfg = parse_study(TINY)
    first = run_study(cfg, tmp_path / "a", workers=1, finish=finish_study)
    second = run_study(cfg, tmp_path / "b", workers=2)
    assert study_numbers(first) == study_numbers(second)

    root = tmp_path / "a"
    assert (root / "study.json").exists() and (root / "report.md").exists()
    assert (root / "diagnosis.json").exists()  # the study diagnosed itself, once
    # one bootstrap: the report's CIs are study.json's (same function, clusters and replicates)
    report = json.loads((root / "report.json").read_text())
    for row, diag in zip(first.conditions, report["conditions"], strict=True):
        assert diag["transfer"]["heldout_gold"]["ci"] == list(row.heldout_gold.ci)
        assert diag["transfer"]["train_proxy"]["ci"] == list(row.train_proxy.ci)
    assert study_numbers(load_study_result(root)) == study_numbers(first)  # StudyResult round trip
    stored = json.loads((root / "study.json").read_text())
    assert stored["schema_version"] == 2  # the numbers as rows beside the fields
    held = [r for r in stored["rows"] if (r["split"], r["members"], r["metric"]) == (
        "heldout", "all", "success")]  # fmt: skip
    assert [(r["agent"], r["mean"]) for r in held] == [
        (row.name, row.heldout_gold.mean) for row in first.all_rows
    ]
    names = [c.name for c in first.conditions]
    assert names == ["frozen-small", "ensemble-uniform"]
    assert [c.role for c in first.conditions] == ["frozen", "baseline"]
    assert first.reference[0].name == "scripted"
    for row in first.conditions:
        for est in (row.train_proxy, row.train_gold, row.heldout_gold):
            lo, hi = est.ci
            assert lo <= est.mean <= hi
        assert 0.0 <= row.exploit_rate <= 1.0
    sub = root / "conditions" / "frozen-small" / "seed-0"
    for name in ("config.json", "episodes.jsonl", "metrics.jsonl", "checkpoint.pt", "members.json"):
        assert (sub / name).exists(), name
    episodes = read_episodes(sub / "episodes.jsonl")
    held = [e for e in episodes if e.split == "heldout"]
    assert held and {e.family for e in held} == {"elderly-confused", "noisy-line", "terse-guarded"}
    assert all(e.split == "train" for e in episodes if e.phase == "train")


def test_interrupting_keeps_every_finished_episode(tmp_path: Path) -> None:
    cfg = parse_study({**TINY, "train": {"episodes": 256, "batch_episodes": 32}})
    seen = 0

    def progress(n: int) -> None:
        nonlocal seen
        seen += n
        if seen >= 96:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_condition(cfg, cfg.conditions[1], 0, tmp_path, progress=progress)
    episodes = read_episodes(tmp_path / "episodes.jsonl")
    assert len(episodes) == 32  # the first update's batch is logged, and is whole
    assert len((tmp_path / "metrics.jsonl").read_text().splitlines()) == 3


def test_a_perturb_ramp_opens_over_the_sub_run_and_is_logged(tmp_path: Path) -> None:
    ramped = {
        "name": "ens+ramp",
        "sampler": "uniform",
        "perturb": {"typos": [0, 0.5]},
        "perturb_ramp": 0.5,
    }
    cfg = parse_study(
        {
            **TINY,
            "train": {"episodes": 128, "batch_episodes": 32, "epochs": 1},
            "conditions": [ramped],
        }
    )
    run_condition(cfg, cfg.conditions[0], 0, tmp_path)
    rows = [json.loads(x) for x in (tmp_path / "sampler.jsonl").read_text().splitlines()]
    # the level for the next batch, after 32, 64, 96, 128 of 128 episodes (open after 64)
    assert [r["perturb_level"] for r in rows] == [0.5, 1.0, 1.0, 1.0]
    config = json.loads((tmp_path / "config.json").read_text())
    assert config["condition"]["perturb_ramp"] == 0.5


def test_a_sub_run_says_where_its_time_went(tmp_path: Path) -> None:
    """``summary.json``'s ``phase_seconds``: start, training play, the policy's inference, the
    updates, the per-update logging and each evaluation split, within the sub-run's wall time
    (what ``benchmarks/bench_demo.py`` adds up by phase)."""
    cfg = parse_study(TINY)
    cond = next(c for c in cfg.conditions if c.name == "ensemble-uniform")
    out = tmp_path / "sub"
    out.mkdir()
    summary = run_condition(cfg, cond, 0, out)
    phases = summary["phase_seconds"]
    assert list(phases) == [
        "start", "play", "policy", "update", "probe", "eval_train", "eval_heldout"
    ]  # fmt: skip
    assert all(v > 0 for v in phases.values()), phases
    assert sum(phases.values()) <= summary["wall_seconds"] + 0.01
    assert json.loads((out / "summary.json").read_text())["phase_seconds"] == phases
    work = summary["phase_work"]  # turns, decisions, minibatch steps (tests/train/test_train.py)
    assert list(work) == ["play", "policy", "update"] and work["play"] > work["policy"] > 0
