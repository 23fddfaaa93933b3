"""The order a study's jobs are submitted in: longest expected first, side jobs not last, and
the same numbers whatever the order."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sim2human.experiments.executors import local_executor
from sim2human.experiments.study import runner
from sim2human.experiments.study.config import load_study, parse_study
from sim2human.experiments.study.runner import Call, longest_first, run_study
from tiny_study import TINY, study_numbers

DEMO = Path(__file__).parents[2] / "examples" / "collapse.yaml"


class Submitted(Exception):
    pass


def _demo_calls() -> tuple[Any, list[Call]]:
    cfg = load_study(DEMO, quick=True)
    calls: list[Call] = [("condition", c.name, s, "") for c in cfg.conditions for s in cfg.seeds]
    return cfg, [*calls, ("reference", "scripted", 0, ""), ("diversity", "", 0, "")]


def test_the_demo_s_slowest_sub_runs_go_first_and_the_side_jobs_before_the_frozen_ones() -> None:
    cfg, calls = _demo_calls()
    order = [f"{kind} {name}".strip() for kind, name, _, _ in longest_first(cfg, calls)]
    perturbed = {"randomized+perturb", "randomized+perturb+human"}
    assert set(order[:4]) == {f"condition ensemble-{e}" for e in perturbed}
    assert set(order[4:8]) == {f"condition ensemble-{e}" for e in ("uniform", "randomized")}
    assert order[8:10] == ["diversity", "reference scripted"]
    assert {o.split()[1] for o in order[10:]} == {"frozen-small", "frozen-large"}
    assert sorted(longest_first(cfg, calls)) == sorted(calls)  # a reordering, nothing lost
    seeds = [seed for _, name, seed, _ in longest_first(cfg, calls) if name == "frozen-small"]
    assert seeds == [0, 1]  # ties keep the config's order


def test_a_condition_with_llm_members_ranks_with_the_perturbed_ones() -> None:
    cfg, _ = _demo_calls()
    llm = cfg.conditions[2].model_copy(update={"llm_share": 0.5})
    cfg = cfg.model_copy(update={"conditions": [*cfg.conditions[:2], llm]})
    calls: list[Call] = [("condition", c.name, 0, "") for c in cfg.conditions]
    assert longest_first(cfg, calls)[0][1] == llm.name


def test_the_study_submits_its_jobs_longest_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    submitted: list[tuple[Any, ...]] = []

    def record(fn: Any, calls: list[tuple[Any, ...]], workers: int, **kw: Any) -> list[Any]:
        submitted.extend(calls)
        raise Submitted  # stop before any work: only the order is under test

    monkeypatch.setattr(local_executor, "in_processes", record)
    with pytest.raises(Submitted):
        run_study(parse_study(TINY), tmp_path / "run", workers=1)
    kinds = [(unit.args[0], unit.args[1]) for _, unit in submitted]
    assert kinds == [
        ("condition", "ensemble-uniform"),
        ("diversity", ""),
        ("reference", "scripted"),
        ("condition", "frozen-small"),
    ]


def test_the_numbers_do_not_depend_on_the_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg = parse_study(TINY)
    first = run_study(cfg, tmp_path / "a", workers=1)
    monkeypatch.setattr(runner, "longest_first", lambda cfg, calls: list(reversed(calls)))
    second = run_study(cfg, tmp_path / "b", workers=1)
    assert study_numbers(first) == study_numbers(second)
    for log in sorted((tmp_path / "a").rglob("episodes.jsonl")):
        twin = tmp_path / "b" / log.relative_to(tmp_path / "a")
        assert log.read_bytes() == twin.read_bytes(), log
