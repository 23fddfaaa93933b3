"""Output files are written whole, never through a symlink, and a bad target is one clear error."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from sim2human import outputs
from sim2human.outputs import OutputError


def test_write_replaces_a_file_whole_and_leaves_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "report.html"
    target.write_text("old")
    outputs.write_text(target, "new")
    assert target.read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html"]


def test_a_symlink_at_the_target_is_replaced_not_followed(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("precious")
    run = tmp_path / "run"
    run.mkdir()
    (run / "report.html").symlink_to(victim)
    outputs.write_text(run / "report.html", "<!doctype html>", inside=run)
    assert victim.read_text() == "precious"
    assert not (run / "report.html").is_symlink()
    assert (run / "report.html").read_text() == "<!doctype html>"


def test_a_linked_folder_cannot_aim_a_write_outside_the_run(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    run = tmp_path / "run"
    run.mkdir()
    (run / "conditions").symlink_to(outside, target_is_directory=True)
    with pytest.raises(OutputError, match="leads outside"):
        outputs.write_text(run / "conditions" / "study.json", "{}", inside=run)
    assert list(outside.iterdir()) == []


@pytest.mark.parametrize("kind", ["directory", "fifo"])
def test_a_target_that_is_not_a_file_is_a_usage_error(tmp_path: Path, kind: str) -> None:
    target = tmp_path / "out"
    if kind == "directory":
        target.mkdir()
    else:
        os.mkfifo(target)
    with pytest.raises(OutputError, match="out: is") as caught:
        outputs.write_text(target, "x")
    assert caught.value.exit_code == 2


def test_a_failed_write_keeps_the_old_file(tmp_path: Path) -> None:
    target = tmp_path / "study.json"
    target.write_text("old")
    with pytest.raises(RuntimeError), outputs.atomic_open(target) as f:
        f.write("half")
        raise RuntimeError("crash mid-write")
    assert target.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["study.json"]


def test_a_full_disk_is_one_line_naming_the_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "report.md"
    target.write_text("old")

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(OutputError, match="no space left") as caught:
        outputs.write_text(target, "new")
    assert str(target) in str(caught.value)
    assert caught.value.exit_code == 1
    assert target.read_text() == "old"


def test_write_with_reports_a_hidden_full_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def torch_like(f: object) -> None:
        raise RuntimeError("[enforce fail at inline_container.cc:672] . unexpected pos 64")

    monkeypatch.setattr(outputs, "_disk_full", lambda folder: True)
    with pytest.raises(OutputError, match="no space left"):
        outputs.write_with(tmp_path / "checkpoint.pt", torch_like)
    monkeypatch.setattr(outputs, "_disk_full", lambda folder: False)
    with pytest.raises(RuntimeError, match="unexpected pos"):
        outputs.write_with(tmp_path / "checkpoint.pt", torch_like)


def test_files_respect_the_umask(tmp_path: Path) -> None:
    old = os.umask(0o077)
    try:
        outputs.write_text(tmp_path / "a", "x")
    finally:
        os.umask(old)
    assert (tmp_path / "a").stat().st_mode & 0o777 == 0o600
