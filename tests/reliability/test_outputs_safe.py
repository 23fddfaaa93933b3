"""Every output kind is written whole, never through a link, and a bad target is one line.

The audit's findings 6 and 7 (reliability-audit.md): a symlink at an output aimed the write at
an outside file (``ln -sf ../victim RUN/report.html; sim2human report RUN``), an output path that
is a directory gave a traceback, a full disk tore ``report.html`` and gave four tracebacks from a
study's workers (torch's never saying the disk is full), ``export --out FIFO`` hung, ``human
export --out FILE`` raised ``FileExistsError``, ``--resume`` appended to the logs of a symlinked
sub-run, and ``report.md`` carried raw ``<script>`` from the run's names.
"""

from __future__ import annotations

import errno
import os
import pickle
import re
import shutil
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import torch
from reliability_helpers import TINY, assert_one_clear_error, run_cli

from planted_runs import write_sub_run
from sim2human import outputs
from sim2human.agents.policy import PolicyAgent
from sim2human.diagnostics.stored import diagnose_run
from sim2human.experiments.research.human_eval import export_run
from sim2human.experiments.study.config import parse_study
from sim2human.experiments.study.resume import prepare
from sim2human.integrations.export import export
from sim2human.metrics import embeddings
from sim2human.outputs import OutputError
from sim2human.report.html import write_report
from sim2human.scenarios.intake.scenario import IntakeScenario
from sim2human.store.calls import HumanStore
from sim2human.store.layout import EPISODES
from sim2human.store.rundir import EpisodeLog, JsonlWriter, read_episodes
from sim2human.types import Episode

HOSTILE = "<script>alert(1)"
"""A condition's folder name (a name cannot hold ``/``, so no closing tag)."""
HOSTILE_MEMBER = "<script>q|1"
REPORTS = ("report.html", "report.md", "report.json")


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A diagnosed run whose condition and training member have names full of markup."""
    root = tmp_path_factory.mktemp("planted")
    sub = write_sub_run(root / "conditions" / HOSTILE / "seed-0", exploit=True, per_member=2)
    for name in ("members.json", EPISODES):
        path = sub / name
        path.write_text(path.read_text().replace("standard-1", HOSTILE_MEMBER))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(embeddings, "_load_minilm", lambda: "not needed here")
        diagnose_run(root)
    return root


@pytest.fixture()
def run(planted: Path, tmp_path: Path) -> Path:
    """A fresh copy of the planted run, in ``tmp_path / "run"`` (``tmp_path`` holds victims)."""
    return Path(shutil.copytree(planted, tmp_path / "run", symlinks=True))


@pytest.fixture()
def deadline() -> Iterator[None]:
    """Fail a test that blocks (a FIFO with no reader) instead of hanging the suite."""

    def stuck(*_: Any) -> None:
        raise TimeoutError("blocked for 20 s")

    old = signal.signal(signal.SIGALRM, stuck)
    signal.setitimer(signal.ITIMER_REAL, 20)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def test_the_report_replaces_links_and_leaves_their_targets(run: Path, tmp_path: Path) -> None:
    for name in REPORTS:
        (tmp_path / f"victim-{name}").write_text("precious")
        (run / name).symlink_to(Path("..") / f"victim-{name}")
    written = write_report(run)
    for name in REPORTS:
        assert (tmp_path / f"victim-{name}").read_text() == "precious"
        assert (run / name).is_file() and not (run / name).is_symlink()
    assert written.html.read_text().startswith("<!doctype html>")


@pytest.mark.parametrize("name", REPORTS)
def test_a_report_path_that_is_a_directory_is_one_error(run: Path, name: str) -> None:
    for other in REPORTS:
        (run / other).write_text(f"old {other}")
    (run / name).unlink()
    (run / name).mkdir()
    with pytest.raises(OutputError, match=f"{name}: is a directory") as caught:
        write_report(run)
    assert caught.value.exit_code == 2
    assert all((run / o).read_text() == f"old {o}" for o in REPORTS if o != name)


def test_a_report_that_fails_half_way_keeps_the_old_one_whole(
    run: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in REPORTS:
        (run / name).write_text(f"old {name}")
    real_fsync, synced = os.fsync, []

    def full_disk_on_the_markdown(fd: int) -> None:
        synced.append(fd)
        if len(synced) == 2:  # html staged, markdown half-written: the disk is full
            raise OSError(errno.ENOSPC, "No space left on device")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", full_disk_on_the_markdown)
    with pytest.raises(OutputError, match="no space left on the disk") as caught:
        write_report(run)
    assert caught.value.exit_code == 1
    assert [(run / n).read_text() for n in REPORTS] == [f"old {n}" for n in REPORTS]
    assert not [p for p in run.iterdir() if p.name.endswith(".tmp")]


def test_report_md_escapes_markup_from_the_run(run: Path) -> None:
    text = write_report(run).markdown.read_text()
    assert "<script" not in text
    assert "&lt;script&gt;alert(1)" in text  # the condition, in the tables and the verdict
    assert "trigger of &lt;script&gt;q\\|1" in text  # the member's quirk, one table cell
    head = next(line for line in text.splitlines() if line.startswith("| condition | phrasing"))
    rows = [r for r in text.splitlines() if r.startswith("|") and "trigger of &lt;script" in r]
    cells = re.compile(r"(?<!\\)\|")  # a pipe that is not escaped starts a cell
    assert rows and all(len(cells.findall(r)) == len(cells.findall(head)) for r in rows)


def test_a_checkpoint_replaces_a_link_and_a_full_disk_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    victim = tmp_path / "victim"
    victim.write_text("precious")
    (tmp_path / "checkpoint.pt").symlink_to(victim)
    agent = PolicyAgent(IntakeScenario(), seed=0)
    agent.save(tmp_path / "checkpoint.pt")
    assert victim.read_text() == "precious"
    assert torch.load(tmp_path / "checkpoint.pt", weights_only=True)["acts"]

    class FullDisk:
        """What torch writes into when the disk fills after 1 KB."""

        def __init__(self, f: Any) -> None:
            self.f, self.left = f, 1024

        def write(self, data: Any) -> int:
            self.left -= len(data)
            if self.left < 0:
                raise OSError(errno.ENOSPC, "No space left on device")
            return int(self.f.write(data))

        def __getattr__(self, name: str) -> Any:
            return getattr(self.f, name)

        def __enter__(self) -> FullDisk:
            return self

        def __exit__(self, *exc: object) -> None:
            self.f.close()

    real_fdopen = os.fdopen
    monkeypatch.setattr(os, "fdopen", lambda *a, **k: FullDisk(real_fdopen(*a, **k)))
    old = (tmp_path / "checkpoint.pt").read_bytes()
    with pytest.raises(OutputError, match=r"checkpoint\.pt: no space left on the disk") as caught:
        agent.save(tmp_path / "checkpoint.pt")
    assert "inline_container" not in str(caught.value) and caught.value.exit_code == 1
    assert (tmp_path / "checkpoint.pt").read_bytes() == old


def test_a_full_disk_at_a_log_is_one_line_and_leaves_whole_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "metrics.jsonl"
    with JsonlWriter(log) as w:
        w.write({"update": 0})
        real_write = os.write

        def half_then_full(fd: int, data: Any) -> int:
            if len(data) > 4:
                return real_write(fd, bytes(data[: len(data) // 2]))
            raise OSError(errno.ENOSPC, "No space left on device")

        monkeypatch.setattr(os, "write", half_then_full)
        with pytest.raises(OutputError, match=r"metrics\.jsonl: no space left") as caught:
            w.write({"update": 1, "padding": "x" * 100})
        monkeypatch.setattr(os, "write", real_write)
        w.write({"update": 2})  # space again: the log goes on, whole
    assert caught.value.exit_code == 1
    assert log.read_text() == '{"update": 0}\n{"update": 2}\n'


def test_the_disk_full_error_crosses_the_worker_boundary_whole() -> None:
    err = outputs.describe_os_error(Path("/r/episodes.jsonl"), OSError(errno.ENOSPC, "full"))
    back = pickle.loads(pickle.dumps(err))  # how a worker's error reaches the parent
    assert isinstance(back, OutputError) and str(back) == str(err) and back.exit_code == 1


def test_logs_refuse_a_link_and_leave_its_target(tmp_path: Path) -> None:
    victim = tmp_path / "outside.jsonl"
    victim.write_text('{"id": "kept"}\n')
    run = tmp_path / "run"
    run.mkdir()
    for cls in (JsonlWriter, EpisodeLog):
        (run / "log.jsonl").unlink(missing_ok=True)
        (run / "log.jsonl").symlink_to(victim)
        with pytest.raises(OutputError, match="is a symlink"):
            cls(run / "log.jsonl")
    assert victim.read_text() == '{"id": "kept"}\n'


def test_resume_removes_a_linked_unfinished_sub_run_as_a_link(tmp_path: Path) -> None:
    cfg = parse_study(TINY, "tiny")
    out = tmp_path / "run"
    out.mkdir()
    prepare(cfg, out, resume=False, note=print)  # writes config.yaml
    outside = tmp_path / "outside"
    (outside / "seed-0").mkdir(parents=True)
    (outside / "seed-0" / "metrics.jsonl").write_text('{"update": 0}\n')
    (out / "conditions" / "ensemble-uniform").mkdir(parents=True)
    (out / "conditions" / "ensemble-uniform" / "seed-0").symlink_to(outside / "seed-0")
    todo = prepare(cfg, out, resume=True, note=print)
    assert ("ensemble-uniform", 0) in todo
    assert not (out / "conditions" / "ensemble-uniform" / "seed-0").exists()
    assert (outside / "seed-0" / "metrics.jsonl").read_text() == '{"update": 0}\n'


def test_resume_refuses_a_condition_folder_that_leads_outside(tmp_path: Path) -> None:
    cfg = parse_study(TINY, "tiny")
    out = tmp_path / "run"
    out.mkdir()
    prepare(cfg, out, resume=False, note=print)
    outside = tmp_path / "outside"
    (outside / "seed-0").mkdir(parents=True)
    (outside / "seed-0" / "episodes.jsonl").write_text("someone else's\n")
    (out / "conditions").mkdir()
    (out / "conditions" / "ensemble-uniform").symlink_to(outside, target_is_directory=True)
    with pytest.raises(OutputError, match="leads outside"):
        prepare(cfg, out, resume=True, note=print)  # the old code deleted outside/seed-0
    assert (outside / "seed-0" / "episodes.jsonl").read_text() == "someone else's\n"


def test_the_study_config_replaces_a_link(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("precious")
    out = tmp_path / "run"
    out.mkdir()
    (out / "config.yaml").symlink_to(victim)
    prepare(parse_study(TINY, "tiny"), out, resume=False, note=print)
    assert victim.read_text() == "precious"
    assert "tiny-rel" in (out / "config.yaml").read_text()


def test_export_to_a_directory_is_one_line(
    run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = run_cli(capsys, "export", str(run), "--out", str(tmp_path))
    assert_one_clear_error(code, err, "is a directory")


def test_export_to_a_fifo_nobody_reads_returns_at_once(
    run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], deadline: None
) -> None:
    os.mkfifo(tmp_path / "fifo")
    started = time.monotonic()
    code, err = run_cli(capsys, "export", str(run), "--out", str(tmp_path / "fifo"))
    assert_one_clear_error(code, err, "is not a regular file")
    assert time.monotonic() - started < 5


def test_the_export_library_refuses_a_fifo_before_reading(
    run: Path, tmp_path: Path, deadline: None
) -> None:
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(OutputError, match="is not a regular file") as caught:
        export(run, "art", tmp_path / "fifo")
    assert caught.value.exit_code == 2


def test_export_replaces_a_link_in_the_run_and_refuses_dev_null(
    run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "victim").write_text("precious")
    (run / "export-openai-chat.jsonl").symlink_to(Path("..") / "victim")
    assert run_cli(capsys, "export", str(run))[0] == 0
    assert (tmp_path / "victim").read_text() == "precious"
    assert not (run / "export-openai-chat.jsonl").is_symlink()
    for fmt in ("openai-chat", "sb3-buffer"):  # a device: no atomic file can replace it
        code, err = run_cli(capsys, "export", str(run), "--format", fmt, "--out", "/dev/null")
        assert_one_clear_error(code, err, "/dev/null: is not a regular file")


@pytest.mark.parametrize("kind", ["file", "/dev/null"])
def test_human_export_to_something_not_a_folder_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    db = HumanStore(tmp_path / "human.sqlite")
    db.close()
    out = tmp_path / "kept.txt" if kind == "file" else Path(kind)
    if kind == "file":
        out.write_text("kept")
    code, err = run_cli(
        capsys, "human", "export", str(tmp_path / "human.sqlite"), "--out", str(out)
    )
    assert_one_clear_error(code, err, f"{out}: exists and is not a folder")
    assert kind != "file" or out.read_text() == "kept"


def test_human_export_again_replaces_its_files(tmp_path: Path, planted: Path) -> None:
    episodes: list[Episode] = read_episodes(planted / "conditions" / HOSTILE / "seed-0" / EPISODES)[
        :3
    ]
    out = tmp_path / "export"
    assert export_run(episodes, out) == 3
    assert export_run(episodes, out) == 3  # the old code appended: every call twice
    assert len(read_episodes(out / EPISODES)) == 3
    victim = tmp_path / "victim"
    victim.write_text("precious")
    (out / EPISODES).unlink()
    (out / EPISODES).symlink_to(victim)
    export_run(episodes, out)
    assert victim.read_text() == "precious" and len(read_episodes(out / EPISODES)) == 3
