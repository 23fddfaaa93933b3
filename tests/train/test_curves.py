"""``--log-to``: the trainer's curves copied to TensorBoard (W&B, MLflow), read back with
TensorBoard's own event reader, and the study's numbers unchanged by it."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import pytest
import yaml

from sim2human.cli.app import main
from sim2human.errors import ModelUnavailableError, UsageError
from sim2human.train import curves
from tiny_study import TINY, study_numbers


class Recorder:
    def __init__(self) -> None:
        self.seen: list[tuple[int, dict[str, float]]] = []

    def scalars(self, step: int, values: Mapping[str, float]) -> None:
        self.seen.append((step, dict(values)))


def test_rows_become_scalars_by_episodes_seen() -> None:
    sink = Recorder()
    log = curves.CurveLog([sink])
    log.log({"update": -1, "episodes_seen": 0, "heldout_gold": 0.25, "kl_init": 0.0})
    log.log({"update": 0, "episodes_seen": 32, "train_proxy": 0.5, "entropy": 1.5, "x": 3})
    log.log({"episodes_seen": 64, "train_gold": float("nan"), "per_member": {}, "d": True})
    assert sink.seen == [
        (0, {"gold/heldout_probe": 0.25, "kl/from_init": 0.0}),
        (32, {"proxy/train": 0.5, "entropy/policy": 1.5}),
    ]


def test_unknown_or_missing_sinks_are_one_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    assert curves.parse_sinks(None) == ()
    with pytest.raises(UsageError, match="unknown sink 'tensorbored' \\(known: tensorboard"):
        curves.parse_sinks("tensorbored")
    monkeypatch.setattr(curves.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ModelUnavailableError, match=r"pip install 'sim2human\[wandb\]'"):
        curves.parse_sinks("wandb")


def test_study_refuses_a_missing_extra_before_writing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(curves.importlib.util, "find_spec", lambda name: None)
    config = tmp_path / "s.yaml"
    config.write_text(yaml.safe_dump(TINY), encoding="utf-8")
    out = tmp_path / "run"
    assert main(["study", str(config), "--out", str(out), "--log-to", "mlflow"]) == 2
    assert "--log-to mlflow needs the mlflow extra" in capsys.readouterr().err
    assert not out.exists()


def _scalars(folder: Path) -> dict[str, list[tuple[int, float]]]:
    accumulator = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")
    acc = accumulator.EventAccumulator(str(folder))
    acc.Reload()
    return {t: [(e.step, e.value) for e in acc.Scalars(t)] for t in acc.Tags()["scalars"]}


def test_tensorboard_event_files_hold_the_rows(tmp_path: Path) -> None:
    pytest.importorskip("tensorboard")
    with curves.open_curves(tmp_path, "c/seed-0", {}, ("tensorboard",)) as log:
        log.log({"episodes_seen": 0, "heldout_gold": 0.5})
        log.log({"episodes_seen": 32, "train_proxy": 0.75, "heldout_gold": 0.25})
    got = _scalars(tmp_path / "tensorboard")
    assert got["gold/heldout_probe"] == [(0, 0.5), (32, 0.25)]
    assert got["proxy/train"] == [(32, 0.75)]


def test_a_study_logs_its_curves_and_its_numbers_do_not_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("tensorboard")
    cfg = {
        **TINY,
        "conditions": TINY["conditions"][1:],
        "train": {**TINY["train"], "eval_every": 1},
    }
    config = tmp_path / "s.yaml"
    config.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    monkeypatch.delenv(curves.ENV, raising=False)
    runs = {}
    for name, extra in (("plain", []), ("logged", ["--log-to", "tensorboard"])):
        out = tmp_path / name
        assert main(["study", str(config), "--out", str(out), "--workers", "1", *extra]) == 0
        runs[name] = out
    from sim2human.experiments.study.results import load_study_result

    assert study_numbers(load_study_result(runs["plain"])) == study_numbers(
        load_study_result(runs["logged"])
    )
    sub = runs["logged"] / "conditions" / "ensemble-uniform" / "seed-0"
    assert not (
        runs["plain"] / "conditions" / "ensemble-uniform" / "seed-0" / "tensorboard"
    ).exists()
    rows = [json.loads(line) for line in (sub / "metrics.jsonl").read_text().splitlines()]
    got = _scalars(sub / "tensorboard")
    for tag, key in (("gold/heldout_probe", "heldout_gold"), ("proxy/train", "train_proxy")):
        want = [(r["episodes_seen"], r[key]) for r in rows if key in r]
        assert [step for step, _ in got[tag]] == [step for step, _ in want]
        assert [v for _, v in got[tag]] == pytest.approx([v for _, v in want], abs=1e-6)
    assert len(got["gold/heldout_probe"]) >= 2  # the d = 0 point and the updates
    assert {"entropy/policy", "entropy/acts_bits"} <= set(got)


class FakeWandbRun:
    def __init__(self, **init: object) -> None:
        self.init, self.logged, self.finished = init, [], False

    def log(self, values: dict[str, float], step: int) -> None:
        self.logged.append((step, values))

    def finish(self) -> None:
        self.finished = True


def test_wandb_runs_offline_inside_the_study(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The calls made to wandb (a stand-in module: the extra is large): an offline run in
    STUDY/wandb, one log call per row, finished at the end."""
    import types

    runs: list[FakeWandbRun] = []
    fake = types.ModuleType("wandb")
    fake.init = lambda **kw: runs.append(FakeWandbRun(**kw)) or runs[-1]  # type: ignore[attr-defined]
    monkeypatch.setitem(__import__("sys").modules, "wandb", fake)
    sub = tmp_path / "conditions" / "uniform" / "seed-0"
    with curves.open_curves(sub, "uniform/seed-0", {"seed": 0}, ("wandb",)) as log:
        log.log({"episodes_seen": 32, "train_proxy": 0.5})
    (run,) = runs
    assert run.init["mode"] == "offline" and run.init["dir"] == str(tmp_path / "wandb")
    assert run.init["name"] == "uniform/seed-0" and run.init["config"] == {"seed": 0}
    assert run.logged == [(32, {"proxy/train": 0.5})] and run.finished
