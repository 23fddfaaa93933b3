"""Held-out families draw quirks from a pool disjoint from the training and frozen members'
(issue 37, item 4); a scenario file may share them on purpose, and the report says so."""

from __future__ import annotations

from pathlib import Path

import pytest

from sim2human.experiments.study.config import load_study
from sim2human.experiments.study.world import StudyWorld
from sim2human.scenarios.catalog import get_scenario
from sim2human.scenarios.files.load import load_scenario_file
from sim2human.simulators.base import QuirkPool, SimulatorSpec

ROOT = Path(__file__).resolve().parents[2]
SKELETON = ROOT / "src/sim2human/scenarios/skeleton/scenario.yaml"


def _phrasings(specs: tuple[SimulatorSpec, ...]) -> set[str]:
    out: set[str] = set()
    for s in specs:
        q = s.traits.quirks
        out.update(q.over_rewarded, q.disliked, [q.trigger] if q.trigger else [])
    return out


@pytest.mark.parametrize("name", ["intake", "support", "negotiation"])
def test_the_two_halves_are_disjoint_and_cover_the_pool(name: str) -> None:
    pool = QuirkPool.of(get_scenario(name))
    train, held = pool.held_apart()
    assert not set(train.liked) & set(held.liked)
    assert not set(train.triggers) & set(held.triggers)
    assert set(train.triggers) | set(held.triggers) == set(pool.triggers)
    assert train.triggers, "the frozen members need a trigger to exploit"


def test_held_out_members_never_hold_a_training_or_frozen_phrasing() -> None:
    cfg = load_study(ROOT / "examples/collapse.yaml")
    world = StudyWorld.build(cfg)
    frozen = tuple(spec for c in cfg.conditions if (spec := world.fixed_spec(c)) is not None)
    trained = _phrasings(world.ensemble.train) | _phrasings(frozen)
    held = _phrasings(world.ensemble.heldout)
    assert held, "held-out members draw quirks"
    assert not trained & held
    assert any(s.traits.quirks.trigger for s in frozen)


def test_shared_quirks_and_the_old_key_name(tmp_path: Path) -> None:
    text = SKELETON.read_text(encoding="utf-8").replace("__NAME__", "booking")
    assert "  tastes: [" in text
    new = tmp_path / "new.yaml"
    new.write_text(text, encoding="utf-8")
    old = tmp_path / "scenario.yaml"
    old.write_text(text.replace("  tastes: [", "  liked: ["), encoding="utf-8")
    for f in SKELETON.parent.iterdir():
        if f.suffix == ".txt":
            (tmp_path / f.name).write_text(f.read_text(encoding="utf-8"), encoding="utf-8")
    scenario = load_scenario_file(old)
    assert QuirkPool.of(scenario).liked == QuirkPool.of(load_scenario_file(new)).liked
    assert QuirkPool.of(scenario).held_apart()[0] != QuirkPool.of(scenario).held_apart()[1]
    old.write_text(text.replace("quirks:\n", "quirks:\n  shared: true\n"), encoding="utf-8")
    shared = QuirkPool.of(load_scenario_file(old))
    assert shared.shared
    assert shared.held_apart() == (shared, shared)


def test_the_report_says_when_quirks_are_shared() -> None:
    from sim2human.experiments.study.results import StudyResult
    from sim2human.report.markdown import study_head

    base = {"study": "s", "scenario": "x", "seeds": [0], "wall_seconds": 1.0, "conditions": []}
    assert not any("shared" in line for line in study_head(StudyResult.model_validate(base)))
    shared = StudyResult.model_validate({**base, "quirks_shared": True})
    assert any("Quirks shared on purpose" in line for line in study_head(shared))
