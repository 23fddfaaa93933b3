"""Reading episode logs: the one-pass parse gives what ``json.loads`` + ``model_validate`` gave,
and a broken line is still reported in the readers' own words."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from planted_runs import write_sub_run
from sim2human.diagnostics.rundir import load_sub_run
from sim2human.errors import RunDirError
from sim2human.store.layout import EPISODES
from sim2human.store.rundir import parse_episode, read_episodes
from sim2human.types import Episode


def _types(e: Episode) -> list[tuple[str, type]]:
    return [(k, type(v)) for k, v in [*e.profile.items(), *e.record.items()]]


def test_the_one_pass_parse_gives_what_the_two_pass_one_gives(tmp_path: Path) -> None:
    lines = (write_sub_run(tmp_path / "sub", exploit=True, per_member=2) / EPISODES).read_text()
    rows = [json.loads(line) for line in lines.splitlines()]
    legacy = {k: v for k, v in rows[0].items() if k != "kind"} | {"family": "llm:chatty"}
    odd = rows[1] | {"proxy": 1, "seed": 7.0, "diagnostics": {"a": float("nan"), "b": 2}}
    for row in [*rows, legacy, odd]:
        line = json.dumps(row)
        fast, slow = parse_episode(line), Episode.model_validate(json.loads(line))
        assert fast is not None
        assert fast.model_dump_json() == slow.model_dump_json()
        assert _types(fast) == _types(slow)  # 8 stays an int, true a bool, [] a tuple
    assert parse_episode(json.dumps(legacy)) is not None
    assert parse_episode(json.dumps(legacy)).kind == "llm"  # type: ignore[union-attr]
    assert parse_episode('{"id": "x"') is None and parse_episode('{"id": "x"}') is None


def _broken_log(tmp_path: Path) -> Path:
    sub = write_sub_run(tmp_path / "sub", exploit=False, per_member=2)
    good = (sub / EPISODES).read_text().splitlines()
    bad_row = json.loads(good[1]) | {"proxy": 3.0}
    lines = [good[0], "{not json", json.dumps(bad_row), good[2], '{"id": "torn']
    (sub / EPISODES).write_text("\n".join(lines))
    return sub


def test_a_broken_log_is_reported_as_before(tmp_path: Path) -> None:
    sub = _broken_log(tmp_path)
    run = load_sub_run(sub)
    assert len(run.episodes) == 2
    log = sub / EPISODES
    assert f"{log}: 1 corrupted line(s) skipped (first: line 2: Expecting property name " in (
        "\n".join(run.problems)
    )
    assert (
        f"{log}: 1 line(s) are not episodes (first: line 3: proxy: "
        "Input should be less than or equal to 1)"
    ) in run.problems
    with pytest.raises(RunDirError, match=r":2: not valid JSON \(Expecting property name"):
        read_episodes(log)
    lines = log.read_text().splitlines()
    log.write_text("\n".join(lines[:1] + lines[2:]))
    with pytest.raises(RunDirError, match=r":2: not an episode \(proxy: Input should be less"):
        read_episodes(log)
    log.write_text("\n".join(lines[:1] + lines[3:]))  # the torn last line is skipped
    assert [e.id for e in read_episodes(log)] == [e.id for e in run.episodes]


def test_a_line_separator_inside_a_turn_does_not_split_the_episode(tmp_path: Path) -> None:
    sub = write_sub_run(tmp_path / "sub", exploit=False, per_member=2)
    log = sub / EPISODES
    rows = [json.loads(line) for line in log.read_text().split("\n") if line]
    rows[0]["turns"][0]["text"] = "one\u2028two\u0085three\x1cfour"
    # ensure_ascii=False writes the separators raw, as pydantic's model_dump_json does
    log.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    assert "\u2028" in log.read_text()
    episodes = read_episodes(log)
    assert len(episodes) == len(rows)
    assert episodes[0].turns[0].text == "one\u2028two\u0085three\x1cfour"
    assert len(load_sub_run(sub).episodes) == len(rows)
