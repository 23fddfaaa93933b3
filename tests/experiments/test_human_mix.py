"""Human-grounded training: a condition's ``mix`` of ``aci-train`` members, never held out."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from aci_data import aci_env, needs_aci
from sim2human.corpora import aci_bench
from sim2human.errors import ConfigError
from sim2human.experiments.study.config import load_study, parse_study
from sim2human.experiments.study.playable import without_missing_corpus
from sim2human.experiments.study.world import StudyWorld
from sim2human.scenarios.intake.replay import encounter_ids
from sim2human.simulators.families import FAMILIES
from sim2human.simulators.replay_families import REPLAY_FAMILIES, ReplayFamily

__all__ = ["aci_env"]
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "collapse.yaml"
HUMAN = "ensemble-randomized+perturb+human"


def study(mix: dict[str, Any], heldout: tuple[str, ...] = ("noisy-line", "aci-heldout")) -> Any:
    return parse_study(
        {
            "name": "mix",
            "seeds": [0],
            "ensemble": {"train": ["cooperative"], "heldout": list(heldout)},
            "conditions": [
                {"name": "plain", "sampler": "randomized"},
                {"name": "human", "sampler": "randomized", "mix": mix},
            ],
        }
    )


@needs_aci
@pytest.mark.usefixtures("aci_env")
def test_train_and_heldout_visits_are_disjoint() -> None:
    train = set(encounter_ids(("train",)))
    held = set(encounter_ids(("valid", "test")))
    assert train and held and not train & held
    splits = {t.encounter_id: t.split for t in aci_bench.load()}
    assert {splits[i] for i in train} == {"train"}
    assert {splits[i] for i in held} == {"valid", "test"}


def test_a_heldout_family_or_split_cannot_be_mixed_in(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigError, match=r"mix\.family 'aci-heldout' is a held-out family"):
        study({"family": "aci-heldout"})
    with pytest.raises(ConfigError, match=r"mix\.family 'noisy-line' is a held-out family"):
        study({"family": "noisy-line"})
    # a family of its own name replaying held-out visits (ACI-Bench's valid split)
    valid = ReplayFamily(name="aci-valid", splits=("valid",), trigger_prob=0.0)
    monkeypatch.setitem(FAMILIES, valid.name, valid)
    monkeypatch.setitem(REPLAY_FAMILIES, valid.name, valid)
    with pytest.raises(ConfigError, match=r"replays split\(s\) \['valid'\] of held-out"):
        study({"family": "aci-valid"})
    study({"family": "aci-train"})  # the train split: fine
    with pytest.raises(ConfigError, match="unknown simulator family 'nobody'"):
        study({"family": "nobody"})
    with pytest.raises(ConfigError, match="share"):
        study({"family": "aci-train", "share": 0})


@needs_aci
@pytest.mark.usefixtures("aci_env")
def test_mixed_members_are_train_visits_and_play_their_share() -> None:
    cfg = study({"family": "aci-train", "members": 32, "share": 0.25})
    world = StudyWorld.build(cfg)
    plain, human = cfg.conditions
    mixed = world.mixed(human)
    visits = {s.id.removeprefix("aci-train-") for s in mixed}
    assert len(visits) == 32 and visits <= set(encounter_ids(("train",)))
    assert not visits & set(encounter_ids(("valid", "test")))
    assert world.mixed(plain) == ()
    assert [s.id for s in world.train_members(human)] == [
        s.id for s in (*world.ensemble.train, *mixed)
    ]
    rng = np.random.default_rng(0)
    sampler = world.sampler(human)
    draws = [sampler.next(rng).family for _ in range(4000)]
    assert draws.count("aci-train") / len(draws) == pytest.approx(0.25, abs=0.03)
    assert {d for d in draws if d != "aci-train"} == {"cooperative"}


@needs_aci
@pytest.mark.usefixtures("aci_env")
def test_adding_the_mixed_condition_leaves_the_others_draws_alone() -> None:
    with_mix = study({"family": "aci-train"})
    alone = with_mix.model_copy(update={"conditions": with_mix.conditions[:1]})
    a, b = StudyWorld.build(with_mix), StudyWorld.build(alone)
    assert a.ensemble == b.ensemble
    ra, rb = np.random.default_rng(3), np.random.default_rng(3)
    sa, sb = a.sampler(with_mix.conditions[0]), b.sampler(alone.conditions[0])
    assert [sa.next(ra).id for _ in range(200)] == [sb.next(rb).id for _ in range(200)]


def test_the_collapse_study_mixes_train_patients_and_drops_them_without_the_corpus(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg = load_study(EXAMPLE, quick=True)
    human = next(c for c in cfg.conditions if c.name == HUMAN)
    assert human.mix is not None and human.mix.family == "aci-train"
    assert human.compare_to == "ensemble-randomized+perturb"
    monkeypatch.setenv("SIM2HUMAN_DATA", str(tmp_path))  # an empty folder: no corpus there
    kept, line = without_missing_corpus(cfg)
    assert HUMAN not in [c.name for c in kept.conditions] and len(kept.conditions) == 5
    assert line is not None and f"condition(s) {HUMAN} left out" in line


def test_the_design_study_never_plays_a_heldout_family_and_mixes_what_collapse_mixes() -> None:
    """``examples/design/human.yaml`` chose the collapse study's human-grounded condition: it
    holds out no family the collapse study holds out, and each of its mixes draws the visits
    the collapse study's does (members are seeded by family), so its unseen train visits are
    unseen by the chosen condition."""
    design = load_study(EXAMPLE.parent / "design" / "human.yaml", quick=True)
    collapse = load_study(EXAMPLE, quick=True)
    assert not set(design.ensemble.heldout) & set(collapse.ensemble.heldout)
    assert design.ensemble.train == collapse.ensemble.train
    chosen = next(c for c in collapse.conditions if c.name == HUMAN)
    assert chosen.name in [c.name for c in design.conditions]
    assert chosen.mix is not None
    drawn = {(c.mix.family, c.mix.members) for c in design.conditions if c.mix is not None}
    assert drawn == {(chosen.mix.family, chosen.mix.members)}  # the shares differ, not the visits
    assert all(c.mix is not None for c in design.conditions)


def test_the_support_design_tries_intakes_recipe_with_supports_own_callers() -> None:
    """``examples/design/support-human.yaml`` measured whether the collapse study's recommended
    condition carries to ``support``: the same condition but for the callers it mixes (support's
    val split, which nothing holds out), in a study that is ``support.yaml`` in every other part,
    so its numbers sit beside support's own conditions (full forms: its quick form kept the 6400
    episodes it was measured with when support's went to 3200)."""
    design = load_study(EXAMPLE.parent / "design" / "support-human.yaml")
    support = load_study(EXAMPLE.parent / "support.yaml")
    recipe = next(c for c in load_study(EXAMPLE, quick=True).conditions if c.name == HUMAN)
    (tried,) = design.conditions
    assert tried.mix is not None and recipe.mix is not None
    assert tried.mix.family == "multiwoz-val" not in support.ensemble.heldout
    assert tried.mix.model_dump(exclude={"family"}) == recipe.mix.model_dump(exclude={"family"})
    skip = {"mix", "compare_to"}
    assert tried.model_dump(exclude=skip) == recipe.model_dump(exclude=skip)
    same = {"scenario", "seeds", "train", "ensemble", "eval", "reference_agents"}
    assert design.model_dump(include=same) == support.model_dump(include=same)
