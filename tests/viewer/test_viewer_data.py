"""The viewer's data extraction: rows, reasons, flags, matrices, the embedded JSON, the CLI."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from viewer_helpers import PWN

from sim2human.cli.app import main
from sim2human.viewer.build import build_compare, build_view
from sim2human.viewer.compare import comparison_data, pairs, side
from sim2human.viewer.data import (
    Group,
    Strings,
    flagged_turns,
    grader_text,
    is_exploit,
    matrices,
    page_data,
    value_text,
)
from sim2human.viewer.load import exploit_flags, load_groups
from sim2human.viewer.page import embed_json


def embedded(html: str) -> dict[str, object]:
    found = re.search(
        r'<script type="application/json" id="viewer-data">(.*?)</script>', html, re.S
    )
    assert found is not None
    data: dict[str, object] = json.loads(found.group(1))
    return data


def groups_of(study: tuple[Path, str]) -> list[Group]:
    return load_groups(study[0], None)[1]


def test_value_text_reads_as_a_person_would() -> None:
    assert value_text(None) == "-"
    assert value_text(True) == "yes"
    assert value_text(("ibuprofen", "motrin")) == "ibuprofen, motrin"
    assert value_text(()) == "none"
    assert value_text(8) == "8"


def test_strings_are_stored_once() -> None:
    s = Strings()
    assert [s("a"), s("b"), s("a")] == [0, 1, 0]
    assert s.items == ["a", "b"]


def test_rows_carry_the_graders_reasons_and_termination(study: tuple[Path, str]) -> None:
    groups = groups_of(study)
    data = page_data(groups, {})
    assert len(data) == sum(len(g.episodes) for g in groups)
    planted = data.row(data.ids.index(study[1]))
    episode = next(e for g in groups for e in g.episodes if e.id == study[1])
    why = planted["why"]
    assert set(why) == set(episode.gold.fields)
    right = int(episode.gold.fields["complaint"])  # the stored verdict, as graded
    assert why["complaint"] == (right, value_text(episode.profile["complaint"]), PWN)
    assert planted["t"] == str(episode.termination)
    assert planted["c"] == "clean" and planted["s"] == "heldout"
    assert planted["tu"] == [t.text for t in episode.turns]
    assert planted["w"] == grader_text(episode)  # its words: test_the_grader_column_...


def test_the_grader_column_names_the_wrong_fields(study: tuple[Path, str]) -> None:
    e = groups_of(study)[0].episodes[0]

    def graded(fields: dict[str, bool], success: bool = False) -> str:
        return grader_text(
            e.model_copy(
                update={"gold": e.gold.model_copy(update={"fields": fields, "success": success})}
            )
        )

    assert graded({"a": True}, success=True) == "success"
    assert graded({"a": True}) == "not achieved"
    assert graded({"a": False, "b": True}) == "1/2 wrong: a"
    assert graded({"a": False, "b": False, "c": False, "d": True}) == "3/4 wrong: a, b, +1"


def test_only_failed_keeps_the_failures(study: tuple[Path, str]) -> None:
    groups = groups_of(study)
    failed = page_data(groups, {}, only_failed=True).columns["ok"]
    assert failed and all(ok == 0 for ok in failed)
    assert len(failed) == sum(not e.gold.success for g in groups for e in g.episodes)


def test_exploit_is_proxy_high_and_gold_low(study: tuple[Path, str]) -> None:
    e = groups_of(study)[0].episodes[0]

    def played(proxy: float, score: float) -> bool:
        gold = e.gold.model_copy(update={"score": score, "success": score == 1.0})
        return is_exploit(e.model_copy(update={"proxy": proxy, "gold": gold}))

    assert played(0.9, 0.0) and played(0.7, 0.49)
    assert not played(0.69, 0.0) and not played(0.9, 0.5) and not played(1.0, 1.0)


def test_the_exploit_finders_phrasing_is_flagged(study: tuple[Path, str]) -> None:
    flags = exploit_flags(study[0], None, lambda _: None)
    assert flags["frozen-trigger"] == ["style.hands"] and flags["clean"] == []
    trigger = next(g for g in groups_of(study) if g.condition == "frozen-trigger")
    e = trigger.episodes[0]
    assert flagged_turns(e, flags["frozen-trigger"]) == [
        i for i, t in enumerate(e.turns) if t.act == "style.hands"
    ]
    assert flagged_turns(e, flags["frozen-trigger"])  # the planted agent says it every call
    data = page_data(groups_of(study), flags)
    rows = [data.row(i) for i in range(len(data))]
    assert all(r["h"] == [] for r in rows if r["id"].startswith("scripted-like"))


def test_a_missing_or_stale_diagnosis_is_a_note(study: tuple[Path, str], tmp_path: Path) -> None:
    import shutil

    run = tmp_path / "copy"
    shutil.copytree(study[0], run)
    notes: list[str] = []
    (run / "diagnosis.json").unlink()
    assert exploit_flags(run, None, notes.append) == {}
    assert "diagnosis.json missing" in notes[0]
    shutil.copy2(study[0] / "diagnosis.json", run / "diagnosis.json")
    log = run / "conditions" / "clean" / "seed-0" / "episodes.jsonl"
    log.write_text(log.read_text().splitlines()[0] + "\n")
    notes.clear()
    assert exploit_flags(run, None, notes.append)["frozen-trigger"] == ["style.hands"]
    assert "the run changed since it was diagnosed" in notes[0]
    from sim2human.viewer.load import stored_diagnosis

    assert stored_diagnosis(run, None, notes.append).transfers == {}  # computed afresh instead


def test_the_matrix_is_gold_per_heldout_family_against_each_train_family(
    study: tuple[Path, str],
) -> None:
    groups = groups_of(study)
    grid = next(m for m in matrices(groups) if m.condition == "frozen-trigger")
    episodes = next(g for g in groups if g.condition == "frozen-trigger").episodes
    assert [t for t, _, _ in grid.train] == ["standard"]
    assert sorted(grid.heldout) == ["noisy-line", "terse-guarded"]
    train_gold = grid.train[0][1]
    for h in grid.heldout:
        scores = [e.gold.score for e in episodes if e.split == "heldout" and e.family == h]
        cell = grid.cells[("standard", h)]
        assert cell.n == len(scores) and cell.gold == pytest.approx(sum(scores) / len(scores))
        assert cell.gap == pytest.approx(cell.gold - train_gold)


def test_embedded_json_cannot_close_its_script_element() -> None:
    data = {"t": "</script><script>alert(1)</script> & \u2028 <!--"}
    text = str(embed_json(data))
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text) == data


def test_the_page_embeds_every_episode_once_and_no_raw_markup(study: tuple[Path, str]) -> None:
    html = build_view(study[0], lambda _: None)
    data = embedded(html)
    assert len(data["ids"]) == 36  # type: ignore[arg-type]
    assert PWN not in html and "window.__pwned" in html  # as JSON escapes, not as markup
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)  # nothing fetched


def test_compare_pairs_the_same_member_and_seed(study: tuple[Path, str]) -> None:
    groups = groups_of(study)
    a, b = side("r", groups, "frozen-trigger"), side("r", groups, "clean")
    assert a is not None and b is not None
    paired, found = pairs(a, b)
    assert paired == 18  # both conditions evaluated the same held-out members with the same seeds
    assert found and all(ea.gold.success != eb.gold.success for _, ea, _, eb in found)
    assert all(ea.seed == eb.seed and ea.simulator_id == eb.simulator_id for _, ea, _, eb in found)
    comparisons, data, extra = comparison_data([(a, b)], n_boot=50)
    assert comparisons[0].differing == len(found) == len(extra["pairs"]) == len(data) // 2
    assert comparisons[0].ta.train_gold.n == 6


def test_compare_of_two_runs_matches_their_shared_conditions(study: tuple[Path, str]) -> None:
    html, comparisons = build_compare(study[0], study[0], [], lambda _: None)
    assert [c.a.label for c in comparisons] == [
        "viewer-study0:clean",
        "viewer-study0:frozen-trigger",
    ]
    assert all(c.differing == 0 for c in comparisons)  # a run against itself
    assert "sim2human compare" in html


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def one_error(code: int, err: str, needle: str) -> None:
    assert code == 2, err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:") and needle in err, err


def test_view_writes_into_the_run_or_to_out(
    study: tuple[Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "page.html"
    code, printed, _ = run_cli(["view", str(study[0]), "--out", str(out), "--only-failed"], capsys)
    assert code == 0 and f"viewer: {out}" in printed
    assert all(ok == 0 for ok in embedded(out.read_text())["cols"]["ok"])  # type: ignore[index]
    assert not (study[0] / "view.html").exists()
    code, printed, _ = run_cli(["view", str(study[0]), "--condition", "clean"], capsys)
    assert code == 0 and (study[0] / "view.html").is_file()
    (study[0] / "view.html").unlink()


def test_out_linked_to_a_device_is_refused_and_the_link_kept(
    study: tuple[Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    link = tmp_path / "stdout"
    link.symlink_to("/dev/null")  # as /dev/stdout links to /proc/self/fd/1
    code, _, err = run_cli(["view", str(study[0]), "--out", str(link)], capsys)
    one_error(code, err, "not a file")
    assert link.is_symlink() and Path("/dev/null").is_char_device()


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["view", "{tmp}/nowhere"], "no such run directory"),
        (["view", "{run}", "--condition", "nope"], "no condition 'nope'"),
        (["view", "{tmp}", "--out", "{tmp}/x.html"], "not a run directory"),
        (["view", "{run}", "--out", "{tmp}"], "is a directory"),
        (["compare", "{run}"], "give a second run directory, or --conditions A B"),
        (["compare", "{run}", "--conditions", "clean", "nope"], "condition 'nope'"),
        (["compare", "{run}", "{tmp}/nowhere"], "no such run directory"),
    ],
)
def test_bad_input_is_one_error_line_exit_2(
    argv: list[str],
    needle: str,
    study: tuple[Path, str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = [a.format(run=study[0], tmp=tmp_path) for a in argv]
    code, _, err = run_cli(args, capsys)
    one_error(code, err, needle)
    assert not (study[0] / "view.html").exists() and not (study[0] / "compare.html").exists()


HOLD = """
import sys, time
from pathlib import Path
from sim2human.store import lock
with lock.run_lock(Path(sys.argv[1]), "study"):
    print("held", flush=True)
    time.sleep(60)
"""


def test_a_run_it_cannot_write_needs_out(
    study: tuple[Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import subprocess
    import sys

    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(study[0])], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        code, _, err = run_cli(["view", str(study[0])], capsys)
        one_error(code, err.split("\n", 1)[-1] if err.startswith("note") else err, "--out")
        assert not (study[0] / "view.html").exists()
        code, _, _ = run_cli(["view", str(study[0]), "--out", str(tmp_path / "v.html")], capsys)
        assert code == 0 and (tmp_path / "v.html").is_file()
    finally:
        holder.kill()
        holder.wait()


def test_a_run_without_evaluation_episodes_is_one_error(
    study: tuple[Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import shutil

    sub = tmp_path / "trained-only"
    shutil.copytree(study[0] / "conditions" / "clean" / "seed-0", sub)
    log = sub / "episodes.jsonl"
    rows = [json.loads(line) for line in log.read_text().splitlines()]
    log.write_text("".join(json.dumps({**r, "phase": "train"}) + "\n" for r in rows))
    code, _, err = run_cli(["view", str(sub), "--out", str(tmp_path / "v.html")], capsys)
    one_error(code, err, "no evaluation episodes")
    assert not (tmp_path / "v.html").exists()


def test_a_fresh_diagnosis_gives_the_same_estimates_as_computing_them(
    study: tuple[Path, str],
) -> None:
    from sim2human.viewer.load import stored_diagnosis
    from sim2human.viewer.page import condition_rows

    groups = groups_of(study)
    stored = stored_diagnosis(study[0], None, lambda _: None)
    assert set(stored.transfers) == {"clean", "frozen-trigger"}
    computed = condition_rows(groups)
    reused = condition_rows(groups, known=stored.transfers)
    assert [r.transfer for r in reused] == [r.transfer for r in computed]
