"""End to end with a real study in a subprocess: a second writer is refused while it runs,
``kill -9`` of it leaves no process behind, and ``--resume`` then gives exactly the study.json
of a straight-through run (numbers compared with each other, never with constants). A worker
killed as the out-of-memory killer would fails its sub-run alone (or, with a retry left, it is run
again); SIGTERM stops a study as Ctrl-C does."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from contextlib import suppress
from pathlib import Path
from typing import Any

import pytest
import yaml
from reliability_helpers import TINY, assert_one_clear_error, descendants, run_cli, wait_gone

from sim2human.cli.app import main
from sim2human.store.layout import EPISODES, SUMMARY
from sim2human.store.rundir import read_episodes

pytestmark = [
    pytest.mark.slow,  # three tiny studies: about a minute on 2 idle cores
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc"),
]


def _numbers(path: Path) -> str:
    study: dict[str, Any] = json.loads(path.read_text())
    study.pop("wall_seconds")
    return json.dumps(study, sort_keys=True)


@pytest.fixture(scope="module")
def straight(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The config (two sub-runs: one condition, two seeds) and its study run straight through."""
    root = tmp_path_factory.mktemp("straight")
    config = root / "tiny.yaml"
    config.write_text(yaml.safe_dump({**TINY, "train": {**TINY["train"], "episodes": 256}}))
    code = main(["study", str(config), "--out", str(root / "straight"), "--workers", "2"])
    assert code == 0
    return config, root / "straight"


def _start(config: Path, out: Path, *extra: str) -> subprocess.Popen[str]:
    """``sim2human study CONFIG --out OUT --workers 2 EXTRA`` in a subprocess."""
    argv = ["study", str(config), "--out", str(out), "--workers", "2", *extra]
    return subprocess.Popen(
        [sys.executable, "-m", "sim2human.cli", *argv],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_training(proc: subprocess.Popen[str], out: Path, runs: int) -> None:
    """Until ``runs`` sub-runs have logged training episodes (each worker is in one)."""
    deadline = time.monotonic() + 300
    while sum(p.stat().st_size > 0 for p in out.glob("conditions/*/seed-*/episodes.jsonl")) < runs:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the sub-runs never started training"
        time.sleep(0.2)


def _workers(pid: int) -> list[int]:
    """The spawned workers below ``pid`` (not multiprocessing's resource tracker)."""
    found = []
    for child in descendants(pid):
        try:
            argv = Path(f"/proc/{child}/cmdline").read_bytes()
        except OSError:
            continue
        if b"spawn_main" in argv and b"resource_tracker" not in argv:
            found.append(child)
    return found


def _busy_worker(proc: subprocess.Popen[str], out: Path) -> int:
    """A worker in the middle of a sub-run: one holding a sub-run's episode log open (the log is
    open from the sub-run's start to its end). Killing just any worker raced: one that had
    finished its sub-run and found no work left died idle, unnoticed (the CI of stop 63)."""
    logs = out.resolve() / "conditions"
    deadline = time.monotonic() + 300
    while True:
        for pid in _workers(proc.pid):
            with suppress(OSError):
                for fd in Path(f"/proc/{pid}/fd").iterdir():
                    target = Path(os.readlink(fd))
                    if target.name == EPISODES and target.parent.parent.parent == logs:
                        return pid
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "no worker ever held a sub-run's episode log"
        time.sleep(0.05)


def test_kill_9_then_resume_reproduces_a_straight_run(
    straight: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config, done = straight
    killed = tmp_path / "killed"
    proc = _start(config, killed)
    deadline = time.monotonic() + 300
    while not list(killed.glob("conditions/*/seed-*/metrics.jsonl")):  # workers are training
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.2)

    code, err = run_cli(capsys, "study", str(config), "--out", str(killed), "--resume")
    assert_one_clear_error(code, err, f"pid {proc.pid}", "in use")  # a second writer

    family = descendants(proc.pid)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(60)
    assert wait_gone(family, 10) == [], "processes outlived the killed study"
    assert not (killed / "study.json").exists()

    code, err = run_cli(
        capsys, "study", str(config), "--out", str(killed), "--resume", "--workers", "2"
    )
    assert code == 0, err
    assert "took over the lock" in err and f"pid {proc.pid}" in err
    assert _numbers(killed / "study.json") == _numbers(done / "study.json")
    for sub in killed.glob("conditions/*/seed-*"):
        episodes = read_episodes(sub / EPISODES)  # refuses duplicate ids
        assert len({e.id for e in episodes}) == len(episodes)


def test_a_dead_worker_fails_its_sub_run_alone_and_resume_finishes_it(
    straight: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Finding 9: ``kill -9`` of one worker (the out-of-memory killer's way), no retry left."""
    config, done = straight
    out = tmp_path / "k"
    proc = _start(config, out, "--retries", "0")
    _wait_training(proc, out, 2)
    os.kill(_busy_worker(proc, out), signal.SIGKILL)
    _, err = proc.communicate(timeout=600)
    assert proc.returncode == 1, err
    assert "Traceback" not in err and "BrokenProcessPool" not in err, err
    text = " ".join(err.split())
    found = re.findall(r"failed: ([\w -]+?): worker died \(signal 9", text)
    assert len(found) == 1, text
    assert f"--resume --out {out}" in text
    study = json.loads((out / "study.json").read_text())
    [failure] = study["failed"]
    assert failure["job"] == found[0]
    assert failure["path"].startswith("conditions/"), failure  # the sub-run its worker held
    units = [p.parent for p in done.glob("**/" + SUMMARY) if p.parent != done]
    assert len(units) >= 3  # two sub-runs and the reference at least
    for unit in units:
        rel = unit.relative_to(done).as_posix()
        assert (out / rel / SUMMARY).exists() == (rel != failure["path"]), rel  # it alone failed
    assert not (out / failure["path"] / SUMMARY).exists()

    code, err = run_cli(capsys, "study", str(config), "--out", str(out), "--resume")
    assert code == 0, err
    assert _numbers(out / "study.json") == _numbers(done / "study.json")


def test_a_dead_worker_s_sub_run_runs_again_in_a_new_one(
    straight: tuple[Path, Path], tmp_path: Path
) -> None:
    """With a retry left (the default), the sub-run the victim held starts over in a fresh
    worker."""
    config, done = straight
    out = tmp_path / "r"
    proc = _start(config, out)
    _wait_training(proc, out, 2)
    os.kill(_busy_worker(proc, out), signal.SIGKILL)
    _, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err
    text = " ".join(err.split())
    assert re.search(
        r"[\w -]+: worker died \(signal 9 SIGKILL, perhaps out "
        r"of memory\); running it again \(attempt 2 of 2\)",
        text,
    ), text
    assert _numbers(out / "study.json") == _numbers(done / "study.json")
    for sub in out.glob("conditions/*/seed-*"):
        read_episodes(sub / EPISODES)  # the retried log started over: no id twice


def test_sigterm_stops_a_study_as_ctrl_c_does(straight: tuple[Path, Path], tmp_path: Path) -> None:
    """K3: SIGTERM (what kill, timeout and systemd send) to the main process."""
    config, _ = straight
    out = tmp_path / "t"
    proc = _start(config, out)
    _wait_training(proc, out, 2)
    family = descendants(proc.pid)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 143, err
    assert "Traceback" not in err, err
    text = " ".join(err.split())
    assert (
        "interrupted: ensemble-uniform seed" in text and "(unfinished; reruns on --resume)" in text
    )
    assert f"interrupted: finished episodes are kept in {out}; continue with --resume" in text
    assert wait_gone(family, 10) == [], "workers outlived the stopped study"
