"""End to end with a real study in a subprocess: a second writer is refused while it runs,
``kill -9`` of it leaves no process behind, and ``--resume`` then gives exactly the study.json
of a straight-through run (numbers compared with each other, never with constants)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from reliability_helpers import TINY, assert_one_clear_error, descendants, run_cli, wait_gone

from sim2human.store import EPISODES, read_episodes

pytestmark = [
    pytest.mark.slow,  # three tiny studies: about a minute on 2 idle cores
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc"),
]


def _numbers(path: Path) -> str:
    study: dict[str, Any] = json.loads(path.read_text())
    study.pop("wall_seconds")
    return json.dumps(study, sort_keys=True)


def test_kill_9_then_resume_reproduces_a_straight_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "tiny.yaml"
    config.write_text(yaml.safe_dump({**TINY, "train": {**TINY["train"], "episodes": 256}}))
    straight, killed = tmp_path / "straight", tmp_path / "killed"
    assert run_cli(capsys, "study", str(config), "--out", str(straight), "--workers", "2")[0] == 0

    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "sim2human.cli",
            "study",
            str(config),
            "--out",
            str(killed),
            "--workers",
            "2",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
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
    assert _numbers(killed / "study.json") == _numbers(straight / "study.json")
    for sub in killed.glob("conditions/*/seed-*"):
        episodes = read_episodes(sub / EPISODES)  # refuses duplicate ids
        assert len({e.id for e in episodes}) == len(episodes)
