"""``scripts/real_gap.py``: real people's gold minus held-out families' gold, with a CI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "real_gap.py"


def write_seed(sub: Path, real: list[int], held: list[int]) -> None:
    sub.mkdir(parents=True)
    rows = [("aci-heldout", f"visit-{i % 4}", g) for i, g in enumerate(real)]
    rows += [("noisy-line", f"member-{i % 3}", g) for i, g in enumerate(held)]
    rows.append(("cooperative", "member-0", 0))  # a training call: not counted
    lines = [
        json.dumps(
            {
                "phase": "eval",
                "split": "train" if fam == "cooperative" else "heldout",
                "family": fam,
                "simulator_id": sid,
                "gold": {"success": bool(g)},
            }
        )
        for fam, sid, g in rows
    ]
    (sub / "episodes.jsonl").write_text("\n".join(lines) + "\n")


def run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, str(SCRIPT), *map(str, args)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60)


def test_the_gap_is_people_minus_families_averaged_over_seeds(tmp_path: Path) -> None:
    cond = tmp_path / "conditions" / "human"
    write_seed(cond / "seed-0", real=[1] * 8, held=[1, 0] * 6)  # 100 - 50
    write_seed(cond / "seed-1", real=[1, 1, 1, 0] * 2, held=[1] * 12)  # 75 - 100
    done = run(tmp_path, "human")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("human: aci-heldout minus held-out families = +12 [")
    lo, hi = (int(x) for x in done.stdout.split("[")[1].split("]")[0].split(", "))
    assert -75 <= lo < 12 < hi <= 75  # resampling seeds reaches either seed alone


def test_a_missing_condition_is_one_usage_error(tmp_path: Path) -> None:
    done = run(tmp_path, "nope")
    assert done.returncode == 2 and "no sub-runs of condition 'nope'" in done.stderr
