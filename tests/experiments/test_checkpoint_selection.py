"""A condition's ``select``: validation members of a training family choose the sub-run's
checkpoint among its probe points, and a held-out family can never be the one choosing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import torch

from sim2human.errors import ConfigError
from sim2human.experiments.study.config import parse_study
from sim2human.experiments.study.runner import run_study
from sim2human.experiments.study.world import StudyWorld
from sim2human.store.layout import CHECKPOINT, METRICS, SUMMARY, probe_checkpoint
from tiny_study import TINY

SELECT = {"family": "cooperative", "members": 3, "per_member": 2}
STUDY: dict[str, Any] = {
    **TINY,
    "train": {**TINY["train"], "episodes": 128, "eval_every": 1},
    "ensemble": {"train": ["cooperative", "chatty"], "heldout": ["noisy-line"]},
    "conditions": [
        {"name": "plain", "sampler": "uniform"},
        {"name": "selected", "sampler": "uniform", "select": SELECT},
    ],
}


def test_the_kept_weights_are_the_probe_point_with_the_best_validation_gold(
    tmp_path: Path,
) -> None:
    run_study(parse_study(STUDY), tmp_path / "run", workers=1)
    sub = tmp_path / "run" / "conditions" / "selected" / "seed-0"
    rows = [json.loads(line) for line in (sub / METRICS).read_text().splitlines()]
    points = [r for r in rows if "validation_gold" in r]
    assert [r["update"] for r in points] == [0, 1, 2, 3]  # every update here, the last included
    assert all(r["validation_n"] == 6 for r in points)
    summary = json.loads((sub / SUMMARY).read_text())
    best = max(r["validation_gold"] for r in points)
    chosen = [r["update"] for r in points if r["validation_gold"] == best][-1]  # ties: later
    assert summary["selected_update"] == chosen
    assert summary["validation_gold"] == best
    kept = torch.load(sub / CHECKPOINT, weights_only=True)["state"]
    at_point = torch.load(sub / probe_checkpoint(chosen), weights_only=True)["state"]
    assert all(torch.equal(kept[k], at_point[k]) for k in kept)
    plain = tmp_path / "run" / "conditions" / "plain" / "seed-0"
    assert "selected_update" not in json.loads((plain / SUMMARY).read_text())
    assert not any("validation_gold" in line for line in (plain / METRICS).read_text().splitlines())


def test_validation_members_are_fresh_draws_of_their_family() -> None:
    cfg = parse_study(STUDY)
    world = StudyWorld.build(cfg)
    plain, selected = cfg.conditions
    validation = world.validation(selected)
    assert len(validation) == 3 and world.validation(plain) == ()
    assert {s.family for s in validation} == {"cooperative"}
    assert not {s.id for s in validation} & {s.id for s in world.ensemble.train}


@pytest.mark.parametrize("family", ["noisy-line", "aci-heldout"])
def test_a_heldout_family_never_chooses_the_checkpoint(family: str) -> None:
    bad = {
        **STUDY,
        "conditions": [{"name": "c", "sampler": "uniform", "select": {"family": family}}],
    }
    bad["ensemble"] = {**STUDY["ensemble"], "heldout": ["noisy-line", "aci-heldout"]}
    with pytest.raises(ConfigError, match=rf"select\.family '{family}' is a held-out family"):
        parse_study(bad)


def test_an_lm_agent_is_told_it_cannot_select() -> None:
    lm = {**STUDY, "agent": {"kind": "lm"}, "conditions": STUDY["conditions"][1:]}
    with pytest.raises(ConfigError, match="an lm agent's sub-run keeps its last weights"):
        parse_study(lm)
