"""The run-directory lock (one writer; the holder named; stale locks taken over) and episode
logs that cannot hold one id twice."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from reliability_helpers import TINY, assert_one_clear_error, run_cli

from planted_runs import write_sub_run
from sim2human.errors import RunDirError, UsageError
from sim2human.store import collector
from sim2human.store.layout import EPISODES, LOCK_FILE
from sim2human.store.lock import LockedError, holder_of, run_lock
from sim2human.store.rundir import EpisodeLog, read_episodes

HOLD = """
import sys, time
from pathlib import Path
from sim2human.store.lock import run_lock
with run_lock(Path(sys.argv[1]), "holder"):
    print("held", flush=True)
    time.sleep(120)
"""


@pytest.fixture()
def held(tmp_path: Path):  # type: ignore[no-untyped-def]
    """``tmp_path / 'run'``, locked by another live process."""
    run = tmp_path / "run"
    run.mkdir()
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(run)], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    yield run, proc.pid
    proc.kill()
    proc.wait()


def test_a_second_writer_is_refused_naming_the_holder(held: tuple[Path, int]) -> None:
    run, pid = held
    expected = rf"in use by pid {pid} on .* \(holder, since"
    with pytest.raises(LockedError, match=expected), run_lock(run, "study"):
        pass
    assert holder_of(run)["pid"] == pid  # type: ignore[index]


def test_every_writer_command_is_refused_while_locked(
    held: tuple[Path, int], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run, pid = held
    config = tmp_path / "s.yaml"
    config.write_text(yaml.safe_dump(TINY))
    before = sorted(p.name for p in run.iterdir())
    for argv in (
        ["study", str(config), "--out", str(run)],
        ["study", str(config), "--out", str(run), "--resume"],
        [
            "eval-agent",
            str(config),
            "--out",
            str(run),
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--model",
            "m",
        ],
    ):
        (run / "config.yaml").unlink(missing_ok=True)
        if "--resume" in argv:
            (run / "config.yaml").write_text("name: x\n")
        code, err = run_cli(capsys, *argv)
        assert_one_clear_error(code, err, f"pid {pid}", "in use")
    (run / "config.yaml").unlink(missing_ok=True)
    assert sorted(p.name for p in run.iterdir()) == before  # nothing written


def test_report_and_stress_take_the_lock(
    held: tuple[Path, int], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run, pid = held
    write_sub_run(run, exploit=False, per_member=2)
    code, err = run_cli(capsys, "report", str(run))
    assert_one_clear_error(code, err, f"pid {pid}")
    assert not (run / "report.html").exists()
    source = tmp_path / "source"
    source.mkdir()
    (source / "config.yaml").write_text(yaml.safe_dump(TINY))
    code, err = run_cli(capsys, "stress", str(source), "--out", str(run))
    assert_one_clear_error(code, err, f"pid {pid}")
    assert not (run / "stress.json").exists()


def test_a_stale_lock_from_a_dead_process_is_taken_over(tmp_path: Path) -> None:
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    stale = {"pid": int(dead.stdout), "host": "h", "command": "study", "started": time.time()}
    (tmp_path / LOCK_FILE).write_text(json.dumps(stale))
    notes: list[str] = []
    with run_lock(tmp_path, "study --resume", note=notes.append):
        assert holder_of(tmp_path)["command"] == "study --resume"  # type: ignore[index]
    assert len(notes) == 1 and f"pid {stale['pid']}" in notes[0] and "no longer running" in notes[0]
    assert holder_of(tmp_path) is None  # a clean release leaves nothing stale


def test_the_lock_is_reentrant_in_one_process(tmp_path: Path) -> None:
    with run_lock(tmp_path, "study"), run_lock(tmp_path, "report"):
        assert holder_of(tmp_path)["command"] == "study"  # type: ignore[index]
    with run_lock(tmp_path, "again"):
        pass


def test_episode_log_refuses_a_duplicate_id(tmp_path: Path) -> None:
    sub = write_sub_run(tmp_path / "sub", exploit=False, per_member=2)
    episodes = read_episodes(sub / EPISODES)
    with EpisodeLog(tmp_path / "new.jsonl") as log:
        log.write(episodes[0])
        with pytest.raises(RunDirError, match=r"already stored \(line 1\); refusing"):
            log.write(episodes[0])
    with EpisodeLog(tmp_path / "new.jsonl") as log, pytest.raises(RunDirError):
        log.write(episodes[0])  # ids already in the file count too
    assert len(read_episodes(tmp_path / "new.jsonl")) == 1


def test_readers_refuse_a_log_with_a_duplicate_id(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sub = write_sub_run(tmp_path / "sub", exploit=False, per_member=2)
    log = sub / EPISODES
    first = log.read_text().splitlines()[0]
    log.write_text(log.read_text() + first + "\n")
    with pytest.raises(RunDirError, match="stored twice"):
        read_episodes(log)
    code, err = run_cli(capsys, "diagnose", str(sub))
    assert_one_clear_error(code, err, "stored twice", str(log))


def test_reading_a_log_gives_the_garbage_collector_back_as_it_found_it(tmp_path: Path) -> None:
    sub = write_sub_run(tmp_path / "sub", exploit=False, per_member=2)
    assert gc.isenabled()
    read_episodes(sub / EPISODES)
    assert gc.isenabled()
    (tmp_path / "bad.jsonl").write_text('{"id": 1}\n{}\n')
    with pytest.raises(RunDirError, match="not an episode"):
        read_episodes(tmp_path / "bad.jsonl")
    assert gc.isenabled()  # after a failed read too
    gc.disable()
    try:
        with collector.paused():
            pass
        assert not gc.isenabled()  # one that was off stays off
    finally:
        gc.enable()


def test_resume_of_a_missing_directory_is_a_usage_error(tmp_path: Path) -> None:
    from sim2human.experiments.study.config import parse_study
    from sim2human.experiments.study.runner import run_study

    with pytest.raises(UsageError, match="nothing to resume"):
        run_study(parse_study(TINY), tmp_path / "none", resume=True)
    assert not (tmp_path / "none").exists()
