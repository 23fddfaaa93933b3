"""``scripts/same_episodes.py``: two run directories, the same episodes or not, on a tiny pair."""

from __future__ import annotations

import copy
import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "same_episodes.py"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("same_episodes", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


same = _load()

EPISODE: dict[str, Any] = {
    "id": "frozen/eval/noisy-0/7",
    "turns": [
        {"speaker": "user", "text": "Hi.", "act": None, "tags": []},
        {"speaker": "agent", "text": "Goodbye.", "act": "close.plain", "tags": []},
    ],
    "proxy": 0.5,
    "gold": {"success": False, "fields": {"dob": True}, "completed": True, "dropped": False},
    "termination": "completed",
}
STUDY: dict[str, Any] = {
    "wall_seconds": 12.5,
    "conditions": [{"name": "frozen", "heldout_gold": {"mean": 0.25, "ci": [0.1, 0.4], "n": 8}}],
}


def _run(root: Path, episodes: list[dict[str, Any]], study: dict[str, Any]) -> Path:
    sub = root / "conditions" / "frozen" / "seed-0"
    sub.mkdir(parents=True)
    (sub / "episodes.jsonl").write_text("".join(json.dumps(e) + "\n" for e in episodes))
    (root / "study.json").write_text(json.dumps(study))
    return root


def _second() -> dict[str, Any]:
    return {**copy.deepcopy(EPISODE), "id": "frozen/eval/noisy-0/8", "proxy": 0.75}


@pytest.fixture
def before(tmp_path: Path) -> Path:
    return _run(tmp_path / "before", [EPISODE, _second()], STUDY)


def _verdict(before: Path, after: Path) -> tuple[int, str]:
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), str(before), str(after)], capture_output=True, text=True
    )
    return proc.returncode, (proc.stdout + proc.stderr).strip()


def test_new_keys_and_wall_time_are_the_same_run(before: Path, tmp_path: Path) -> None:
    grown = copy.deepcopy(EPISODE)
    grown["gold"] |= {"score": 0.0, "detail": {"closed": 1.0}}
    study = {**copy.deepcopy(STUDY), "wall_seconds": 99.0, "new_number": 3}
    after = _run(tmp_path / "after", [_second(), grown], study)  # another order: matched by id
    code, line = _verdict(before, after)
    assert (code, line) == (0, "same: 2 episodes in 1 episode files, and study.json")


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (
            lambda e, s: e[0]["turns"][1].update(text="Bye."),
            "line 1 (frozen/eval/noisy-0/7): turns[1].text: 'Goodbye.' is now 'Bye.'",
        ),
        (lambda e, s: e[1].update(proxy=0.5), "line 2 (frozen/eval/noisy-0/8): proxy: 0.75"),
        (lambda e, s: e[0]["gold"].pop("dropped"), "gold.dropped: missing"),
        (lambda e, s: e[0]["gold"].update(success=0), "gold.success: False is now 0"),
        (lambda e, s: e[0]["turns"].pop(), "turns: 2 items, now 1"),
        (lambda e, s: e.pop(), "(frozen/eval/noisy-0/8): missing"),
        (
            lambda e, s: s["conditions"][0]["heldout_gold"]["ci"].__setitem__(1, 0.41),
            "study.json: conditions[0].heldout_gold.ci[1]: 0.4 is now 0.41",
        ),
    ],
)
def test_every_dropped_or_changed_value_is_a_difference(
    before: Path, tmp_path: Path, change: Any, expected: str
) -> None:
    episodes, study = [copy.deepcopy(EPISODE), _second()], copy.deepcopy(STUDY)
    change(episodes, study)
    code, line = _verdict(before, _run(tmp_path / "after", episodes, study))
    assert code == 1 and line.startswith("DIFFERENT: ") and expected in line, line


def test_an_episode_file_missing_or_extra_is_a_difference(before: Path, tmp_path: Path) -> None:
    after = _run(tmp_path / "after", [EPISODE, _second()], STUDY)
    extra = after / "reference" / "scripted"
    extra.mkdir(parents=True)
    (extra / "episodes.jsonl").write_text(json.dumps(EPISODE) + "\n")
    verdict = same.compare_runs(before, after)
    assert verdict.found == [f"reference/scripted/episodes.jsonl: only in {after}"]
    assert same.compare_runs(after, before).found[0].endswith(f"missing from {before}")


def test_bad_arguments_are_one_line_and_exit_2(before: Path, tmp_path: Path) -> None:
    assert _verdict(before, tmp_path / "nowhere") == (
        2,
        f"error: {tmp_path / 'nowhere'}: not a directory",
    )
    (tmp_path / "empty").mkdir()
    code, line = _verdict(tmp_path / "empty", before)
    assert code == 2 and "not a run directory" in line
    broken = _run(tmp_path / "broken", [EPISODE], STUDY)
    (broken / "conditions" / "frozen" / "seed-0" / "episodes.jsonl").write_text("{oops\n")
    code, line = _verdict(before, broken)
    assert code == 2 and "line 1: not JSON" in line and "\n" not in line
    assert same.main(["only-one"]) == 2


def test_except_family_leaves_that_familys_episodes_and_study_json_out(
    before: Path, tmp_path: Path
) -> None:
    real = {**copy.deepcopy(EPISODE), "id": "frozen/eval/aci-heldout-D2N001/7"}
    old = _run(tmp_path / "old", [EPISODE, {**real, "family": "aci-heldout"}], STUDY)
    moved = {**real, "id": "frozen/eval/aci-heldout-D2N002/7", "family": "aci-heldout"}
    changed = {**STUDY, "conditions": [{**STUDY["conditions"][0], "heldout_gold": {}}]}
    new = _run(tmp_path / "new", [EPISODE, moved], changed)
    assert same.compare_runs(old, new).found  # without it: the real patient moved
    verdict = same.compare_runs(old, new, ("aci-heldout",))
    assert verdict.found == [] and "but for aci-heldout (study.json not compared)" in verdict.line()
    other = _run(tmp_path / "other", [{**EPISODE, "proxy": 0.9}, moved], STUDY)
    assert same.compare_runs(old, other, ("aci-heldout",)).found  # any other family still counts
    assert same.main(["--except-family", "aci-heldout", str(old), str(new)]) == 0
    assert same.main([str(old), str(new), "--except-family"]) == 2
