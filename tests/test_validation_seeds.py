"""``scripts/validation_seeds.py``: selecting sub-runs only, the correlation, the seed it picks."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "validation_seeds.py"


def sub_run(run: Path, condition: str, seed: int, real: float, validation: float | None) -> None:
    folder = run / "conditions" / condition / f"seed-{seed}"
    folder.mkdir(parents=True)
    summary: dict[str, object] = {
        "heldout_by_family": {"aci-heldout": {"gold_success": real}, "noisy-line": {}}
    }
    if validation is not None:
        summary["validation_gold"] = validation
    (folder / "summary.json").write_text(json.dumps(summary))


def test_it_reads_selecting_sub_runs_and_names_the_seed_validation_picks(tmp_path: Path) -> None:
    run = tmp_path / "run"
    for seed, (real, val) in enumerate([(0.2, 0.3), (0.6, 0.5), (0.4, 0.4), (0.9, 0.8)]):
        sub_run(run, "sel", seed, real, val)
        sub_run(run, "plain", seed, 0.5, None)  # no select: not read
    done = subprocess.run([sys.executable, str(SCRIPT), str(run)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "| run | sel | seed-3 | 80 | 90 |" in out and "plain" not in out
    assert "4 sub-runs: Pearson r = 0.98 [" in out
    assert "mean validation gold 50, mean gold on aci-heldout 52" in out
    picked = "run sel: the seed validation picks 90 on aci-heldout (validation 80)"
    assert f"{picked}; the 4 seeds' mean 52" in out


def test_a_run_without_select_is_one_line(tmp_path: Path) -> None:
    sub_run(tmp_path / "run", "plain", 0, 0.5, None)
    done = subprocess.run(
        [sys.executable, str(SCRIPT), str(tmp_path / "run")], capture_output=True, text=True
    )
    assert done.returncode == 1 and "no sub-run with validation_gold" in done.stderr
