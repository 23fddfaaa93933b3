"""The collapse study holds out real patients (``aci-heldout``) when the corpus is there, and
leaves them out with one clear line when it is not (a fresh install without the data)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import pytest
import yaml

from aci_data import ACI, needs_aci
from sim2human.cli.app import main
from sim2human.experiments.study.config import StudyConfig, load_study, parse_study
from sim2human.experiments.study.playable import without_missing_corpus
from sim2human.experiments.study.runner import run_study
from tiny_study import TINY

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "collapse.yaml"


def test_both_collapse_configs_hold_out_real_patients() -> None:
    packaged = resources.files("sim2human").joinpath("examples", "collapse.yaml").read_text()
    assert packaged == EXAMPLE.read_text(encoding="utf-8")
    assert "aci-heldout" in yaml.safe_load(packaged)["ensemble"]["heldout"]


def test_missing_corpus_drops_real_patients_with_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SIM2HUMAN_DATA", str(tmp_path))  # an empty folder: no corpus there
    cfg, line = without_missing_corpus(load_study(EXAMPLE, quick=True))
    assert cfg.ensemble.heldout == ("elderly-confused", "noisy-line", "terse-guarded")
    assert line is not None and "aci-heldout" in line and "SIM2HUMAN_DATA" in line
    assert main(["demo", "--help"]) == 0  # the demo's --data option exists
    capsys.readouterr()
    assert main(["study", str(EXAMPLE), "--quick", "--check"]) == 0
    err = capsys.readouterr().err
    assert "real patients (aci-heldout) left out" in err and "--data" in err
    assert "Traceback" not in err


def test_a_study_left_without_its_corpus_is_one_the_workers_accept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The counts and conditions that named the missing families go with them: the study that
    is left is valid as sent to a worker (the demo without the data played none of its calls:
    every worker refused ``eval.per_family: ['aci-heldout']``)."""
    monkeypatch.setenv("SIM2HUMAN_DATA", str(tmp_path))
    study = {
        **TINY,
        "ensemble": {
            "train": ["cooperative", "aci-train"],
            "heldout": ["noisy-line", "aci-heldout"],
        },
        "eval": {**TINY["eval"], "per_family": {"aci-heldout": 1}},
        "conditions": [
            {"name": "plain", "sampler": "uniform"},
            {"name": "selected", "sampler": "uniform", "select": {"family": "aci-train"}},
        ],
    }
    cfg, line = without_missing_corpus(parse_study(study))
    assert cfg.ensemble.heldout == ("noisy-line",) and cfg.ensemble.train == ("cooperative",)
    assert cfg.eval.per_family == {} and [c.name for c in cfg.conditions] == ["plain"]
    assert line is not None and "condition(s) selected left out" in line
    assert StudyConfig.model_validate_json(cfg.model_dump_json()) == cfg
    run = run_study(parse_study(study), tmp_path / "run", workers=1)  # a library caller's study
    assert [row.name for row in run.conditions] == ["plain"]
    stored = yaml.safe_load((tmp_path / "run" / "config.yaml").read_text(encoding="utf-8"))
    assert stored["ensemble"]["heldout"] == ["noisy-line"] and stored["eval"]["per_family"] == {}


def test_data_option_naming_an_empty_folder_is_one_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["study", str(EXAMPLE), "--quick", "--check", "--data", str(tmp_path)]) == 2
    assert "ACI-Bench corpus not found" in capsys.readouterr().err


@needs_aci
def test_real_patients_are_kept_when_the_corpus_is_there(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SIM2HUMAN_DATA", str(ACI))
    cfg, line = without_missing_corpus(load_study(EXAMPLE, quick=True))
    assert line is None and "aci-heldout" in cfg.ensemble.heldout


@needs_aci
def test_the_study_holds_out_every_real_patient_once_one_call_each(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from sim2human.experiments.study.world import StudyWorld, heldout_splits
    from sim2human.scenarios.intake.replay import encounter_ids

    monkeypatch.setenv("SIM2HUMAN_DATA", str(ACI))
    cfg = load_study(EXAMPLE, quick=True)
    world = StudyWorld.build(cfg)
    held = world.ensemble.heldout
    real = [s.id for s in held if s.family == "aci-heldout"]
    visits = {f"aci-heldout-{v}" for v in encounter_ids(("valid", "test"))}
    assert len(real) == len(set(real)) == len(visits) == 137 and set(real) == visits
    assert len(held) == 3 * 4 + 137
    splits = [(split, len(members), n) for split, members, n in heldout_splits(cfg, world)]
    assert splits == [("heldout", 12, 8), ("heldout", 137, 1)]  # the quick study's counts
    full = load_study(EXAMPLE)
    assert full.eval.per_family == {"aci-heldout": 2} and len(full.seeds) == 3


def _with(tmp_path: Path, **ensemble_or_eval: object) -> Path:
    raw = yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))
    for key, value in ensemble_or_eval.items():
        section, name = key.split("__")
        raw[section][name] = value
    path = tmp_path / "study.yaml"
    path.write_text(yaml.safe_dump(raw), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"ensemble__members": {"cooperative": "all"}}, "cooperative: 'all' is for a held-out"),
        ({"ensemble__members": {"noisy-line": "all"}}, "noisy-line: 'all' is for a held-out"),
        ({"eval__per_family": {"cooperative": 1}}, "eval.per_family: ['cooperative']"),
        ({"ensemble__members": {"aci-heldout": "most"}}, "members.aci-heldout"),
    ],
)
def test_all_and_per_family_are_refused_where_they_mean_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], change: dict[str, object], named: str
) -> None:
    assert main(["study", str(_with(tmp_path, **change)), "--check"]) == 2
    err = capsys.readouterr().err
    assert named in err and "Traceback" not in err


def test_seeds_replaces_the_study_files_seeds_after_quick(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert load_study(EXAMPLE, quick=True, seeds=(0, 1, 2)).seeds == (0, 1, 2)
    assert load_study(EXAMPLE, seeds=(7,)).seeds == (7,)
    assert main(["study", str(EXAMPLE), "--quick", "--seeds", "0,1,2", "--check"]) == 0
    assert "x 3 seeds" in capsys.readouterr().err
    for bad, said in (("0,0", "seeds must be distinct"), ("1,x", "--seeds '1,x'"), ("", "--seeds")):
        assert main(["study", str(EXAMPLE), "--quick", "--seeds", bad, "--check"]) == 2
        err = capsys.readouterr().err
        assert said in err and "Traceback" not in err


def test_member_counts_name_families_of_the_ensemble(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    raw = yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))
    raw["ensemble"]["members"] = {"chatty-typo": 3}
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(raw), encoding="utf-8")
    assert main(["study", str(bad), "--check"]) == 2
    assert "chatty-typo" in capsys.readouterr().err
