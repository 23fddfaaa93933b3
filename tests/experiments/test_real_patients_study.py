"""The collapse study holds out real patients (``aci-heldout``) when the corpus is there, and
leaves them out with one clear line when it is not (a fresh install without the data)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import pytest
import yaml

from aci_data import ACI, needs_aci
from sim2human.cli.app import main
from sim2human.experiments.config import load_study
from sim2human.experiments.world import without_missing_corpus

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
def test_the_study_holds_out_sixteen_distinct_real_patients(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from sim2human.experiments.world import StudyWorld

    monkeypatch.setenv("SIM2HUMAN_DATA", str(ACI))
    held = StudyWorld.build(load_study(EXAMPLE, quick=True)).ensemble.heldout
    real = [s.id for s in held if s.family == "aci-heldout"]
    assert len(real) == len(set(real)) == 16
    assert len(held) == 3 * 4 + 16


def test_member_counts_name_families_of_the_ensemble(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    raw = yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))
    raw["ensemble"]["members"] = {"chatty-typo": 3}
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(raw), encoding="utf-8")
    assert main(["study", str(bad), "--check"]) == 2
    assert "chatty-typo" in capsys.readouterr().err
