"""One truth: the terminal, report.md and report.html of one small study agree cell for cell.

A tiny study (with two replayed real patients held out when ACI-Bench is found: its own
column, never pooled into held-out) is run through the CLI; its terminal tables, report.md's
tables and report.html's tables (parsed with ``html.parser``) are read back, and every cell
that two outputs share (same row, same column label) must hold the same text. The terminal's
tables must fit 80 columns with no cell cut.
"""

from __future__ import annotations

import html as html_lib
import io
import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
import yaml
from headless_chromium import Browser, available
from rich.console import Console

from sim2human.cli.app import main
from sim2human.corpora import aci_bench
from sim2human.report.summary import Summary, stored_summary
from sim2human.report.terminal import print_summary
from tiny_study import TINY

ParsedTable = tuple[str, list[str], list[list[str]]]
"""(title, column labels, rows of cell text)."""
REAL = aci_bench.missing() is None
needs_real = pytest.mark.skipif(not REAL, reason="ACI-Bench not found ($SIM2HUMAN_DATA)")


def tiny_with_real_patients() -> dict[str, Any]:
    raw = json.loads(json.dumps(TINY))
    raw["train"]["eval_every"] = 1  # probes during training: the overoptimisation table too
    if REAL:
        held = ["elderly-confused", "noisy-line", "terse-guarded", "aci-heldout"]
        raw["ensemble"] |= {"heldout": held, "members": {"aci-heldout": 2}}
    return raw


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A finished tiny study and what ``sim2human study`` printed."""
    root = tmp_path_factory.mktemp("truth")
    cfg = root / "tiny.yaml"
    cfg.write_text(yaml.safe_dump(tiny_with_real_patients()))
    out = io.StringIO()
    with pytest.MonkeyPatch.context() as mp:
        from sim2human.cli import app

        mp.setattr(app, "out_console", Console(file=out, width=80))
        args = ["study", str(cfg), "--out", str(root / "run"), "--workers", "1"]
        assert main(args) == 0
    return root / "run", out.getvalue()


# -- the terminal ------------------------------------------------------------------------------


def terminal_tables(text: str) -> list[ParsedTable]:
    """Tables drawn with ``box.MINIMAL``: a title line, header lines, a rule, body lines; a
    body line whose first cell is blank continues the row above (a wrapped cell)."""
    lines = text.splitlines()
    found: list[ParsedTable] = []
    for i, line in enumerate(lines):
        if not line.startswith("╶"):
            continue
        start = i - 1
        while start > 0 and "│" in lines[start - 1]:
            start -= 1
        title = lines[start - 2].strip() if start >= 2 else ""
        header = _join([_cells(x) for x in lines[start:i]])[0]
        rows: list[list[str]] = []
        for body in lines[i + 1 :]:
            if "│" not in body:
                break
            cells = _cells(body)
            if cells[0]:
                rows.append(cells)
            elif rows:
                rows[-1] = [f"{a} {b}".strip() for a, b in zip(rows[-1], cells, strict=True)]
        found.append((title, header, rows))
    return found


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.split("│")]


def _join(parts: list[list[str]]) -> list[list[str]]:
    return [[" ".join(p for p in col if p) for col in zip(*parts, strict=True)]] if parts else [[]]


# -- report.md ---------------------------------------------------------------------------------


def markdown_tables(text: str) -> list[ParsedTable]:
    found: list[ParsedTable] = []
    title = ""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("#"):
            title = line.lstrip("#").strip()
        if line.startswith("|") and i + 1 < len(lines) and lines[i + 1].startswith("|---"):
            body = []
            for row in lines[i + 2 :]:
                if not row.startswith("|"):
                    break
                body.append(_md_cells(row))
            found.append((title, _md_cells(line), body))
    return found


def _md_cells(line: str) -> list[str]:
    cells = re.split(r"(?<!\\)\|", line.strip()[1:-1])
    return [html_lib.unescape(c.strip().replace("\\|", "|")) for c in cells]


# -- report.html -------------------------------------------------------------------------------


class Tables(HTMLParser):
    """Every table with the heading above it; a cell spanning columns is kept as None."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[tuple[str, list[list[str | None]]]] = []
        self.heading = ""
        self.text: list[str] | None = None
        self.span = 1
        self.in_heading = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in {"h1", "h2", "h3"}:
            self.in_heading, self.heading = True, ""
        elif tag == "table":
            self.tables.append((self.heading, []))
        elif tag == "tr" and self.tables:
            self.tables[-1][1].append([])
        elif tag in {"td", "th"}:
            self.text, self.span = [], int(dict(attrs).get("colspan") or 1)
        elif tag == "br" and self.text is not None:
            self.text.append(" ")

    def handle_endtag(self, tag: str) -> None:
        if tag in {"h1", "h2", "h3"}:
            self.in_heading = False
        elif tag in {"td", "th"} and self.text is not None and self.tables:
            cell = " ".join("".join(self.text).split())
            self.tables[-1][1][-1].extend([cell] if self.span == 1 else [None] * self.span)
            self.text = None

    def handle_data(self, data: str) -> None:
        if self.in_heading:
            self.heading += data
        if self.text is not None:
            self.text.append(data)


def html_tables(text: str) -> list[ParsedTable]:
    parser = Tables()
    parser.feed(text)
    found: list[ParsedTable] = []
    for title, rows in parser.tables:
        if rows:
            head = [c or "" for c in rows[0]]
            found.append((title.strip(), head, [[c or "\0" for c in r] for r in rows[1:]]))
    return found


# -- the checks --------------------------------------------------------------------------------


def cells(tables: list[ParsedTable]) -> dict[tuple[str, str], str]:
    """(row, column) -> text over tables keyed by ``condition`` whose rows are unique."""
    out: dict[tuple[str, str], str] = {}
    for _, head, rows in tables:
        names = [r[0] for r in rows]
        if not head or head[0] != "condition" or len(set(names)) != len(names):
            continue
        for row in rows:
            for label, cell in zip(head[1:], row[1:], strict=True):
                if cell != "\0":
                    assert out.setdefault((row[0], label), cell) == cell, (row[0], label)
    return out


def outputs(run: Path, printed: str) -> dict[str, list[ParsedTable]]:
    return {
        "terminal": terminal_tables(printed),
        "report.md": markdown_tables((run / "report.md").read_text()),
        "report.html": html_tables((run / "report.html").read_text()),
    }


def test_every_shared_cell_agrees(study: tuple[Path, str]) -> None:
    run, printed = study
    found = {name: cells(tables) for name, tables in outputs(run, printed).items()}
    assert len(found["terminal"]) >= 20
    names = list(found)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            shared = found[a].keys() & found[b].keys()
            assert len(shared) >= 20, (a, b)
            wrong = {k: (found[a][k], found[b][k]) for k in shared if found[a][k] != found[b][k]}
            assert wrong == {}, f"{a} vs {b}"


def test_every_summary_table_is_in_every_output(study: tuple[Path, str]) -> None:
    run, printed = study
    summary = stored_summary(run / "report.json")
    assert summary is not None and summary.verdicts
    got = outputs(run, printed)
    for t in summary.tables:
        want = (list(t.columns), [list(r) for r in t.rows])
        for name, tables in got.items():
            if name == "terminal" and t.key not in {"gold", "handle_time", "spread"}:
                continue
            assert want in [(h, r) for _, h, r in tables], (name, t.key)
    for v in summary.verdicts:  # each condition's verdict, one line beside the table
        assert f"{v.word}: " in printed and v.condition in printed


def test_the_terminal_fits_80_columns_without_cut_cells(study: tuple[Path, str]) -> None:
    run, printed = study
    assert "…" not in printed
    summary = stored_summary(run / "report.json")
    assert summary is not None
    narrow = io.StringIO()
    print_summary(Console(file=narrow, width=80), summary)
    assert all(len(line) <= 80 for line in narrow.getvalue().splitlines())
    assert "…" not in narrow.getvalue()


def test_handle_time_is_reported_per_split(study: tuple[Path, str]) -> None:
    run, _ = study
    summary = stored_summary(run / "report.json")
    assert summary is not None
    t = summary.table("handle_time")
    assert t is not None and t.columns[1:3] == ("train", "held-out families")
    for row in t.rows:
        median, p90 = (float(x) for x in row[1].split(" / "))
        assert 1 <= median <= p90
    study_json = json.loads((run / "study.json").read_text())  # study.json holds the same
    for r in study_json["conditions"]:
        train = r["handle_time"]["train"]
        cell = next(row[1] for row in t.rows if row[0] == r["name"])
        assert cell == f"{train['median']:g} / {train['p90']:g}"


@needs_real
def test_real_patients_are_their_own_column_everywhere(study: tuple[Path, str]) -> None:
    run, printed = study
    summary = stored_summary(run / "report.json")
    assert isinstance(summary, Summary)
    gold = summary.table("gold")
    assert gold is not None and gold.columns[-2:] == (
        "gold, held-out families",
        "gold, real people",
    )
    page = (run / "report.html").read_text()
    for section in ("Real people", "Proxy vs gold", "Handle time"):
        assert f">{section}" in page
    heads = [h for title, h, _ in terminal_tables(printed) if title == "Proxy vs gold"]
    assert heads and heads[0][-2:] == ["gold, held-out families", "gold, real people"]
    study_json = json.loads((run / "study.json").read_text())
    for row in study_json["conditions"]:
        cell = next(r for r in gold.rows if r[0] == row["name"])
        assert cell[3] == _est(row["heldout_gold"]) and cell[4] == _est(row["heldout_gold_real"])


@needs_real
def test_why_real_people_fail_is_in_both_reports_and_the_json(study: tuple[Path, str]) -> None:
    run, _ = study
    assert "## Why real people fail" in (run / "report.md").read_text()
    assert ">Why real people fail<" in (run / "report.html").read_text()
    failures = json.loads((run / "report.json").read_text())["real_failures"]
    study_json = json.loads((run / "study.json").read_text())
    names = [r["name"] for r in study_json["conditions"]]
    assert [a["agent"] for a in failures["agents"]] == [*names, "scripted (reference)"]
    assert failures["visits"] == 2 and "frozen-small" not in failures["judged_by"]
    for row in study_json["conditions"]:  # each seed's real-people mean, shown in the table
        assert set(row["heldout_gold_real_by_seed"]) == {str(s) for s in study_json["seeds"]}


def _est(e: dict[str, Any]) -> str:
    from sim2human.report.format import est

    return est(e, missing="-")


@needs_real
@pytest.mark.skipif(not available(), reason="needs: apt-get install -y chromium chromium-driver")
def test_report_shows_real_patients_in_headless_chromium(
    study: tuple[Path, str], tmp_path: Path
) -> None:
    run, _ = study
    with Browser() as browser:
        browser.size(1280, 900)
        browser.open(run / "report.html")
        found = browser.run(
            "const h = Array.from(document.querySelectorAll('h2'))"
            ".find(e => e.textContent.trim() === 'Real people');"
            "if (!h) return null; let t = h.nextElementSibling;"
            "while (t && t.tagName !== 'TABLE') t = t.nextElementSibling;"
            "const r = h.getBoundingClientRect();"
            "return [r.width > 0 && r.height > 0, t ? t.rows.length : 0,"
            " t ? t.rows[0].textContent : ''];"
        )
        boxes = browser.run(
            "return Array.from(document.querySelectorAll('.verdict b')).map(b => b.textContent)"
        )
        errors = [e for e in browser.console() if e.get("level") == "SEVERE"]
    assert found is not None, "no visible 'Real people' section"
    visible, n_rows, head = found
    assert visible and n_rows >= 3 and "gold, real people" in head
    assert boxes and all(re.search(r": (collapsed|clean|inconclusive)$", b) for b in boxes)
    assert errors == []


def _stress_json() -> dict[str, Any]:
    e = {"mean": 0.5, "ci": [0.4, 0.6], "n": 10}
    curve = [{"severity": s, "mean": 0.5, "ci": [0.4, 0.6], "n": 10} for s in (0.0, 1.0)]
    agent = {
        "seeds": [0],
        "clean": e,
        "overall": e,
        "per_perturbation": {"typos": e},
        "overall_auc": e,
        "auc": {"typos": e},
        "curves": {"typos": curve},
    }
    role = {"role": "frozen", "compare_to": None, "sampler": "fixed", "perturbed": False}
    return {
        "roles": {"frozen-small": role},
        "study": "tiny",
        "perturbations": ["typos"],
        "grid": [0.0, 1.0],
        "episodes_per_member": 1,
        "agents": {"frozen-small": agent},
        "adversarial": {},
    }


def test_a_stressed_run_has_its_stress_section_in_both_reports(
    study: tuple[Path, str], tmp_path: Path
) -> None:
    import shutil

    from sim2human.report.html import write_report

    run = tmp_path / "run"
    shutil.copytree(study[0], run)
    (run / "stress.json").write_text(json.dumps(_stress_json()))
    written = write_report(run)
    md_text, page = written.markdown.read_text(), written.html.read_text()
    assert "## Stress test of study `tiny`" in md_text
    assert "<h2>Stress test of study <code>tiny</code></h2>" in page
    (run / "stress.json").write_text("[1]")  # unreadable: one line says so, the rest is whole
    assert "could not be read" in write_report(run).markdown.read_text()
