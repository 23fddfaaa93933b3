"""A failed start leaves no run directory behind (which the next attempt would refuse
without ``--resume``), and an endpoint that cannot answer is a usage error, exit 2."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from sim2human.cli.app import main
from sim2human.errors import ConfigError
from sim2human.store.layout import SUMMARY
from tiny_study import TINY

LLM_MEMBERS = {"families": ["chatty"], "prompts": ["plain"], "members": 1, "endpoint": "down"}
DOWN = {
    **TINY,
    "ensemble": {**TINY["ensemble"], "llm": {"train": LLM_MEMBERS}},
    "llm": {
        "endpoints": {
            "down": {
                "base_url": "http://127.0.0.1:9/v1",
                "model": "m",
                "timeout_s": 2,
                "max_retries": 1,
                "backoff_s": 0.01,
            }
        },
        "cache": None,
    },
    "conditions": [{"name": "mixed", "sampler": "uniform", "llm_share": 0.25}],
}


def _write(tmp_path: Path, cfg: dict[str, Any]) -> Path:
    path = tmp_path / "study.yaml"
    path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    return path


def test_an_unreachable_endpoint_is_exit_2_and_leaves_no_run_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    for _ in range(2):  # the second attempt is refused the same way, not told to --resume
        assert main(["study", str(_write(tmp_path, DOWN)), "--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert "error: endpoint 'down' is not usable" in err and "--resume" not in err
        assert not out.exists()


def _fail_after_making(out_of: list[Path], finished: bool) -> Any:
    def run_study(cfg: Any, out: Path, **_: Any) -> None:
        (out / "conditions" / "a" / "seed-0").mkdir(parents=True)
        (out / "config.yaml").write_text("name: x\n", encoding="utf-8")
        if finished:
            (out / "conditions" / "a" / "seed-0" / SUMMARY).write_text("{}", encoding="utf-8")
        out_of.append(out)
        raise ConfigError("x.yaml: a check the run directory was made before")

    return run_study


@pytest.mark.parametrize("finished", [False, True])
def test_a_study_failing_at_its_start_removes_the_directory_it_made(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    finished: bool,
) -> None:
    made: list[Path] = []
    monkeypatch.setattr(
        "sim2human.experiments.study.runner.run_study", _fail_after_making(made, finished)
    )
    out = tmp_path / "run"
    assert main(["study", str(_write(tmp_path, TINY)), "--out", str(out)]) == 2
    assert made == [out]
    assert "a check the run directory was made before" in capsys.readouterr().err
    assert out.exists() == finished  # a finished sub-run is kept for --resume


def test_a_directory_that_existed_before_is_never_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        "sim2human.experiments.study.runner.run_study", _fail_after_making([], finished=False)
    )
    out = tmp_path / "run"
    out.mkdir()
    (out / "notes.txt").write_text("mine", encoding="utf-8")
    assert main(["study", str(_write(tmp_path, TINY)), "--out", str(out)]) == 2
    assert (out / "notes.txt").read_text(encoding="utf-8") == "mine"


def test_eval_agent_against_a_down_endpoint_leaves_no_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "eval"
    argv = ["eval-agent", str(_write(tmp_path, TINY)), "--out", str(out)]
    assert main([*argv, "--base-url", "http://127.0.0.1:9/v1", "--model", "m"]) == 2
    assert "error: endpoint 'agent' is not usable" in capsys.readouterr().err
    assert not out.exists()
