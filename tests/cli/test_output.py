"""``--json`` prints one JSON document on stdout and nothing else; ``--quiet`` prints nothing
but errors; ``report`` shows a progress bar over its steps."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest
import yaml

from sim2human.cli.app import main
from tiny_study import TINY


@pytest.fixture(scope="module")
def study_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    """The tiny study run with ``--json``: its directory, stdout and stderr."""
    root = tmp_path_factory.mktemp("json")
    config = root / "study.yaml"
    config.write_text(yaml.safe_dump(TINY), encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["study", str(config), "--out", str(root / "run"), "--workers", "1", "--json"])
    assert code == 0
    return root / "run", out.getvalue(), err.getvalue()


def test_study_json_is_the_one_document_on_stdout(study_run: tuple[Path, str, str]) -> None:
    run, out, err = study_run
    doc = json.loads(out)  # the whole of stdout parses: no table, no "report:" line
    stored = json.loads((run / "report.json").read_text(encoding="utf-8"))["summary"]
    assert doc["tables"] == stored["tables"] and doc["verdicts"] == stored["verdicts"]
    assert {v["condition"] for v in doc["verdicts"]} >= {"frozen-small", "ensemble-uniform"}
    assert doc["files"]["study"] == str(run / "study.json")
    assert "tiny" in err  # the progress and the study's header went to stderr


def test_diagnose_json_and_quiet(
    study_run: tuple[Path, str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = study_run[0]
    assert main(["diagnose", str(run), "--out", str(tmp_path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    names = [c["condition"] for c in doc["conditions"]]
    assert "frozen-small" in names and all(
        isinstance(c["collapse"], bool) for c in doc["conditions"]
    )
    assert main(["diagnose", str(run), "--out", str(tmp_path), "--quiet"]) == 0
    assert capsys.readouterr() == ("", "")


def test_report_quiet_prints_nothing_and_shows_a_bar_otherwise(
    study_run: tuple[Path, str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = study_run[0]
    assert main(["report", str(run), "--out", str(tmp_path / "q"), "--quiet"]) == 0
    assert capsys.readouterr() == ("", "")
    assert (tmp_path / "q" / "report.html").exists()
    assert main(["report", str(run), "--out", str(tmp_path / "loud")]) == 0
    captured = capsys.readouterr()
    assert "report: " in captured.out
    bar = [line for line in captured.err.splitlines() if line.startswith("report ")]
    assert bar and "done" in bar[-1] and "/" in bar[-1]  # "report ━━━ 5/5 done 0:00:01"


def test_study_quiet_prints_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "study.yaml"
    small = {**TINY, "conditions": TINY["conditions"][:1]}
    config.write_text(yaml.safe_dump(small), encoding="utf-8")
    out = tmp_path / "run"
    assert main(["study", str(config), "--out", str(out), "--workers", "1", "--quiet"]) == 0
    assert capsys.readouterr() == ("", "")
    assert (out / "report.html").exists()


def test_study_check_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "study.yaml"
    config.write_text(yaml.safe_dump(TINY), encoding="utf-8")
    assert main(["study", str(config), "--check", "--json", "--quiet"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out) == {"config": str(config), "valid": True, "conditions": 2}
    assert captured.err == ""
