"""``fitted-aci`` and ``sim2human fit-family``: a family fitted to train patients only."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from aci_data import aci_env, needs_aci
from sim2human.cli.app import main
from sim2human.experiments.study.config import parse_study
from sim2human.scenarios.intake.grounding import fit_family as ff
from sim2human.scenarios.intake.grounding import fit_voice
from sim2human.scenarios.intake.replay import encounter_ids
from sim2human.simulators.base import QuirkPool
from sim2human.simulators.families import FAMILIES, get_family, load_families
from sim2human.simulators.restyle_entries import Pointer
from sim2human.simulators.restyled import (
    VOICES,
    RestyledFamily,
    RestyledPersona,
    Voice,
    load_restyled,
    read_restyled,
)

__all__ = ["aci_env"]


def test_a_point_of_the_box_is_a_family_of_ranges_inside_it() -> None:
    low = ff.family_at(np.zeros(len(ff.BOX)), "low", 0.1)
    high = ff.family_at(np.ones(len(ff.BOX)), "high", 0.1)
    assert low.verbosity == (0.0, 0.1) and high.verbosity == (0.9, 1.0)
    assert low.cooperativeness == (0.3, 0.37) and high.cooperativeness == (0.93, 1.0)
    assert high.noise == {"disfluency": (0.72, 0.8)} and high.trigger_prob == 0.0
    mid = ff.family_at(np.full(len(ff.BOX), 0.5), "mid", 0.0)
    assert mid.tangent_rate == (0.3, 0.3)


def test_the_shipped_family_is_registered_and_plays_in_a_study() -> None:
    family = get_family("fitted-aci")
    assert "fitted to ACI-Bench train" in family.description
    spec = family.sample(0, QuirkPool(liked=("a",), triggers=()))
    assert spec.family == "fitted-aci" and spec.kind == "persona"
    cfg = parse_study(
        {
            "name": "fitted",
            "seeds": [0],
            "ensemble": {"train": ["cooperative", "fitted-aci"], "heldout": ["noisy-line"]},
            "conditions": [{"name": "u", "sampler": "uniform"}],
        }
    )
    assert "fitted-aci" in cfg.ensemble.train and "fitted-aci" in FAMILIES


@needs_aci
@pytest.mark.usefixtures("aci_env")
def test_the_fit_reads_the_train_split_only_in_two_disjoint_parts() -> None:
    fit_part, val_part = ff.train_parts()
    train = set(encounter_ids(("train",)))
    assert set(fit_part.encounters) | set(val_part.encounters) <= train
    assert not set(fit_part.encounters) & set(val_part.encounters)
    assert len(val_part.encounters) * 2 == pytest.approx(len(fit_part.encounters), abs=2)
    assert not set(fit_part.encounters) & set(encounter_ids(("valid", "test")))
    target = ff.Target.of(fit_part, 100, 0)
    same = ff.score(list(target.part.turns), fit_part.per_call, target, 100, 0)
    assert same.stats_gap < 10  # humans against their own part: a few units at most
    persona = ff.user_turns(ff.play_family(get_family("standard"), 2, 2, 0))
    assert ff.score(*persona, target, 100, 0).distance > same.distance + 20


@needs_aci
@pytest.mark.usefixtures("aci_env")
def test_a_tiny_fit_keeps_its_best_validation_round_and_the_cli_writes_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kw = {"rounds": 2, "population": 2, "members": 1, "per_member": 1, "cap": 40}
    r = ff.fit(**kw)  # type: ignore[arg-type]
    assert len(r.history) == 2
    assert r.kept == int(np.argmin([h.validation.distance for h in r.history]))
    again = ff.fit(**kw)  # type: ignore[arg-type]
    assert again.family == r.family  # seeded: the same fit twice
    out = tmp_path / "fitted.yaml"
    args = ["--rounds", "1", "--population", "2", "--members", "1", "--per-member", "1"]
    assert main(["fit-family", "--out", str(out), "--name", "mine", *args]) == 0
    text = out.read_text(encoding="utf-8")
    assert "sim2human fit-family --out" in text and "--name mine" in text
    (family,) = load_families(text, out).values()
    assert family.name == "mine" and family.noise.keys() == {"disfluency"}
    assert main(["fit-family", "--out", str(out), "--name", "chatty"]) == 2
    assert "a built-in family has that name" in capsys.readouterr().err


@needs_aci
@pytest.mark.usefixtures("aci_env")
def test_with_a_voice_each_candidate_says_the_caches_lines_and_the_cli_writes_a_cache(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = fit_voice.lines_of("retrieved-aci")
    assert lines.corpus == "aci-bench" and all(
        isinstance(p, Pointer) for r in lines.lines for p in r.rewrites
    )
    x = np.full(len(ff.BOX), 0.5)
    plain = ff.user_turns(ff.play_family(ff.family_at(x, "mine", 0.1), 2, 1, 0))[0]
    with fit_voice.voiced("mine", lines):
        said = ff.user_turns(
            ff.play_family(fit_voice.as_restyled(ff.family_at(x, "mine", 0.1), lines), 2, 1, 0)
        )[0]
    assert "mine" not in VOICES  # registered only while it plays
    assert len(set(said) - set(plain)) > len(said) // 3  # other words: the retrieved turns
    kw = {"rounds": 1, "population": 2, "members": 1, "per_member": 1, "cap": 40}
    r = ff.fit(name="mine", voice=lines, **kw)  # type: ignore[arg-type]
    assert r.voice == "retrieved-aci" and r.family["corpus"] == "aci-bench"
    assert "saying retrieved-aci's lines" in str(r.family["description"])
    assert "mine" not in VOICES
    out = tmp_path / "refitted.yaml"
    args = ["--rounds", "1", "--population", "2", "--members", "1", "--per-member", "1"]
    assert main(["fit-family", "--out", str(out), "--name", "mine", "--voice", "retrieved-aci",
                 *args]) == 0  # fmt: skip
    text = out.read_text(encoding="utf-8")
    assert "sim2human fit-family --out" in text and "--voice retrieved-aci" in text
    assert "CC BY 4.0" in text
    family, written = read_restyled(text, out)
    assert isinstance(family, RestyledFamily) and family.corpus == "aci-bench"
    assert family.name == "mine" and written == lines.lines  # the pointers, as written
    (_, words) = load_restyled(text, out)
    spec = family.sample(0, QuirkPool.of(ff._SCENARIO))
    assert spec.kind == "restyled"
    member = RestyledPersona(spec, ff._SCENARIO, Voice.of(words))
    assert member.voice.fixed == lines.voice.fixed
    capsys.readouterr()
    bad = ["fit-family", "--out", str(tmp_path / "x.yaml"), "--voice", "no-such-cache"]
    assert main(bad) == 2
    err = capsys.readouterr().err.strip()
    assert "no-such-cache" in err and len(err.splitlines()) == 1
    # a fitted restyled family may be remade under its name with --voice, not without
    assert main(["fit-family", "--out", str(out), "--name", "retrieved-aci"]) == 2
