"""Held-out telemetry during training: logged, checkpointed, and invisible to training."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sim2human.agents.policy import PolicyAgent
from sim2human.cli.report import finish_study
from sim2human.experiments.study.condition import run_condition
from sim2human.experiments.study.config import (
    Condition,
    EnsembleConfig,
    EvalConfig,
    SimulatorRef,
    StudyConfig,
)
from sim2human.experiments.study.runner import run_study
from sim2human.metrics import embeddings
from sim2human.scenarios.intake.scenario import IntakeScenario
from sim2human.train.config import PPOConfig


def tiny(every: int) -> StudyConfig:
    return StudyConfig(
        name="tiny",
        seeds=(0,),
        train=PPOConfig(episodes=128, batch_episodes=32, epochs=1, minibatch=256, eval_every=every),
        ensemble=EnsembleConfig(members_per_family=1),
        eval=EvalConfig(episodes_per_member=2, bootstrap=100, curve_episodes_per_member=1),
        conditions=(
            Condition(
                name="frozen-small",
                sampler="fixed",
                simulator=SimulatorRef(family="standard", seed=1, capacity=0.1, temperature=0),
            ),
        ),
    )


def rows(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in (path / "metrics.jsonl").read_text().splitlines()]


def test_probe_logs_heldout_gold_and_checkpoints_without_changing_training(
    tmp_path: Path,
) -> None:
    cfg_on, cfg_off = tiny(2), tiny(0)
    run_condition(cfg_on, cfg_on.conditions[0], 0, tmp_path / "on")
    run_condition(cfg_off, cfg_off.conditions[0], 0, tmp_path / "off")
    on, off = rows(tmp_path / "on"), rows(tmp_path / "off")
    assert on[0]["update"] == -1 and on[0]["d"] == 0.0 and "heldout_gold" in on[0]
    training = on[1:]
    assert [r["update"] for r in training] == [r["update"] for r in off] == [0, 1, 2, 3]
    for a, b in zip(training, off, strict=True):  # the probe never touches training
        assert (a["train_proxy"], a["kl_init"], a["entropy"]) == (
            b["train_proxy"],
            b["kl_init"],
            b["entropy"],
        )
        assert a["d"] == b["d"] and 0 <= a["top_act_share"] <= 1  # type: ignore[operator]
    probed = [r["update"] for r in on if "heldout_gold" in r]
    assert probed == [-1, 1, 3]
    assert all(r["heldout_n"] == 3 for r in on if "heldout_gold" in r)  # 3 held-out members
    for r in on:
        if "checkpoint" in r:
            PolicyAgent.load(tmp_path / "on" / str(r["checkpoint"]), IntakeScenario())
    assert not (tmp_path / "off" / "checkpoints").exists()
    curve = [json.loads(line) for line in (tmp_path / "on" / "heldout_curve.jsonl").open()]
    assert [c["update"] for c in curve] == [1, 3]  # the same probe feeds the learning curve
    assert [c["heldout_gold"] for c in curve] == [
        r["heldout_gold"] for r in on if r["update"] in (1, 3)
    ]


def test_a_study_writes_its_html_report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embeddings, "_load_minilm", lambda: "not needed here")  # lexical: fast
    run_study(tiny(2), tmp_path, workers=1, finish=finish_study)
    html = (tmp_path / "report.html").read_text()
    assert "frozen-small" in html and "Overoptimisation" in html
    assert (tmp_path / "report.md").read_text().startswith("# Study `tiny`")
    assert json.loads((tmp_path / "report.json").read_text())["conditions"][0]["name"] == (
        "frozen-small"
    )
