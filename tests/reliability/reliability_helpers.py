"""Shared by the reliability tests: running the CLI in-process, process trees, tiny configs."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

from sim2human.cli.app import main

TINY: dict[str, Any] = {
    "name": "tiny-rel",
    "seeds": [0, 1],
    "train": {"episodes": 64, "batch_episodes": 32, "epochs": 1},
    "ensemble": {"members_per_family": 1},
    "eval": {"episodes_per_member": 2, "bootstrap": 100},
    "conditions": [{"name": "ensemble-uniform", "sampler": "uniform"}],
}


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    """Exit code and stderr of ``sim2human ARGV`` run in-process."""
    capsys.readouterr()
    code = main(list(argv))
    return code, capsys.readouterr().err


def assert_one_clear_error(code: int, err: str, *needles: str) -> None:
    """Exit code 2, one ``error:`` line, no traceback, and the words that name the problem."""
    assert code == 2, err
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len([line for line in lines if line.startswith("error:")]) == 1, err
    for needle in needles:
        assert needle in err, (needle, err)


def descendants(pid: int) -> list[int]:
    """Every live process below ``pid`` (Linux /proc)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def wait_gone(pids: list[int], seconds: float) -> list[int]:
    """The pids still alive (not zombies) after waiting up to ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        left = [p for p in pids if alive(p)]
        if not left:
            return []
        time.sleep(0.1)
    return [p for p in pids if alive(p)]
