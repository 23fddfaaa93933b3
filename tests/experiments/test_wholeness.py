"""A finished sub-run proves it is whole: its log is checked against its summary's counts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from planted_runs import write_sub_run
from sim2human.experiments.study.wholeness import (
    LOGGED,
    ForeignEpisodes,
    TornSubRun,
    counts,
    read_whole,
    shortfall,
)
from sim2human.store.layout import EPISODES, SUMMARY
from sim2human.store.rundir import read_episodes


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A sub-run whose summary records its counts, as ``run_condition`` writes them."""
    sub = write_sub_run(tmp_path_factory.mktemp("whole") / "sub", exploit=False, per_member=4)
    have = counts(read_episodes(sub / EPISODES))
    summary = {
        "train": {"n": have["train"]},
        "heldout": {"n": have["heldout"]},
        LOGGED: have[LOGGED],
    }
    (sub / SUMMARY).write_text(json.dumps(summary))
    return sub


def _copy(planted: Path, tmp_path: Path) -> Path:
    sub = tmp_path / "sub"
    sub.mkdir()
    for f in planted.iterdir():
        (sub / f.name).write_bytes(f.read_bytes())
    return sub


def test_a_whole_sub_run_reads(planted: Path) -> None:
    summary, episodes = read_whole(planted, "intake", "rerun it")
    assert len(episodes) == summary[LOGGED] == 12  # 4 on the train member, 2 x 4 held out


def test_a_log_cut_in_half_is_torn_and_says_by_how_much(planted: Path, tmp_path: Path) -> None:
    sub = _copy(planted, tmp_path)
    data = (sub / EPISODES).read_bytes()
    (sub / EPISODES).write_bytes(data[: len(data) // 2])
    with pytest.raises(TornSubRun) as torn:
        read_whole(sub, "intake", "rerun it")
    text = str(torn.value)
    assert text.startswith(f"{sub}: torn: its episodes.jsonl holds ")
    assert "of the 8 held-out evaluations" in text and "of the 12 episodes" in text
    assert text.endswith("that summary.json records; rerun it")


def test_an_appended_episode_is_torn_too(planted: Path, tmp_path: Path) -> None:
    sub = _copy(planted, tmp_path)
    first = json.loads((sub / EPISODES).read_text().splitlines()[0])
    with (sub / EPISODES).open("a") as f:
        f.write(json.dumps({**first, "id": "one more"}) + "\n")
    with pytest.raises(TornSubRun, match="holds 5 of the 4 train-member evaluations"):
        read_whole(sub, "intake", "rerun it")


def test_an_unreadable_log_or_summary_is_torn(planted: Path, tmp_path: Path) -> None:
    sub = _copy(planted, tmp_path)
    (sub / SUMMARY).write_text("[1, 2]")
    with pytest.raises(TornSubRun, match=r"finished, but unreadable .*not a JSON object"):
        read_whole(sub, "intake", "rerun it")


def test_another_scenario_s_episodes_are_refused_naming_the_file(planted: Path) -> None:
    with pytest.raises(ForeignEpisodes) as wrong:
        read_whole(planted, "pizza", "rerun it")
    assert str(wrong.value).startswith(f"{planted / EPISODES}: episode 1 ")
    assert "is of scenario 'intake', but the study's scenario is 'pizza'" in str(wrong.value)


def test_summaries_without_counts_or_with_skipped_lines(planted: Path) -> None:
    episodes = read_episodes(planted / EPISODES)
    assert shortfall({"condition": "x"}, episodes[:3]) == ""  # records nothing: nothing to check
    old = {"train": {"n": 4}, "heldout": {"n": 8}}  # written before episodes_logged existed
    assert shortfall(old, episodes) == ""
    assert "7 of the 8 held-out" in shortfall(old, episodes[:-1])
    assert shortfall(old, episodes[:-1], unreadable=1) == ""  # that line is already reported
