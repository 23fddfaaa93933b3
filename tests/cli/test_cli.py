"""The CLI in-process: a study run, and bad input that gets one clear error and exit code 2."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from sim2human.cli.app import main
from tiny_study import TINY


def _write(tmp_path: Path, cfg: dict[str, Any]) -> Path:
    path = tmp_path / "study.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert "sim2human" in capsys.readouterr().out


def test_study_runs_and_prints_the_report_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    assert main(["study", str(_write(tmp_path, TINY)), "--out", str(out), "--workers", "1"]) == 0
    printed = capsys.readouterr().out
    assert "frozen-small" in printed and str(out / "report.md") in printed.replace("\n", "")
    assert (out / "study.json").exists()


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        ({"train": {"episodez": 5}}, "train.episodez: unknown key"),
        ({"train": {"episodes": -5}}, "train.episodes: Input should be greater than or equal to 1"),
        ({"ensemble": {"train": ["zombies"]}}, "unknown simulator family 'zombies'"),
        (
            {"conditions": [{"name": "x", "sampler": "best"}]},
            "conditions.0.sampler: unknown sampler 'best' (known: fixed, uniform, randomized",
        ),
        (
            {"scenario": "hotel"},
            "scenario: unknown scenario 'hotel' (known: intake, negotiation, pizza, support)",
        ),
        ({"conditions": [{"name": "x", "sampler": "fixed"}]}, "needs a 'simulator'"),
        ({"seeds": []}, "seeds"),
        ({"train": {"episodes": -5}, "seedz": 1}, "equal to 1 (and 1 more problem)"),
    ],
)
def test_bad_config_is_one_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], patch: dict[str, Any], message: str
) -> None:
    cfg = {**TINY, **patch}
    assert main(["study", str(_write(tmp_path, cfg)), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert message in err.replace("\n", " ") and "Traceback" not in err
    assert "Value error" not in err and "(top level)" not in err
    assert not (tmp_path / "o").exists()


def test_missing_and_malformed_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["study", str(tmp_path / "nope.yaml")]) == 2
    assert "no such study file" in capsys.readouterr().err
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: [unclosed")
    assert main(["study", str(bad)]) == 2
    assert "not valid YAML" in capsys.readouterr().err


def test_unknown_command_and_option_exit_2() -> None:
    assert main(["frobnicate"]) == 2
    assert main(["demo", "--workers", "0"]) == 2
