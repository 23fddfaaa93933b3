"""`diagnose` and `report` on planted, missing, partial and corrupted run directories."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from planted_runs import write_sub_run
from sim2human.cli.app import main
from sim2human.metrics import embeddings
from sim2human.store.layout import EPISODES, MEMBERS, SUMMARY


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A study directory with one exploiting and one clean condition (no study.json)."""
    root = tmp_path_factory.mktemp("study")
    write_sub_run(root / "conditions" / "frozen-trigger" / "seed-0", exploit=True)
    write_sub_run(root / "conditions" / "clean" / "seed-0", exploit=False)
    return root


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(args)
    out = capsys.readouterr()
    text = " ".join((out.out + out.err).split())  # rich wraps long lines
    assert "Traceback" not in text
    return code, text


def test_gate_fails_the_exploiting_condition_and_passes_the_clean_one(
    study: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, text = run(
        ["diagnose", str(study), "--condition", "frozen-trigger", "--fail-on-collapse"], capsys
    )
    assert code == 1 and "You're in good hands with us." in text
    clean = ["diagnose", str(study), "--condition", "clean", "--fail-on-collapse"]
    code, text = run([*clean, "--min-n", "1"], capsys)
    assert code == 0 and "clean" in text
    # 6 episodes a side: the gate says it cannot judge, and does not pass it
    code, text = run(clean, capsys)
    assert code == 3 and "cannot judge: `clean`: 6 episodes" in text
    assert run(clean[:4], capsys)[0] == 0  # no gate: the line is printed, exit 0
    # one condition collapsed, the other too thin to judge: the collapse decides (it was 3)
    code, text = run(["diagnose", str(study), "--fail-on-collapse"], capsys)
    assert code == 1 and "collapse detected in frozen-trigger" in text
    assert "cannot judge clean" in text
    sub = study / "conditions" / "frozen-trigger" / "seed-0"
    assert run(["diagnose", str(sub), "--fail-on-collapse"], capsys)[0] == 1
    assert run(["diagnose", str(sub)], capsys)[0] == 0  # findings only, no gate


def test_thresholds_are_flags(study: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _ = run(
        [
            *("diagnose", str(study), "--condition", "clean", "--fail-on-collapse"),
            "--max-drop",
            "0",
            "--min-n",
            "1",
        ],
        capsys,
    )
    # The scripted agent does drop from its training member to held-out ones; with no
    # tolerance at all the gate trips when that drop's CI excludes 0, and passes otherwise.
    assert code in (0, 1)
    assert run(["diagnose", str(study), "--max-gap", "2"], capsys)[0] == 2


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["diagnose", "{missing}"], "no such run directory"),
        (["report", "{missing}"], "no such run directory"),
        (["diagnose", "{empty}"], "not a run directory"),
        (["diagnose", "{study}", "--condition", "nope"], "no condition 'nope'"),
    ],
)
def test_bad_usage_exits_2_with_one_clear_line(
    study: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    message: str,
) -> None:
    (tmp_path / "empty").mkdir()
    paths = {"missing": tmp_path / "nope", "empty": tmp_path / "empty", "study": study}
    code, text = run([a.format(**paths) for a in args], capsys)
    assert code == 2 and message in text


def test_corrupted_and_interrupted_runs_give_a_partial_report(
    study: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Without the MiniLM extra the report falls back to lexical embeddings and says so.
    monkeypatch.setattr(embeddings, "_load_minilm", lambda: "the embeddings extra is absent")
    root = tmp_path / "broken"
    shutil.copytree(study, root)
    bad = root / "conditions" / "frozen-trigger" / "seed-0" / EPISODES
    lines = bad.read_text().splitlines()
    lines[3] = lines[3][:40]  # a torn line in the middle: damage, not an interrupted write
    lines[5] = json.dumps({"id": "x"})  # valid JSON, not an episode
    bad.write_text("\n".join(lines) + "\n")
    unfinished = root / "conditions" / "clean" / "seed-0"
    (unfinished / SUMMARY).unlink()
    (unfinished / MEMBERS).unlink()
    code, text = run(["report", str(root)], capsys)
    assert code == 0, text
    html = (root / "report.html").read_text()
    assert f"{bad}: 1 corrupted line(s) skipped (first: line 4" in html
    assert "line 6: " in html and "not episodes" in html
    assert "did not finish" in html
    assert "You&#39;re in good hands with us." in html  # the exploit is still found
    assert "the lexical fallback" in html
    assert (root / "report.md").exists()
    strict = json.loads((root / "report.json").read_text(), parse_constant=pytest.fail)
    assert strict["kind"] == "study"


def test_a_run_with_nothing_finished_cannot_be_judged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sub = write_sub_run(tmp_path / "run", exploit=True)
    (sub / EPISODES).write_text("")
    code, text = run(["diagnose", str(sub), "--fail-on-collapse"], capsys)
    assert code == 2 and "nothing to judge" in text
    (sub / "metrics.jsonl").write_text("")
    code, text = run(["report", str(sub)], capsys)
    assert code == 2 and "nothing to read" in text
