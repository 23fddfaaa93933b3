"""A study is resolved once in its driver (``StudyPlan``: its corpora decided, what it left out
said once, its endpoints listed) and its world is built once per process: in the driver (for
that plan) and in a worker that runs several of its jobs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from sim2human.cli.app import main
from sim2human.experiments.study import runner
from sim2human.experiments.study.config import parse_study
from sim2human.experiments.study.plan import StudyPlan
from sim2human.experiments.study.world import StudyWorld
from tiny_study import TINY


@pytest.fixture()
def builds(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The studies whose world this process assembled, one entry a build."""
    seen: list[str] = []
    assemble = StudyWorld._assemble.__func__  # type: ignore[attr-defined]

    def counting(cls: type[StudyWorld], cfg: Any) -> StudyWorld:
        seen.append(cfg.name)
        world: StudyWorld = assemble(cls, cfg)
        return world

    monkeypatch.setattr(StudyWorld, "_assemble", classmethod(counting))
    StudyWorld.forget()
    return seen


def test_the_driver_builds_the_world_once(tmp_path: Path, builds: list[str]) -> None:
    study = tmp_path / "tiny.yaml"
    study.write_text(yaml.safe_dump(TINY))
    out = tmp_path / "run"
    assert main(["study", str(study), "--out", str(out), "--workers", "1"]) == 0
    assert (out / "study.json").exists()
    assert builds == ["tiny"]


def test_a_worker_builds_the_world_once_for_all_its_jobs(tmp_path: Path, builds: list[str]) -> None:
    cfg_json = parse_study(TINY).model_dump_json()  # as the driver sends it
    jobs = [
        ("reference", "scripted", 0, tmp_path / "reference"),
        ("diversity", "", 0, tmp_path / "diversity.json"),
        *(("condition", c["name"], 0, tmp_path / c["name"]) for c in TINY["conditions"]),
    ]
    for kind, name, seed, out in jobs:
        runner._work(cfg_json, kind, name, seed, str(out))
    assert all(out.exists() for *_, out in jobs)
    assert builds == ["tiny"]


def test_a_changed_study_is_built_again(builds: list[str]) -> None:
    cfg = parse_study(TINY)
    assert StudyWorld.build(cfg) is StudyWorld.build(parse_study(TINY))
    longer = cfg.model_copy(update={"train": cfg.train.model_copy(update={"max_turns": 7})})
    assert StudyWorld.build(longer).max_turns == 7
    assert builds == ["tiny", "tiny"]


def test_the_driver_resolves_its_study_once_and_says_what_it_left_out_once(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    builds: list[str],
) -> None:
    monkeypatch.setenv("SIM2HUMAN_DATA", str(tmp_path))  # no corpus here: real patients go
    plans: list[StudyPlan] = []
    resolve = StudyPlan.of.__func__  # type: ignore[attr-defined]

    def counting(cls: type[StudyPlan], cfg: Any) -> StudyPlan:
        plan: StudyPlan = resolve(cls, cfg)
        plans.append(plan)
        return plan

    monkeypatch.setattr(StudyPlan, "of", classmethod(counting))
    study = tmp_path / "tiny.yaml"
    held = ["noisy-line", "aci-heldout"]
    study.write_text(yaml.safe_dump({**TINY, "ensemble": {**TINY["ensemble"], "heldout": held}}))
    out = tmp_path / "run"
    assert main(["study", str(study), "--out", str(out), "--workers", "1"]) == 0
    assert len(plans) == 1 and plans[0].left_out is not None
    assert capsys.readouterr().err.count("real patients (aci-heldout) left out") == 1
    stored = yaml.safe_load((out / "config.yaml").read_text(encoding="utf-8"))
    assert stored["ensemble"]["heldout"] == ["noisy-line"]
    assert builds == ["tiny"]
