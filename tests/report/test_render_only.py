"""Reports render stored results: the diagnosis is taken once and stored (``diagnosis.json``);
writing a report replays and plays nothing, and writes ``report.md`` once."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from planted_runs import study_result, study_row, write_sub_run
from sim2human import outputs
from sim2human.cli.app import main
from sim2human.cli.report import finish_study
from sim2human.diagnostics import analyse, replay, rundir, stored
from sim2human.diagnostics.stored import diagnose_run
from sim2human.errors import RunDirError
from sim2human.experiments.study import diversity
from sim2human.metrics import embeddings
from sim2human.metrics.outcomes import Estimate
from sim2human.report import html
from sim2human.report.format import est
from sim2human.report.html import write_report
from sim2human.rollout import conversation, evaluate
from sim2human.store.layout import DIAGNOSIS_JSON


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small study directory (one exploiting, one clean condition), diagnosed once."""
    root = tmp_path_factory.mktemp("study")
    write_sub_run(root / "conditions" / "frozen-trigger" / "seed-0", exploit=True, per_member=3)
    write_sub_run(root / "conditions" / "clean" / "seed-0", exploit=False, per_member=3)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(embeddings, "_load_minilm", lambda: "not needed here")
        diagnose_run(root)
    return root


def _no_playing(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_: Any, **__: Any) -> Any:
        raise AssertionError("a report played or replayed a conversation")

    monkeypatch.setattr(conversation.Conversation, "open", refuse)
    monkeypatch.setattr(evaluate, "evaluate", refuse)
    monkeypatch.setattr(diversity, "evaluate", refuse)
    monkeypatch.setattr(replay, "replay", refuse)
    monkeypatch.setattr(analyse, "diagnose", refuse)
    monkeypatch.setattr(stored, "diagnose", refuse)


def test_the_diagnosis_is_stored_once(run: Path) -> None:
    stored_json = json.loads((run / DIAGNOSIS_JSON).read_text())
    assert [c["name"] for c in stored_json["conditions"]] == ["clean", "frozen-trigger"]
    assert (run / "diversity.json").is_file()


def test_a_report_renders_a_stored_run_without_playing(
    run: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _no_playing(monkeypatch)
    writes: list[str] = []
    real_temporary = outputs._temporary

    def counting(path: Path, file_mode: int) -> tuple[int, Path]:
        writes.append(path.name)  # every output file is written through a temporary file
        return real_temporary(path, file_mode)

    monkeypatch.setattr(outputs, "_temporary", counting)
    written = write_report(run)
    assert writes.count("report.md") == 1  # composed, then written once
    assert "## Exploit finder" in written.markdown.read_text()
    assert "collapse" in written.html.read_text()
    assert main(["report", str(run), "--condition", "clean"]) == 0  # from the stored diagnosis
    assert "report.clean.html" in capsys.readouterr().out


def test_an_undiagnosed_run_is_named_not_replayed(tmp_path: Path) -> None:
    write_sub_run(tmp_path / "conditions" / "clean" / "seed-0", exploit=False, per_member=2)
    with pytest.raises(RunDirError, match="has not been diagnosed; run `sim2human diagnose"):
        write_report(tmp_path)


def test_one_estimate_formatter_reads_both_forms() -> None:
    e = Estimate(mean=0.5, ci=(0.25, 0.75), n=8)
    stored_form = {"mean": 0.5, "ci": [0.25, 0.75], "n": 8}
    assert est(e) == est(stored_form) == "50 [25, 75]"
    assert est(e, n=True) == "50 [25, 75] (n=8)"
    assert est(Estimate(mean=float("nan"), ci=(0, 0), n=0), missing="-") == "-"
    assert est({"mean": None, "ci": [None, None]}, missing="undefined") == "undefined"
    assert est({"mean": 0.4, "ci": [None, None]}) == "40"  # no interval: the mean alone


def count_reads(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The run directories ``load_run_dir`` reads from now on, wherever it is called from."""
    reads: list[Path] = []
    real_load = rundir.load_run_dir

    def counting(path: Path, condition: str | None = None) -> rundir.RunDir:
        reads.append(path)
        return real_load(path, condition)

    for module in (rundir, stored, html):
        monkeypatch.setattr(module, "load_run_dir", counting)
    return reads


def test_a_study_s_finish_reads_the_run_once_and_writes_what_the_commands_write(
    run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    one_by_one, at_once = tmp_path / "a" / "run", tmp_path / "b" / "run"  # one name: no study.json
    for copy in (one_by_one, at_once):
        shutil.copytree(run, copy)
    diagnose_run(one_by_one)
    write_report(one_by_one)

    reads = count_reads(monkeypatch)
    study = study_result(study_row("clean"), study_row("frozen-trigger"))
    finish_study(study, at_once, Console(quiet=True))
    assert reads == [at_once]
    for name in ("diagnosis.json", "report.json", "report.md", "report.html"):
        a = (one_by_one / name).read_text().replace(str(one_by_one), "RUN")
        assert a == (at_once / name).read_text().replace(str(at_once), "RUN"), name


def test_report_on_a_never_diagnosed_run_reads_it_once(
    run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fresh = tmp_path / "run"
    shutil.copytree(run, fresh)
    (fresh / DIAGNOSIS_JSON).unlink()
    reads = count_reads(monkeypatch)
    assert main(["report", str(fresh)]) == 0
    assert reads == [fresh]  # the diagnosis and the report share one read
    assert (fresh / DIAGNOSIS_JSON).exists() and (fresh / "report.html").exists()
