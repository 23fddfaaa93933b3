"""``scripts/seed_table.py``: each seed's held-out gold / real-people gold / median turns, the
final evaluation's held-out calls only, seeds in numeric order, the reference on its own row."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "seed_table.py"


def episode(family: str, success: bool, agent_turns: int, **over: str) -> str:
    turns = [{"speaker": s, "text": "x"} for _ in range(agent_turns) for s in ("user", "agent")]
    e = {"phase": "eval", "split": "heldout", "family": family, "gold": {"success": success}}
    return json.dumps({**e, "turns": turns, **over})


def write(folder: Path, lines: list[str]) -> None:
    folder.mkdir(parents=True)
    (folder / "episodes.jsonl").write_text("\n".join(lines) + "\n")


def test_each_seed_is_a_cell_and_training_calls_are_left_out(tmp_path: Path) -> None:
    run = tmp_path / "run"
    for seed in (0, 2, 10):  # 10 after 2: numeric order
        write(
            run / "conditions" / "ens" / f"seed-{seed}",
            [
                episode("noisy-line", True, 10),
                episode("noisy-line", seed == 0, 12 + seed),
                episode("aci-heldout", True, 30),  # real people: no turns counted
                episode("noisy-line", False, 99, phase="train", split="train"),
            ],
        )
    write(run / "reference" / "scripted", [episode("noisy-line", True, 9)])
    done = subprocess.run(
        [sys.executable, str(SCRIPT), str(run), "aci-heldout"], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "| condition | seed 0 | seed 2 | seed 10 | median turns |"
    assert "| ens | 100 / 100 / 11 | 50 / 100 / 12 | 50 / 100 / 16 | 11 |" in lines
    assert "| scripted (reference) | 100 / - / 9 |  |  | 9 |" in lines


def test_a_folder_without_sub_runs_is_one_line(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), str(tmp_path)], capture_output=True, text=True
    )
    assert done.returncode == 1 and "no sub-run's episodes.jsonl" in done.stderr
    assert "Traceback" not in done.stderr
