"""``scripts/missed_fields.py``: each failed field counted once, as asked or never asked."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "missed_fields.py"


def episode(record: dict[str, object], asks: list[str], family: str = "aci-heldout") -> str:
    turns = [{"speaker": "agent", "text": "...", "act": f"ask.{f}.plain"} for f in asks]
    turns.append({"speaker": "agent", "text": "bye", "act": "close.plain"})
    profile = {"onset": "2 days", "allergies": ["latex"], "dob": "1980-01-02"}
    return json.dumps(
        {"phase": "eval", "family": family, "turns": turns, "profile": profile, "record": record}
    )


def test_a_field_is_missing_or_wrong_and_asked_or_not(tmp_path: Path) -> None:
    run = tmp_path / "run" / "conditions" / "c" / "seed-0"
    run.mkdir(parents=True)
    lines = [
        # onset asked and missed; allergies never asked and wrong; dob right (not counted)
        episode({"onset": None, "allergies": ["nuts"], "dob": "1980-01-02"}, ["onset"]),
        # onset asked and wrong; allergies asked and missing; dob never asked and missing
        episode({"onset": "3 days", "allergies": None, "dob": None}, ["onset", "allergies"]),
        episode({"onset": None, "allergies": None, "dob": None}, [], family="noisy-line"),
    ]
    (run / "episodes.jsonl").write_text("\n".join(lines) + "\n")
    done = subprocess.run(
        [sys.executable, str(SCRIPT), str(tmp_path / "run")], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    row = next(line for line in done.stdout.splitlines() if line.startswith("| c |"))
    # calls 2 (the other family's is left out); missing asked 2, never 1; wrong asked 1, never 1
    assert row == "| c | seed-0 | 2 | 2 | 1 | 1 | 1 |"
