"""The ACI-Bench reader on the real files, and clear errors on malformed copies."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from aci_data import ACI, aci_env, needs_aci
from sim2human.corpora import aci_bench
from sim2human.errors import UsageError

pytestmark = needs_aci
__all__ = ["aci_env"]


def test_reads_every_split_of_the_real_corpus() -> None:
    ts = aci_bench.load(ACI)
    assert len(ts) == 207
    assert sum(len(t.patient_turns) for t in ts) == 5406  # SOURCE.md's count
    assert {s: len(aci_bench.split_of(ts, s)) for s in ("train", "valid", "test")} == {
        "train": 67,
        "valid": 20,
        "test": 120,
    }
    first = ts[0]
    assert (first.encounter_id, first.dataset, first.split) == ("D2N001", "virtassist", "train")
    assert first.meta.age == 50 and first.meta.cc == "annual exam"
    assert first.meta.secondary == ("congestive heart failure", "depression", "hypertension")
    assert first.turns[0].speaker == "doctor" and first.turns[1].text.startswith("i'm doing okay")
    assert first.note.startswith("CHIEF COMPLAINT")


def test_resolves_the_corpus_from_the_environment(aci_env: Path) -> None:
    assert aci_bench.resolve_dir() == aci_env
    assert aci_bench.resolve_dir(ACI.parent) == ACI  # the data root holding aci-bench/


def test_detokenize_undoes_the_corpus_spacing() -> None:
    assert aci_bench.detokenize("i do n't know , maybe it's 2 . ok ?") == (
        "i don't know, maybe it's 2. ok?"
    )


def _copy(tmp_path: Path) -> Path:
    out = tmp_path / "aci-bench"
    out.mkdir()
    for name in ("valid.csv", "valid_metadata.csv"):
        shutil.copy(ACI / name, out / name)
    return out


def test_a_copy_reads_like_the_original(tmp_path: Path) -> None:
    assert len(aci_bench.load(_copy(tmp_path))) == 20


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda d: (d / "valid_metadata.csv").unlink(), "valid_metadata.csv is missing"),
        (
            lambda d: (d / "valid.csv").write_text("dataset,encounter_id,note\nx,y,z\n"),
            "valid.csv: missing column(s) dialogue",
        ),
        (
            lambda d: (d / "valid_metadata.csv").write_text(
                (d / "valid_metadata.csv").read_text().replace(",58,", ",old,", 1)
            ),
            "valid_metadata.csv, line",
        ),
        (
            lambda d: (d / "valid.csv").write_bytes(b"\xff\xfe\x00bad"),
            "valid.csv: not a readable CSV file",
        ),
        (
            lambda d: (d / "valid.csv").write_text(
                'dataset,encounter_id,dialogue,note\naci,D2N999,"[doctor] hi",note\n'
            ),
            "encounter 'D2N999' is not in valid_metadata.csv",
        ),
        (lambda d: [p.unlink() for p in d.iterdir()], "holds none of"),
    ],
)
def test_malformed_copies_get_one_clear_error_naming_the_file(
    tmp_path: Path, damage: object, message: str
) -> None:
    folder = _copy(tmp_path)
    damage(folder)  # type: ignore[operator]
    with pytest.raises(UsageError, match=message.replace("(", r"\(").replace(")", r"\)")):
        aci_bench.load(folder)


def test_a_missing_folder_is_named(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="is not a directory"):
        aci_bench.load(tmp_path / "nowhere")
