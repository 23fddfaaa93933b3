"""``compare`` of two ``eval-agent`` runs: the agents by the labels their runs recorded, the
paired difference (same member, same seed) per metric with a bootstrap CI, the populations'
hashes beside the table, and a warning when the two populations differ. Before, the agents were
named by folder, the table gave the difference of two means without a CI, and nothing said
whether the two runs had met the same callers."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from test_eval_agent_runs import says, study

from sim2human.cli.app import main
from sim2human.store.rundir import read_json
from sim2human.testing import FakeOpenAI
from sim2human.viewer.build import build_compare

AGENTS = {"v1": "Hello, what is your name?", "v2": "What is your date of birth?"}


def evaluate(cfg: Path, out: Path, label: str, *extra: str) -> None:
    with FakeOpenAI(says(AGENTS[label])) as fake:
        argv = ["eval-agent", str(cfg), "--base-url", fake.base_url, "--model", "same"]
        assert main([*argv, "--label", label, "--out", str(out), *extra]) == 0


def heldout_proxy(out: Path) -> dict[tuple[str, int], float]:
    rows = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    return {(r["simulator_id"], r["seed"]): r["proxy"] for r in rows if r["split"] == "heldout"}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("agents")
    cfg = study(root, None, per=3)
    made = {name: root / f"run-{name}" for name in ("a", "b", "narrow")}
    evaluate(cfg, made["a"], "v1")
    evaluate(cfg, made["b"], "v2")
    evaluate(cfg, made["narrow"], "v2", "--families", "terse-guarded")
    return made


def test_compare_names_agents_by_label_and_gives_the_paired_difference_with_a_ci(
    runs: dict[str, Path], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    a, b = runs["a"], runs["b"]
    capsys.readouterr()
    assert main(["compare", str(a), str(b), "--out", str(tmp_path / "c.html")]) == 0
    printed = capsys.readouterr()
    population = read_json(a / "config.json")["population_hash"]
    assert population == read_json(b / "config.json")["population_hash"]
    assert "v1 vs v2" in printed.out and "run-a" not in printed.out
    assert f"population {population} vs {population}" in printed.out
    assert "paired B − A" in printed.out
    assert "two populations" not in printed.err
    _, (c,) = build_compare(a, b, [], lambda _: None)
    pa, pb = heldout_proxy(a), heldout_proxy(b)
    assert pa.keys() == pb.keys() and c.paired == len(pa) == 12  # 4 members x 3 seeds
    d = c.diff["heldout_proxy"]
    assert d.n == 12
    assert d.mean == pytest.approx(float(np.mean([pb[k] - pa[k] for k in pa])))
    assert d.ci[0] <= d.mean <= d.ci[1] and d.ci[0] < d.ci[1]  # the two agents' proxies differ
    assert c.diff["train_proxy"].n == 0  # no pair on the training members: none is made up
    html = (tmp_path / "c.html").read_text()
    assert "paired B − A" in html and population in html and "v1" in html


def test_compare_warns_when_the_populations_differ(
    runs: dict[str, Path], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    a, narrow = runs["a"], runs["narrow"]
    capsys.readouterr()
    assert main(["compare", str(a), str(narrow), "--out", str(tmp_path / "c.html")]) == 0
    printed = capsys.readouterr()
    ha = read_json(a / "config.json")["population_hash"]
    hn = read_json(narrow / "config.json")["population_hash"]
    assert ha != hn
    assert "two populations" in printed.err and ha in printed.err and hn in printed.err
    assert f"population {ha} vs {hn}" in printed.out
    _, (c,) = build_compare(a, narrow, [], lambda _: None)
    assert c.paired == 6  # the 2 terse-guarded members x 3 seeds both runs played
