"""``study --executor ray`` when its Ray node dies: ``kill -9`` of the raylet mid-study ends the
study within a bounded time, exit 1, with the "failed ... --resume" line a dead local worker
gives (it waited for ever before ``ray_watch``). A real CLI run in its own process and its own
local cluster, so the module cluster of ``test_ray_executor`` is never touched.

Skipped where Ray is not installed; Linux only (reads /proc)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

pytest.importorskip("ray", reason="the ray extra is not installed (pip install ray)")

from tiny_study import TINY

BOUND_S = 60.0
"""How long the study may take to end after its node died."""


def _descendants(root: int) -> dict[int, bytes]:
    """Every process below ``root`` (pid: command line), from /proc."""
    parents: dict[int, int] = {}
    cmds: dict[int, bytes] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmds[int(entry.name)] = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    found, frontier = {}, [root]
    while frontier:
        pid = frontier.pop()
        for child, parent in parents.items():
            if parent == pid and child not in found:
                found[child] = cmds.get(child, b"")
                frontier.append(child)
    return found


def _wait_for(
    what: str, proc: subprocess.Popen[bytes], test: Callable[[bytes], bool], limit: float
) -> int:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline and proc.poll() is None:
        for pid, cmd in _descendants(proc.pid).items():
            if test(cmd):
                return pid
        time.sleep(0.2)
    raise AssertionError(f"no {what} seen within {limit} s (study rc={proc.poll()})")


def _kill_the_raylet_mid_study(
    tmp_path: Path, *options: str, bound: float = BOUND_S
) -> tuple[int, str, float, Path]:
    """A study on its own local Ray cluster (``options`` added to its command line), the
    raylet killed once a worker runs a unit: exit code, output, seconds from the kill to the
    end, and the run directory."""
    config = tmp_path / "study.yaml"
    config.write_text(yaml.safe_dump({**TINY, "train": {**TINY["train"], "episodes": 2048}}))
    out = tmp_path / "run"
    env = {**os.environ, "SIM2HUMAN_RAY_LOST_AFTER_S": "5"}
    cmd = [sys.executable, "-m", "sim2human", "study", str(config), "--out", str(out)]
    proc = subprocess.Popen(
        [*cmd, "--executor", "ray", "--workers", "1", *options],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    seen: dict[int, bytes] = {}
    try:
        _wait_for("busy worker", proc, lambda c: c.startswith(b"ray::_Host.run"), 120)
        seen = _descendants(proc.pid)
        raylet = _wait_for("raylet", proc, lambda c: b"raylet/raylet\0" in c, 5)
        os.kill(raylet, signal.SIGKILL)
        killed = time.monotonic()
        try:
            text, _ = proc.communicate(timeout=bound)
        except subprocess.TimeoutExpired:
            pytest.fail(f"the study still ran {bound} s after its Ray node died")
        took = time.monotonic() - killed
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for pid, cmd in seen.items():  # what the study started and left, by pid
            try:
                if Path(f"/proc/{pid}/cmdline").read_bytes() == cmd:
                    os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
    return proc.returncode, text.decode(errors="replace"), took, out


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_lost_ray_node_ends_the_study_with_the_resume_line(tmp_path: Path) -> None:
    rc, output, took, out = _kill_the_raylet_mid_study(tmp_path)
    assert rc == 1, output[-2000:]
    assert "the Ray cluster has no alive node" in output, output[-2000:]
    assert f"--resume --out {out}" in output.replace("\n", " "), output[-2000:]
    assert took < BOUND_S


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_lost_ray_node_s_units_run_here_with_on_ray_loss_local(tmp_path: Path) -> None:
    """``--on-ray-loss local``: the same kill, and the study finishes on this machine with a
    local run's ending: exit 0, nothing failed, every sub-run finished."""
    rc, output, _, out = _kill_the_raylet_mid_study(tmp_path, "--on-ray-loss", "local", bound=600)
    flat = output.replace("\n", " ")
    assert rc == 0, output[-2000:]
    assert "the Ray cluster has no alive node" in flat, output[-2000:]
    assert "on this machine (--on-ray-loss local)" in flat, output[-2000:]
    assert "--resume" not in flat, output[-2000:]
    study = json.loads((out / "study.json").read_text())
    assert not study.get("failed")  # written only when something failed
    assert len(list(out.glob("conditions/*/seed-*/summary.json"))) == 2
