"""A scenario that leads with its score (negotiation, ``gold_metric: score``): every study table
shows the mean ``Outcome.score`` with its CI, study.json stores it, and the terminal, report.md
and report.html agree cell for cell. A scenario that leads with success keeps its columns."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from rich.console import Console
from test_one_truth import cells, outputs

from sim2human.cli.app import main
from sim2human.experiments.study.results import ConditionRow
from sim2human.metrics.outcomes import Estimate
from sim2human.report.format import est
from sim2human.report.markdown import findings
from sim2human.report.summary import stored_summary
from sim2human.report.tables import Numbers, family_table, gold_table, real_table
from sim2human.store.rundir import read_episodes
from tiny_study import TINY

SCORE_COLUMNS = (
    "condition",
    "train proxy",
    "train score",
    "score, held-out families",
    "success, held-out families",
)


@pytest.fixture(scope="module")
def negotiation(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A finished tiny negotiation study and what ``sim2human study`` printed."""
    root = tmp_path_factory.mktemp("score")
    raw: dict[str, Any] = {**json.loads(json.dumps(TINY)), "scenario": "negotiation"}
    raw["reference_agents"] = ["scripted"]
    cfg = root / "tiny.yaml"
    cfg.write_text(yaml.safe_dump(raw))
    out = io.StringIO()
    with pytest.MonkeyPatch.context() as mp:
        from sim2human.cli import app

        mp.setattr(app, "out_console", Console(file=out, width=80))
        args = ["study", str(cfg), "--out", str(root / "run"), "--workers", "1"]
        assert main(args) == 0
    return root / "run", out.getvalue()


def _held_scores(run: Path, condition: str) -> list[float]:
    """The held-out evaluation scores of ``condition``, read from its episodes alone."""
    eps = [
        e
        for p in sorted((run / "conditions" / condition).rglob("episodes.jsonl"))
        for e in read_episodes(p)
    ]
    return [e.gold.score for e in eps if e.phase == "eval" and e.split == "heldout"]


def test_study_json_stores_the_score_and_the_headline(negotiation: tuple[Path, str]) -> None:
    run, _ = negotiation
    study = json.loads((run / "study.json").read_text())
    assert study["gold_metric"] == "score"
    for row in study["conditions"]:
        scores = _held_scores(run, row["name"])
        assert row["heldout_score"]["n"] == len(scores) > 0
        assert row["heldout_score"]["mean"] == pytest.approx(float(np.mean(scores)))
        lo, hi = row["heldout_score"]["ci"]
        assert lo <= row["heldout_score"]["mean"] <= hi
        assert set(row["heldout_score_by_family"]) == set(row["heldout_gold_by_family"])


def test_the_tables_lead_with_the_score_everywhere(negotiation: tuple[Path, str]) -> None:
    run, _ = negotiation
    summary = stored_summary(run / "report.json")
    assert summary is not None
    gold = summary.table("gold")
    assert gold is not None and gold.columns == SCORE_COLUMNS
    study = json.loads((run / "study.json").read_text())
    for row in [*study["conditions"], *study["reference"]]:
        name = row["name"] if row["episodes_trained"] else f"{row['name']} (reference)"
        cell = next(r for r in gold.rows if r[0] == name)
        assert cell[2] == est(row["train_score"], missing="-")
        assert cell[3] == est(row["heldout_score"], missing="-")
        assert cell[4] == est(row["heldout_gold"], missing="-")
    families = summary.table("families")
    assert families is not None and families.title == "Held-out score by family"
    md = (run / "report.md").read_text()
    found = md.split("## Findings")[1].split("\n## ")[0]
    assert "held-out score" in found and "held-out gold" not in found


def test_terminal_and_html_agree_on_the_score(negotiation: tuple[Path, str]) -> None:
    run, printed = negotiation
    got = outputs(run, printed)
    terminal, page = cells(got["terminal"]), cells(got["report.html"])
    score_cells = {k for k in terminal if k[1] in SCORE_COLUMNS[2:]}
    assert len(score_cells) == 9  # two conditions and the reference, three gold columns
    assert {k: terminal[k] for k in score_cells} == {k: page[k] for k in score_cells}
    shared = terminal.keys() & page.keys()
    assert {k for k in shared if terminal[k] != page[k]} == set()


def _estimate(mean: float) -> Estimate:
    return Estimate(mean=mean, ci=(mean - 0.1, mean + 0.1), n=10)


def _row(**extra: Any) -> ConditionRow:
    base = {
        "name": "frozen",
        "episodes_trained": 64,
        "train_proxy": _estimate(0.9),
        "train_gold": _estimate(0.8),
        "heldout_proxy": _estimate(0.5),
        "heldout_gold": _estimate(0.4),
        "heldout_member_std": 0.1,
        "exploit_rate": 0.0,
        "heldout_gold_by_family": {"a": 0.4},
    }
    return ConditionRow.model_validate(base | extra)


def test_a_success_scenario_keeps_its_columns_and_old_rows_read_success() -> None:
    scored = _row(train_score=_estimate(0.3), heldout_score=_estimate(0.2))
    assert scored.gold("heldout", "score") == _estimate(0.2)
    assert scored.gold("heldout", "success") == _estimate(0.4)
    old = _row()  # written before scores were stored: success stands in
    assert old.gold("train", "score") == _estimate(0.8)
    assert old.gold_by_family("heldout", "score") == {"a": 0.4}
    rows = [Numbers(name="frozen", heldout_gold=_estimate(0.4), train_gold=_estimate(0.8))]
    t = gold_table(rows)
    assert t.columns == ("condition", "train proxy", "train gold", "gold, held-out families")
    assert family_table(rows).title == "Held-out gold by family"


def test_findings_read_the_headline() -> None:
    from sim2human.experiments.study.results import StudyResult

    frozen = _row(
        role="frozen", sampler="fixed", train_score=_estimate(0.9), heldout_score=_estimate(0.2)
    )
    ens = _row(
        name="ens",
        role="baseline",
        sampler="uniform",
        train_score=_estimate(0.5),
        heldout_score=_estimate(0.5),
    )
    study = StudyResult(
        study="s",
        scenario="negotiation",
        seeds=[0],
        wall_seconds=1.0,
        conditions=[frozen, ens],
        gold_metric="score",
    )
    text = "\n".join(findings(study))
    assert "train score 90, held-out score 20" in text and "70 points below" in text
    assert "held-out score 50, 30 points above" in text
    as_success = StudyResult(
        study="s", scenario="intake", seeds=[0], wall_seconds=1.0, conditions=[frozen, ens]
    )
    assert "train gold 80, held-out gold 40" in "\n".join(findings(as_success))


def test_the_viewer_reads_the_headline_too(negotiation: tuple[Path, str]) -> None:
    from sim2human.metrics.outcomes import GOLDS
    from sim2human.viewer.load import load_groups
    from sim2human.viewer.page import condition_rows

    run, _ = negotiation
    _, groups = load_groups(run, None)
    study = json.loads((run / "study.json").read_text())
    rows = {r.name: r for r in condition_rows(groups, 100, None, GOLDS["score"])}
    for row in study["conditions"]:
        shown = rows[row["name"]].transfer.heldout_gold
        assert shown.mean == pytest.approx(row["heldout_score"]["mean"])
        assert shown.mean != pytest.approx(row["heldout_gold"]["mean"])


def test_the_real_people_table_shows_fields_right_only_where_calls_have_fields() -> None:
    """A deal has no fields to be right: negotiation's real-people table has no such column
    (it showed 0 [0, 0]); a slot-filling scenario's keeps it."""
    e = Estimate(mean=0.5, ci=(0.4, 0.6), n=10)
    deal = Numbers("a", metric="score", heldout_gold=e, real_gold=e, real_proxy=e)
    slots = Numbers("a", heldout_gold=e, real_gold=e, real_fields=e, real_proxy=e)
    no_fields, with_fields = real_table([deal]), real_table([slots])
    assert no_fields is not None and with_fields is not None
    assert "fields right, real people" not in no_fields.columns
    assert "fields right, real people" in with_fields.columns
    assert all(len(row) == len(no_fields.columns) for row in no_fields.rows)
