"""``sim2human predictivity``: the pool is picked by place in training, the statistics find a
family that ranks agents as the real patients do, and the command runs a study end to end."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from sim2human.cli.app import main
from sim2human.corpora import aci_bench
from sim2human.experiments.research import predictivity as pred
from sim2human.experiments.study.config import parse_study
from sim2human.experiments.study.runner import run_study
from sim2human.report.predictivity import verdict
from sim2human.store.layout import PREDICTIVITY_JSON, PREDICTIVITY_MD, probe_checkpoint
from sim2human.store.layout import probe_updates as saved_probes
from tiny_study import TINY

needs_corpus = pytest.mark.skipif(aci_bench.missing() is not None, reason="ACI-Bench not found")


def test_probes_are_spaced_by_position_without_the_ends() -> None:
    assert pred.spaced(list(range(16)), 2) == [5, 10]
    assert pred.spaced(list(range(16)), 3) == [4, 8, 12]
    assert pred.spaced([7], 3) == [7]
    assert pred.spaced([], 2) == []


def test_probe_checkpoint_names_read_back_in_update_order(tmp_path: Path) -> None:
    for update in (11, -1, 199, 23):
        path = tmp_path / probe_checkpoint(update)
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(b"")
    (tmp_path / "checkpoints" / "notes.txt").write_text("not a probe")
    assert [u for u, _ in saved_probes(tmp_path)] == [-1, 11, 23, 199]
    assert saved_probes(tmp_path / "none") == []


def _played(people: np.ndarray, families: dict[str, np.ndarray]) -> list[pred.Played]:
    """Agents whose per-member gold is given as agents x members arrays."""
    rows: list[pred.Played] = []
    for a in range(people.shape[0]):
        p: pred.Played = {
            pred.PEOPLE: {f"v{j}": [float(people[a, j])] for j in range(people.shape[1])}
        }
        for f, m in families.items():
            p[f] = {f"{f}{j}": [float(m[a, j])] for j in range(m.shape[1])}
        rows.append(p)
    return rows


def test_a_family_that_ranks_agents_as_people_do_is_named_best() -> None:
    rng = np.random.default_rng(0)
    skill = np.linspace(0.1, 0.9, 20)
    people = (rng.random((20, 60)) < skill[:, None]).astype(float)
    faithful = (rng.random((20, 8)) < skill[:, None] * 0.9).astype(float)
    backwards = (rng.random((20, 8)) < 1 - skill[:, None]).astype(float)
    noise = (rng.random((20, 8)) < 0.5).astype(float)
    played = _played(people, {"faithful": faithful, "backwards": backwards, "noise": noise})
    splits = {"faithful": "heldout", "backwards": "heldout", "noise": "train"}
    result = pred.predictivity(played, splits)
    rows = {r["family"]: r for r in result["families"]}
    assert result["agents"] == 20
    assert set(rows) == {"faithful", "backwards", "noise", pred.HELDOUT_MIX, pred.ALL_MIX}
    assert rows["faithful"]["spearman"] > 0.7 > rows["noise"]["spearman"]
    assert rows["backwards"]["spearman"] < -0.5
    lo, hi = rows["faithful"]["spearman_ci"]
    assert lo <= rows["faithful"]["spearman"] <= hi
    assert rows["faithful"]["mean_abs_gap"] < rows["backwards"]["mean_abs_gap"]
    assert rows[pred.HELDOUT_MIX]["members"] == 16
    best = result["best"]
    assert best["family"] == "faithful" and best["supported"]
    assert best["over"]["backwards"]["ci"][0] > 0
    assert result["closest"]["family"] == "faithful"
    assert result["closest"]["over"]["backwards"]["difference"] > 0


def test_two_equally_good_families_give_no_winner() -> None:
    rng = np.random.default_rng(1)
    skill = np.linspace(0.2, 0.8, 20)
    people = (rng.random((20, 40)) < skill[:, None]).astype(float)
    a = (rng.random((20, 6)) < skill[:, None]).astype(float)
    b = (rng.random((20, 6)) < skill[:, None]).astype(float)
    result = pred.predictivity(_played(people, {"a": a, "b": b}), {"a": "heldout", "b": "heldout"})
    assert result["best"]["supported"] is False
    line = verdict(result)
    assert "do not support a winner" in line and "reaches 0" in line


TINY_PROBED = {
    **TINY,
    "train": {**TINY["train"], "episodes": 96, "eval_every": 1},
    "ensemble": {
        "members_per_family": 1,
        "train": ["cooperative"],
        "heldout": ["elderly-confused", "aci-heldout"],
    },
}


@pytest.mark.slow
@needs_corpus
def test_predictivity_on_a_study_writes_the_table_and_the_report_section(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from sim2human.cli.report import finish_study

    run = tmp_path / "run"
    run_study(parse_study(TINY_PROBED), run, workers=1, finish=finish_study)
    args = ["predictivity", str(run), "--probes", "2", "--episodes", "1", "--visit-episodes", "1"]
    assert main(args) == 0
    result = json.loads((run / PREDICTIVITY_JSON).read_text())
    # 2 conditions x 1 seed x (final + 2 probes: updates 0 and 1 of 0..2)
    assert [a["update"] for a in result["agents"]] == [None, 0, 1] * 2
    assert result["visits"] == 137 and result["all_agents"]["agents"] == 6
    assert result["not_frozen"]["agents"] == 3
    families = {r["family"] for r in result["all_agents"]["families"]}
    assert families == {"cooperative", "elderly-confused", pred.ALL_MIX}
    assert "Which simulators predict people" in (run / PREDICTIVITY_MD).read_text()
    assert "which simulators predict real patients" in capsys.readouterr().out
    assert main(["report", str(run)]) == 0
    assert "## Which simulators predict people" in (run / "report.md").read_text()


def test_a_folder_that_is_not_a_run_is_one_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["predictivity", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "no config.yaml" in err and "Traceback" not in err


def test_the_page_tables_keep_their_columns() -> None:
    from sim2human.report.predictivity import COLUMNS, markdown

    rng = np.random.default_rng(2)
    people = rng.random((5, 4))
    played = _played(people, {"a": rng.random((5, 2)), "b": rng.random((5, 2))})
    table = pred.predictivity(played, {"a": "train", "b": "heldout"})
    result = {
        "people": pred.PEOPLE,
        "visits": 4,
        "budget": {"per_member": 1, "per_visit": 1},
        "note": "n",
        "all_agents": table,
        "not_frozen": None,
    }
    rows = [line for line in markdown(result, level=2) if line.startswith("|")]
    assert len(rows) == 2 + 3  # head, rule, a, b and their mixture
    assert {len(re.findall(r"(?<!\\)\|", line)) for line in rows} == {len(COLUMNS) + 1}


def test_the_pool_is_each_final_and_spaced_probes(tmp_path: Path) -> None:
    from sim2human.agents.policy import PolicyAgent
    from sim2human.errors import RunDirError
    from sim2human.scenarios.catalog import get_scenario
    from sim2human.store.layout import CHECKPOINT, RunLayout

    cfg = parse_study(TINY)
    agent = PolicyAgent(get_scenario(cfg.scenario), seed=0)
    run = RunLayout(tmp_path)
    with pytest.raises(RunDirError, match="missing"):
        pred.build_pool(tmp_path, cfg, 2)
    for c in cfg.conditions:
        agent.save(run.sub_run(c.name, 0) / CHECKPOINT)
    probed = run.sub_run(cfg.conditions[1].name, 0)
    for update in (-1, 11, 23, 35, 47, 59):  # 59: the last, a copy of the final
        agent.save(probed / probe_checkpoint(update))
    pool = pred.build_pool(tmp_path, cfg, 2)
    assert [a.label for a in pool] == [
        "frozen-small/seed-0/final",
        "ensemble-uniform/seed-0/final",
        "ensemble-uniform/seed-0/update-23",
        "ensemble-uniform/seed-0/update-35",
    ]
    assert [a.role for a in pool] == [c.role for c in cfg.conditions] + [cfg.conditions[1].role] * 2


def test_a_run_of_another_scenario_is_refused_in_one_line() -> None:
    from importlib import resources

    from sim2human.errors import UsageError
    from sim2human.experiments.study.config import load_study
    from sim2human.experiments.study.world import StudyWorld

    path = resources.files("sim2human").joinpath("examples", "support.yaml")
    with resources.as_file(path) as support:
        cfg = load_study(support)
    with pytest.raises(UsageError, match=r"intake scenario only.*'support'"):
        pred.people(StudyWorld.build(cfg), cfg)
