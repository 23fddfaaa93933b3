"""examples/family_table.py: held-out gold per family, with n, from a run's stored episodes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from planted_runs import write_sub_run
from sim2human.store.layout import EPISODES
from sim2human.store.rundir import read_episodes

SCRIPT = Path(__file__).resolve().parents[2] / "examples" / "family_table.py"


def test_every_held_out_family_is_a_column_with_its_mean_and_n(tmp_path: Path) -> None:
    sub = write_sub_run(tmp_path / "conditions" / "scripted-like" / "seed-0", exploit=False)
    held = [e for e in read_episodes(sub / EPISODES) if e.phase == "eval" and e.split == "heldout"]
    families = sorted({e.family for e in held})
    done = subprocess.run(
        [sys.executable, str(SCRIPT), str(tmp_path), "--boot", "200"],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    header, _, row = done.stdout.strip().splitlines()
    assert header == "| condition | " + " | ".join(families) + " |"
    cells = row.strip("| ").split(" | ")
    assert cells[0] == "scripted-like"
    for family, cell in zip(families, cells[1:], strict=True):
        gold = [e.gold.success for e in held if e.family == family]
        assert cell.startswith(f"{round(100 * sum(gold) / len(gold))} [")
        assert cell.endswith(f"(n={len(gold)})")
