"""The diagnostics read a damaged run as far as it holds and say where it does not: a torn
finished sub-run is named with its counts and its evaluation left out; a line that is not UTF-8
is named by file and line; another scenario's episodes are refused; a stored diagnosis whose
run changed since, or taken by a version that judged differently, is taken again."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from planted_runs import write_sub_run
from sim2human.cli.app import main
from sim2human.diagnostics import stored
from sim2human.diagnostics.rundir import load_run_dir
from sim2human.diagnostics.stored import (
    DIAGNOSIS_FORMAT,
    FORMAT,
    INPUTS,
    diagnose_run,
    load_diagnosis,
)
from sim2human.experiments.study.wholeness import LOGGED, counts
from sim2human.metrics import embeddings
from sim2human.store.layout import DIAGNOSIS_JSON, EPISODES, SUMMARY
from sim2human.store.rundir import read_episodes


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A study directory of two finished sub-runs whose summaries record their counts."""
    root = tmp_path_factory.mktemp("study")
    for name in ("clean", "other"):
        sub = write_sub_run(root / "conditions" / name / "seed-0", exploit=False, per_member=4)
        have = counts(read_episodes(sub / EPISODES))
        summary = {
            "train": {"n": have["train"]},
            "heldout": {"n": have["heldout"]},
            LOGGED: have[LOGGED],
        }
        (sub / SUMMARY).write_text(json.dumps(summary))
    return root


@pytest.fixture
def run(study: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "run"
    shutil.copytree(study, copy)
    return copy


def _log(run: Path) -> Path:
    return run / "conditions" / "clean" / "seed-0" / EPISODES


def test_a_torn_finished_sub_run_is_named_with_its_counts(run: Path) -> None:
    data = _log(run).read_bytes()
    _log(run).write_bytes(data[: len(data) * 2 // 3])
    loaded = load_run_dir(run)
    [torn] = [p for p in loaded.all_problems() if ": torn: " in p]
    assert torn.startswith(f"{_log(run).parent}: torn: its episodes.jsonl holds ")
    assert "of the 8 held-out evaluations" in torn and "of the 12 episodes" in torn
    assert "its evaluation is left out" in torn and "--resume" in torn
    [sub] = loaded.conditions["clean"]
    assert not sub.finished and sub.evals == []
    assert loaded.conditions["other"][0].finished  # the whole one is read as ever


def test_a_corrupted_middle_line_is_reported_once_not_as_torn(run: Path) -> None:
    lines = _log(run).read_text().splitlines()
    lines[3] = lines[3][:40]
    _log(run).write_text("\n".join(lines) + "\n")
    problems = load_run_dir(run).all_problems()
    assert [p for p in problems if "corrupted" in p] and not [
        p for p in problems if ": torn: " in p
    ]


def test_a_line_that_is_not_utf8_is_named_by_file_and_line(run: Path) -> None:
    lines = _log(run).read_bytes().split(b"\n")
    lines[1] = lines[1].replace(b'"intake"', b'"int\xffake"', 1)  # inside a string: valid JSON
    _log(run).write_bytes(b"\n".join(lines))
    problems = load_run_dir(run).all_problems()
    assert f"{_log(run)}: 1 corrupted line(s) skipped (first: line 2: not UTF-8 text" in "\n".join(
        problems
    )


def test_a_torn_last_line_that_is_not_utf8_is_skipped_silently(run: Path) -> None:
    sub = run / "conditions" / "clean" / "seed-0"
    (sub / SUMMARY).write_text('{"condition": "clean"}')  # an old summary: no counts to check
    with _log(run).open("ab") as f:
        f.write(b'{"id": "cut in the middle of \xe2\x82')
    assert [p for p in load_run_dir(run).all_problems() if EPISODES in p] == []


def test_episodes_of_another_scenario_are_refused(
    run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = _log(run).read_text().replace('"scenario":"intake"', '"scenario":"pizza"')
    _log(run).write_text(text)
    code = main(["diagnose", str(run)])  # no study.json, no config: the first log read decides
    err = " ".join(capsys.readouterr().err.split())
    assert code == 2 and "Traceback" not in err
    assert f"that of the first log read ({_log(run)}) is 'pizza'" in err

    (run / "config.yaml").write_text("name: s\nscenario: intake\n")  # the study's own word
    code = main(["diagnose", str(run)])
    err = " ".join(capsys.readouterr().err.split())
    assert code == 2 and "Traceback" not in err and err.count("error:") == 1
    assert f"{_log(run)}: episode 1 " in err and "is of scenario 'pizza'" in err
    assert f"the scenario of {run / 'config.yaml'} is 'intake'" in err


def _no_diagnosing(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_: Any, **__: Any) -> Any:
        raise AssertionError("diagnosed again")

    monkeypatch.setattr(stored, "diagnose", refuse)


def test_a_stored_diagnosis_is_taken_again_once_its_run_changed(
    run: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(embeddings, "_load_minilm", lambda: "not needed here")
    first = diagnose_run(run)
    assert json.loads((run / DIAGNOSIS_JSON).read_text())[INPUTS]
    with monkeypatch.context() as m:
        _no_diagnosing(m)
        assert load_diagnosis(run) == first  # nothing changed: read as stored

    data = _log(run).read_bytes()
    _log(run).write_bytes(data[: len(data) // 2])  # R090: the episodes changed since
    again = load_diagnosis(run)
    assert "the run changed since it was taken; diagnosing it again" in capsys.readouterr().err
    assert [p for p in again.problems if ": torn: " in p]
    assert not [p for p in first.problems if ": torn: " in p]
    with monkeypatch.context() as m:
        _no_diagnosing(m)
        assert load_diagnosis(run) == again  # stored: taken once, not on every read


def test_a_diagnosis_stored_by_a_version_that_judged_differently_is_taken_again(
    run: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run unchanged since it was diagnosed, by a version before ``format`` was recorded (or
    of another one), is diagnosed again once: its verdicts are an old rule's."""
    monkeypatch.setattr(embeddings, "_load_minilm", lambda: "not needed here")
    first = diagnose_run(run)
    path = run / DIAGNOSIS_JSON
    raw = json.loads(path.read_text())
    assert raw[FORMAT] == DIAGNOSIS_FORMAT
    del raw[FORMAT]
    raw["conditions"][0]["verdict"]["headline"] = "an old rule's words"
    path.write_text(json.dumps(raw))
    again = load_diagnosis(run)
    assert "taken by another version, which judged runs differently" in capsys.readouterr().err
    assert again == first and json.loads(path.read_text())[FORMAT] == DIAGNOSIS_FORMAT
    with monkeypatch.context() as m:
        _no_diagnosing(m)
        assert load_diagnosis(run) == first  # stored again: taken once


def test_a_report_of_a_changed_run_reads_its_logs_once(
    run: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from sim2human.diagnostics import rundir

    monkeypatch.setattr(embeddings, "_load_minilm", lambda: "not needed here")
    diagnose_run(run)
    data = _log(run).read_bytes()
    _log(run).write_bytes(data[: len(data) // 2])  # changed since: the report diagnoses again
    reads: list[Path] = []
    read = rundir._episodes

    def counted(path: Path, problems: list[str]) -> tuple[Any, int]:
        reads.append(path)
        return read(path, problems)

    monkeypatch.setattr(rundir, "_episodes", counted)
    assert main(["report", str(run), "--quiet"]) == 0
    assert "diagnosing it again" in capsys.readouterr().err
    assert sorted(reads) == sorted(run.glob(f"conditions/*/*/{EPISODES}"))  # each log once


def test_a_run_copied_without_its_times_is_not_diagnosed_again(
    run: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import os

    monkeypatch.setattr(embeddings, "_load_minilm", lambda: "not needed here")
    first = diagnose_run(run)
    later = _log(run).stat().st_mtime_ns + 10**9
    for log in run.glob(f"conditions/*/*/{EPISODES}"):  # as `cp -r` leaves a copy: new times
        os.utime(log, ns=(later, later))
    with monkeypatch.context() as m:
        _no_diagnosing(m)
        assert load_diagnosis(run) == first  # the same bytes: not a change
    data = _log(run).read_bytes()
    at = data.index(b'"seed": ') + 8 if b'"seed": ' in data else data.index(b'"seed":') + 7
    digit = b"1" if data[at : at + 1] != b"1" else b"2"
    _log(run).write_bytes(data[:at] + digit + data[at + 1 :])  # same size, other bytes
    os.utime(_log(run), ns=(later, later))
    load_diagnosis(run)
    assert "the run changed since it was taken; diagnosing it again" in capsys.readouterr().err
