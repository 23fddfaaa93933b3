"""``scripts/tables.py``: the README's and the docs' measured tables, written from a run."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sim2human.diagnostics.rundir import load_run_dir
from sim2human.experiments.study.config import parse_study
from sim2human.experiments.study.results import load_study_result
from sim2human.experiments.study.runner import run_study
from sim2human.report.summary import summarise
from tiny_study import TINY

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "tables.py"
PAGE = """# Results

Before.
<!-- tables:provenance -->
stale provenance
<!-- /tables:provenance -->

<!-- tables:demo -->
| stale | table |
<!-- /tables:demo -->
After.
<!-- tables:families -->
<!-- /tables:families -->
"""


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("tables") / "run"
    run_study(parse_study(TINY), out, workers=1)
    return out


def tables(*args: str | Path) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, str(SCRIPT), *map(str, args)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def markdown_rows(text: str, name: str) -> list[list[str]]:
    body = text.split(f"<!-- tables:{name} -->\n")[1].split(f"<!-- /tables:{name} -->")[0]
    lines = [ln for ln in body.splitlines() if ln.startswith("|")]
    return [[c.strip() for c in ln.strip("|").split("|")] for ln in lines]


def test_demo_table_is_the_command_table_cell_for_cell(tiny_run: Path, tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(PAGE)
    done = tables(tiny_run, "--commit", "abc1234", "--machine", "a test box", "--into", page)
    assert done.returncode == 0, done.stderr
    rows = markdown_rows(page.read_text(), "demo")
    shown = summarise(None, load_run_dir(tiny_run), load_study_result(tiny_run)).table("gold")
    assert shown is not None
    assert rows[0] == list(shown.columns)
    assert rows[1][0] == "---"
    assert len(rows[2:]) == len(shown.rows) == 3  # two conditions and the scripted reference
    assert rows[2:] == [list(r) for r in shown.rows]


def test_filling_keeps_the_page_and_is_idempotent(tiny_run: Path, tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(PAGE)
    args = (tiny_run, "--commit", "abc1234", "--machine", "a test box", "--into", page)
    assert tables(*args).returncode == 0
    once = page.read_text()
    assert once.startswith("# Results\n\nBefore.\n") and "\nAfter.\n" in once
    assert "stale" not in once
    study = load_study_result(tiny_run)
    assert (
        f"Measured with `sim2human demo` at commit `abc1234` on a test box: 1 seeds, "
        f"64 training episodes per agent, {study.wall_seconds:.0f} s wall;"
    ) in once
    families = markdown_rows(once, "families")
    assert families[0] == ["condition", *sorted(study.conditions[0].heldout_gold_by_family)]
    assert tables(*args).returncode == 0
    assert page.read_text() == once


def test_an_unknown_table_is_one_line_and_leaves_the_file(tiny_run: Path, tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    text = PAGE + "<!-- tables:nope -->\n<!-- /tables:nope -->\n"
    page.write_text(text)
    done = tables(tiny_run, "--commit", "x", "--into", page)
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0
    assert "unknown table 'nope'" in done.stderr and str(page) in done.stderr
    assert page.read_text() == text


def test_a_file_without_markers_or_a_missing_run_is_refused(tiny_run: Path, tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("no markers here\n")
    for run in (tmp_path / "no-run", tiny_run):
        done = tables(run, "--commit", "x", "--into", page)
        assert done.returncode == 2, done.stderr
        assert done.stderr.startswith("error: ") and done.stderr.count("\n") == 1
    assert "no <!-- tables:NAME --> markers" in done.stderr
    assert page.read_text() == "no markers here\n"


def test_a_set_fills_its_own_markers_and_leaves_the_others(tiny_run: Path, tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    second = "<!-- tables:demo@three-seeds -->\nold\n<!-- /tables:demo@three-seeds -->\n"
    page.write_text(PAGE + second)
    assert tables(tiny_run, "--commit", "x", "--into", page).returncode == 0
    plain = page.read_text()
    assert "<!-- tables:demo@three-seeds -->\nold\n" in plain  # not its set
    done = tables(tiny_run, "--commit", "y", "--set", "three-seeds", "--into", page)
    assert done.returncode == 0, done.stderr
    both = page.read_text()
    assert markdown_rows(both, "demo@three-seeds") == markdown_rows(both, "demo")
    assert (
        both.split("<!-- tables:demo@three-seeds -->")[0]
        == plain.split("<!-- tables:demo@three-seeds -->")[0]
    )  # the unmarked tables are the first fill's, commit x
    missing = tables(tiny_run, "--commit", "y", "--set", "nope", "--into", page)
    assert missing.returncode == 2 and "no <!-- tables:NAME@nope --> markers" in missing.stderr


def test_the_predictivity_table_comes_from_the_run_s_result(tiny_run: Path, tmp_path: Path) -> None:
    """``predictivity`` is the not-frozen pool's table with its verdict, as the report shows
    it; a run without ``predictivity.json`` says so instead of keeping a stale table."""
    page = tmp_path / "page.md"
    marked = "<!-- tables:predictivity -->\nstale\n<!-- /tables:predictivity -->\n"
    page.write_text(marked)
    assert tables(tiny_run, "--commit", "x", "--into", page).returncode == 0
    assert "No predictivity result in this run" in page.read_text()
    run = tmp_path / "run"
    shutil.copytree(tiny_run, run)
    row = {"split": "train", "members": 4, "spearman_ci": [0.1, 0.7], "mean_abs_gap_ci": [0.2, 0.3]}
    pool = {
        "agents": 48,
        "people_gold": 0.59,
        "families": [
            {
                **row,
                "family": "cooperative",
                "sim_gold": 0.85,
                "spearman": 0.55,
                "mean_abs_gap": 0.27,
            },
            {**row, "family": "chatty", "sim_gold": 0.93, "spearman": 0.34, "mean_abs_gap": 0.35},
        ],
        "best": {
            "family": "cooperative",
            "supported": True,
            "over": {"chatty": {"difference": 0.2, "ci": [0.1, 0.3]}},
        },
        "closest": None,
    }
    (run / "predictivity.json").write_text(json.dumps({"all_agents": pool, "not_frozen": pool}))
    page.write_text(marked)
    done = tables(run, "--commit", "x", "--into", page)
    assert done.returncode == 0, done.stderr
    text = page.read_text()
    assert "48 agents, real patients' gold 59%:" in text
    assert markdown_rows(text, "predictivity")[2:] == [
        ["cooperative", "train", "4", "85", "0.55 [0.10, 0.70]", "27 [20, 30]"],
        ["chatty", "train", "4", "93", "0.34 [0.10, 0.70]", "35 [20, 30]"],
    ]
    assert "Highest Spearman: `cooperative`, ahead of every other row" in text
