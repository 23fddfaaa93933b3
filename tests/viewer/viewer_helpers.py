"""A small study with a planted exploit, diagnosed, and one episode whose text is markup."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from planted_runs import write_sub_run
from sim2human.diagnostics.stored import diagnose_run
from sim2human.metrics import embeddings
from sim2human.store.layout import EPISODES

PWN = "<script>window.__pwned=1</script>"
BREAKOUT = "</script><script>window.__pwned=2</script><img src=x onerror=window.__pwned=3>"


def plant_markup(log: Path) -> str:
    """Put markup into the first held-out evaluation episode of ``log``: a user turn's text,
    an agent turn's act and a recorded field value; return that episode's id."""
    lines = log.read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(lines):
        row = json.loads(line)
        if row["phase"] == "eval" and row["split"] == "heldout":
            user = next(t for t in row["turns"] if t["speaker"] == "user")
            user["text"] = f"{PWN} {BREAKOUT}"
            row["record"]["complaint"] = PWN
            lines[i] = json.dumps(row)
            log.write_text("\n".join(lines) + "\n", encoding="utf-8")
            return str(row["id"])
    raise AssertionError("no held-out episode to plant markup in")


def make_study(root: Path) -> tuple[Path, str]:
    """Two conditions (the planted exploit and a scripted agent), diagnosed; the markup
    episode's id."""
    write_sub_run(root / "conditions" / "frozen-trigger" / "seed-0", exploit=True)
    write_sub_run(root / "conditions" / "clean" / "seed-0", exploit=False)
    planted = plant_markup(root / "conditions" / "clean" / "seed-0" / EPISODES)
    with pytest.MonkeyPatch.context() as mp:  # lexical embeddings: MiniLM is tested elsewhere
        mp.setattr(embeddings, "_load_minilm", lambda: "not needed here")
        diagnose_run(root)
    return root, planted
