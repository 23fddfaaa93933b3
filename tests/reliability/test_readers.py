"""Readers that do not need to write (audit finding 10, U×7, Wexp, Wsrv): ``diagnose``,
``fidelity``, ``report --out`` and ``export`` read an archived (read-only) run and a study that
is still running, write nothing into either, and writers are still refused."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from reliability_helpers import TINY, assert_one_clear_error, run_cli

from aci_data import ACI
from sim2human.cli.app import main
from sim2human.diagnostics.stored import derived_dir
from sim2human.store.layout import LOCK_FILE
from sim2human.store.lock import read_lock, run_lock

ONE: dict[str, object] = {**TINY, "name": "tiny-readers", "seeds": [0]}
DROP_CAPS = [
    "setpriv",
    "--inh-caps=-dac_override,-dac_read_search",
    "--bounding-set=-dac_override,-dac_read_search",
]
HOLD = """
import sys, time
from pathlib import Path
from sim2human.store import lock
run = Path(sys.argv[1])
with lock.run_lock(run, "study") if sys.argv[2] == "write" else lock.read_lock(run):
    print("held", flush=True)
    time.sleep(120)
"""


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A finished tiny study (one condition, one seed) and its config."""
    root = tmp_path_factory.mktemp("readers")
    config = root / "tiny.yaml"
    config.write_text(yaml.safe_dump(ONE))
    assert main(["study", str(config), "--out", str(root / "run")]) == 0
    return root / "run", config


def snapshot(run: Path) -> dict[str, str]:
    """Every entry of ``run`` (files, folders, links) and each file's SHA-256."""
    out = {}
    for p in sorted(run.rglob("*")):
        key = str(p.relative_to(run))
        out[key] = hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
    return out


def drop_caps() -> list[str]:
    """The command prefix that makes root obey file permissions (nothing for another user)."""
    return DROP_CAPS if os.geteuid() == 0 else []


def as_reader(*argv: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``sim2human ARGV`` in a process that cannot write what it does not own: as root, with
    the capabilities that bypass file permissions dropped (as the audit did)."""
    env = {**os.environ, "SIM2HUMAN_DATA": str(ACI)}
    return subprocess.run(
        [*drop_caps(), sys.executable, "-m", "sim2human.cli", *argv],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )


@pytest.fixture()
def read_only(finished: tuple[Path, Path], tmp_path: Path) -> Iterator[Path]:
    """A copy of the finished run that the reader processes cannot write (``chmod -R a-w``)."""
    if os.geteuid() == 0 and shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: cannot drop the permission override")
    run = tmp_path / "archived"
    shutil.copytree(finished[0], run)
    subprocess.run(["chmod", "-R", "a-w", str(run)], check=True)
    probe = subprocess.run([*drop_caps(), "touch", str(run / "probe")], capture_output=True)
    if probe.returncode == 0:
        pytest.skip("this machine lets the reader write a read-only folder")
    yield run
    subprocess.run(["chmod", "-R", "u+w", str(run)], check=True)


@pytest.fixture()
def busy(finished: tuple[Path, Path], tmp_path: Path) -> Iterator[tuple[Path, int]]:
    """A copy of the finished run whose lock another live process holds, as a study would."""
    run = tmp_path / "busy"
    shutil.copytree(finished[0], run)
    with holding(run, "write") as pid:
        yield run, pid


class holding:
    """Another process holding ``run``'s lock (``write``) or reading it (``read``)."""

    def __init__(self, run: Path, mode: str) -> None:
        self.run, self.mode = run, mode

    def __enter__(self) -> int:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", HOLD, str(self.run), self.mode],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None and self.proc.stdout.readline().strip() == "held"
        return self.proc.pid

    def __exit__(self, *exc: object) -> None:
        self.proc.kill()
        self.proc.wait()


def exits_0(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    return done.stderr


def test_readers_read_a_read_only_run_and_write_nothing_into_it(
    read_only: Path, tmp_path: Path
) -> None:
    run, out = read_only, tmp_path / "out"
    before = snapshot(run)
    err = exits_0(as_reader("diagnose", str(run)))
    assert f"{run} is read-only; the diagnosis is printed, not stored" in err.replace("\n", "")
    if ACI.is_dir():
        err = exits_0(as_reader("fidelity", str(run), "--embedder", "lexical"))
        assert "is read-only; the table is printed, not stored" in err.replace("\n", "")
        exits_0(
            as_reader(
                "fidelity",
                str(run),
                "--embedder",
                "lexical",
                "--cap",
                "20",
                "--out",
                str(out / "report"),
            )
        )
    exits_0(as_reader("report", str(run), "--out", str(out / "report")))
    assert (out / "report" / "report.html").stat().st_size > 1000
    assert (out / "report" / "report.md").is_file()
    report = json.loads((out / "report" / "report.json").read_text())
    if ACI.is_dir():
        assert report["fidelity"]["cap"] == 20  # the measurement fidelity --out stored there
    done = as_reader("export", str(run), "--out", str(out / "chats.jsonl"))
    exits_0(done)
    assert "episodes: " in done.stdout and (out / "chats.jsonl").stat().st_size > 0
    exits_0(as_reader("diagnose", str(run), "--out", str(out / "diagnosis")))
    assert (out / "diagnosis" / "diagnosis.json").is_file()
    assert snapshot(run) == before  # nothing written, nothing touched


def test_writing_into_a_read_only_run_is_one_line_that_names_out(read_only: Path) -> None:
    run = read_only
    before = snapshot(run)
    for argv, needle in (
        (["report", str(run)], f"{run} is read-only: give --out DIR"),
        (["export", str(run)], f"{run} is read-only: give --out FILE"),
        (["human", "serve", str(run), "--port", "9"], f"{run} is read-only: give --db PATH"),
    ):
        done = as_reader(*argv, timeout=60)
        assert_one_clear_error(done.returncode, done.stderr, needle)
    assert snapshot(run) == before


def test_readers_of_a_running_study_read_what_has_finished(
    busy: tuple[Path, int],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    run, pid = busy
    before = snapshot(run)
    running = f"the study is still running (pid {pid} on "
    code, err = run_cli(capsys, "diagnose", str(run))
    assert code == 0, err
    assert running in err and "reading what has finished" in err, err
    assert "the diagnosis is printed, not stored" in err.replace("\n", "")
    out = tmp_path / "out"
    code, err = run_cli(capsys, "report", str(run), "--out", str(out))
    assert code == 0 and running in err, err
    assert (out / "report.html").is_file()
    assert (out / "diagnosis.json").is_file()  # a running study is diagnosed afresh, into --out
    code, err = run_cli(capsys, "export", str(run), "--out", str(out / "chats.jsonl"))
    assert code == 0 and (out / "chats.jsonl").is_file(), err
    warnings = [line for line in err.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and running in warnings[0], err
    if ACI.is_dir():
        monkeypatch.setenv("SIM2HUMAN_DATA", str(ACI))
        code, err = run_cli(capsys, "fidelity", str(run), "--embedder", "lexical")
        assert code == 0 and running in err, err
    assert snapshot(run) == before


def test_a_running_study_still_refuses_writers(
    busy: tuple[Path, int], finished: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    run, pid = busy
    before = snapshot(run)
    for argv, needle in (
        (["report", str(run)], "give --out DIR"),
        (["report", str(run), "--out", str(run / "elsewhere")], "give --out DIR"),
        (["export", str(run)], "give --out FILE"),
        (["study", str(finished[1]), "--out", str(run), "--resume"], "wait for it to finish"),
    ):
        code, err = run_cli(capsys, *argv)
        assert_one_clear_error(code, err, f"{run} is in use by pid {pid}", needle)
    serve = subprocess.run(
        [sys.executable, "-m", "sim2human.cli", "human", "serve", str(run), "--port", "9"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert_one_clear_error(serve.returncode, serve.stderr, f"pid {pid}", "give --db PATH")
    assert snapshot(run) == before


def test_a_reader_keeps_writers_out_until_it_is_done(
    finished: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    shutil.copytree(finished[0], run)
    with holding(run, "read"):
        code, err = run_cli(capsys, "study", str(finished[1]), "--out", str(run), "--resume")
        assert_one_clear_error(code, err, "in use by another process reading it")
        with read_lock(run) as access:  # readers never exclude each other
            assert access.writer is None
    with run_lock(run, "study"):  # and once it is done, a writer gets in
        pass


def test_a_writer_reading_its_own_run_does_not_lock_itself_out(tmp_path: Path) -> None:
    with run_lock(tmp_path, "study"), read_lock(tmp_path) as access:
        assert access.writer is None
    with read_lock(tmp_path), read_lock(tmp_path):
        pass  # readers in one process share the lock
    with run_lock(tmp_path, "after"):
        pass  # and leave nothing behind


def test_a_read_only_run_is_read_under_no_lock(read_only: Path) -> None:
    """Reading an archived run holds nothing over its owner: a writer is not kept out."""
    probe = (
        "import sys, time\nfrom pathlib import Path\nfrom sim2human.store.lock import read_lock\n"
        "with read_lock(Path(sys.argv[1])):\n    print('reading', flush=True)\n    time.sleep(60)"
    )
    reader = subprocess.Popen(
        [*drop_caps(), sys.executable, "-c", probe, str(read_only)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert reader.stdout is not None and reader.stdout.readline().strip() == "reading"
        subprocess.run(["chmod", "u+w", str(read_only), str(read_only / LOCK_FILE)], check=True)
        with run_lock(read_only, "study --resume"):  # the owner (root here) resumes at once
            pass
    finally:
        reader.kill()
        reader.wait()


def test_the_newest_derived_file_is_read(tmp_path: Path) -> None:
    run, out = tmp_path / "run", tmp_path / "out"
    run.mkdir()
    out.mkdir()
    assert derived_dir(run, None, "diagnosis.json") == run
    assert derived_dir(run, out, "diagnosis.json") == run  # --out holds none
    (run / "diagnosis.json").write_text("{}")
    (out / "diagnosis.json").write_text("{}")
    now = time.time()
    os.utime(run / "diagnosis.json", (now - 10, now - 10))
    assert derived_dir(run, out, "diagnosis.json") == out  # diagnose --out, after the run's
    os.utime(run / "diagnosis.json", (now + 10, now + 10))
    assert derived_dir(run, out, "diagnosis.json") == run  # the finished study's, after ours
