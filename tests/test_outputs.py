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


def test_write_all_replaces_every_file_or_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = [tmp_path / "report.html", tmp_path / "report.md", tmp_path / "report.json"]
    for f in files:
        f.write_text("old " + f.name)
    real_fsync, calls = os.fsync, []

    def full_on_the_second(fd: int) -> None:
        calls.append(fd)
        if len(calls) == 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", full_on_the_second)
    with pytest.raises(OutputError, match=r"report\.md: no space left"):
        outputs.write_all([(f, "new") for f in files])
    assert [f.read_text() for f in files] == ["old " + f.name for f in files]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(f.name for f in files)
    monkeypatch.setattr(os, "fsync", real_fsync)
    outputs.write_all([(files[0], "new"), (files[1], b"bytes")])
    assert files[0].read_text() == "new" and files[1].read_bytes() == b"bytes"


def test_a_full_disk_names_its_mount_point(tmp_path: Path) -> None:
    err = outputs.describe_os_error(tmp_path / "a" / "b.json", OSError(errno.ENOSPC, "full"))
    assert str(tmp_path / "a" / "b.json") in str(err)
    assert f"({outputs._mount_point(tmp_path)})" in str(err)
    assert outputs._mount_point(tmp_path).is_mount()


def test_write_with_finds_the_full_disk_a_library_error_hides(tmp_path: Path) -> None:
    def torch_like(f: object) -> None:
        try:
            raise OSError(errno.ENOSPC, "No space left on device")
        except OSError:  # torch raises its own error while handling the write's
            raise RuntimeError("[enforce fail at inline_container.cc:672] unexpected pos") from None

    def hides_it(f: object) -> None:
        try:
            torch_like(f)
        except RuntimeError as err:
            raise RuntimeError("outer") from err.__context__

    for save in (torch_like, hides_it):
        with pytest.raises(OutputError, match="no space left") as caught:
            outputs.write_with(tmp_path / "checkpoint.pt", save)
        assert caught.value.exit_code == 1
    assert list(tmp_path.iterdir()) == []


def test_open_append_refuses_a_link_and_a_fifo_without_blocking(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("precious")
    (tmp_path / "log.jsonl").symlink_to(victim)
    with pytest.raises(OutputError, match="is a symlink") as caught:
        outputs.open_append(tmp_path / "log.jsonl")
    assert caught.value.exit_code == 2
    os.mkfifo(tmp_path / "fifo.jsonl")
    with pytest.raises(OutputError, match="not a regular file"):
        outputs.open_append(tmp_path / "fifo.jsonl")
    assert victim.read_text() == "precious"


def test_open_append_refuses_a_folder_that_leads_outside(tmp_path: Path) -> None:
    outside, run = tmp_path / "outside", tmp_path / "run"
    outside.mkdir()
    run.mkdir()
    (run / "sub").symlink_to(outside, target_is_directory=True)
    with pytest.raises(OutputError, match="leads outside"):
        outputs.open_append(run / "sub" / "metrics.jsonl", inside=run)
    assert list(outside.iterdir()) == []
    fd = outputs.open_append(run / "real" / "metrics.jsonl", inside=run)
    os.close(fd)
    assert (run / "real" / "metrics.jsonl").is_file()


def test_remove_deletes_a_link_as_a_link(tmp_path: Path) -> None:
    outside, run = tmp_path / "outside", tmp_path / "run"
    (outside / "seed-0").mkdir(parents=True)
    (outside / "seed-0" / "metrics.jsonl").write_text("keep\n")
    (run / "conditions" / "c").mkdir(parents=True)
    (run / "conditions" / "c" / "seed-0").symlink_to(outside / "seed-0")
    outputs.remove(run / "conditions" / "c" / "seed-0", inside=run)
    assert not (run / "conditions" / "c" / "seed-0").is_symlink()
    assert (outside / "seed-0" / "metrics.jsonl").read_text() == "keep\n"
    (run / "conditions" / "c" / "seed-1" / "x").mkdir(parents=True)
    outputs.remove(run / "conditions" / "c" / "seed-1", inside=run)  # a real folder: gone
    assert not (run / "conditions" / "c" / "seed-1").exists()
    outputs.remove(run / "conditions" / "c" / "missing", inside=run)  # nothing there: fine


def test_remove_refuses_a_path_whose_folder_leads_outside(tmp_path: Path) -> None:
    outside, run = tmp_path / "outside", tmp_path / "run"
    (outside / "seed-0").mkdir(parents=True)
    (run / "conditions").mkdir(parents=True)
    (run / "conditions" / "c").symlink_to(outside, target_is_directory=True)
    for name in ("seed-0", "seed-1"):  # present or not: the writes after it would go outside
        with pytest.raises(OutputError, match="leads outside"):
            outputs.remove(run / "conditions" / "c" / name, inside=run)
    assert (outside / "seed-0").is_dir()


def test_a_link_to_a_device_or_a_folder_is_refused_and_left_alone(tmp_path: Path) -> None:
    """Found writing ``--out /dev/stdout`` as root: the atomic rename replaced the link in
    ``/dev`` with a regular file."""
    for name, target in (("out.html", Path("/dev/null")), ("dir.html", tmp_path)):
        link = tmp_path / name
        link.symlink_to(target)
        with pytest.raises(OutputError, match="links to something that is not a file"):
            outputs.write_text(link, "x")
        assert link.is_symlink() and link.readlink() == target
    dangling = tmp_path / "gone.html"
    dangling.symlink_to(tmp_path / "missing")
    outputs.write_text(dangling, "x")  # a dangling link is replaced, as any link to a file
    assert not dangling.is_symlink() and dangling.read_text() == "x"


@pytest.mark.parametrize("failing", ["report.html", "report.md", "report.json"])
def test_write_all_puts_back_what_it_replaced_when_a_rename_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failing: str
) -> None:
    """A failure in the rename phase (any file of the set) leaves the old set whole: no new
    report.html beside an old report.md, no temporary or kept file left behind."""
    files = [tmp_path / "report.html", tmp_path / "report.md", tmp_path / "report.json"]
    for f in files:
        f.write_text("old " + f.name)
    real_replace = os.replace

    def fails_on_one(src: str | Path, dst: str | Path) -> None:
        if Path(dst).name == failing and Path(src).suffix == ".tmp":
            raise OSError(errno.EIO, "Input/output error")
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", fails_on_one)
    with pytest.raises(OutputError, match=failing.replace(".", r"\.")):
        outputs.write_all([(f, "new " + f.name) for f in files])
    assert [f.read_text() for f in files] == ["old " + f.name for f in files]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(f.name for f in files)


def test_write_all_removes_a_new_file_of_a_set_that_failed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A set whose first file did not exist before: a failed set leaves it absent again."""
    html, md = tmp_path / "report.html", tmp_path / "report.md"
    md.write_text("old")
    real_replace = os.replace

    def fails_on_md(src: str | Path, dst: str | Path) -> None:
        if Path(dst) == md and Path(src).suffix == ".tmp":
            raise OSError(errno.EIO, "Input/output error")
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", fails_on_md)
    with pytest.raises(OutputError):
        outputs.write_all([(html, "new"), (md, "new")])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.md"]
    assert md.read_text() == "old"
