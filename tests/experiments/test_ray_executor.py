"""``--executor ray`` on a local Ray cluster (one for the module, 2 CPUs): the same numbers and
episodes as the local pool, a worker killed mid-study rerun with nothing lost or duplicated, a
study resumed across executors, Ctrl-C keeping what finished, a unit's own error raised, the
embedded model started once per node.

Skipped where Ray is not installed (``scripts/setup --dev`` installs the ``ray`` extra)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ray = pytest.importorskip("ray", reason="the ray extra is not installed (pip install ray)")

from sim2human.errors import ModelUnavailableError  # noqa: E402
from sim2human.experiments.executors import ray_embedded, ray_executor  # noqa: E402
from sim2human.experiments.executors.backends import Choice  # noqa: E402
from sim2human.experiments.executors.pool import Interrupted  # noqa: E402
from sim2human.experiments.executors.ray_executor import RayExecutor  # noqa: E402
from sim2human.experiments.executors.units import Ledger, Unit, Work  # noqa: E402
from sim2human.experiments.study.config import parse_study  # noqa: E402
from sim2human.experiments.study.results import StudyResult  # noqa: E402
from sim2human.experiments.study.runner import run_study  # noqa: E402
from sim2human.llm import local  # noqa: E402
from sim2human.llm.runtime import Embedded, LLMRuntime, LLMSettings  # noqa: E402
from tiny_study import TINY, study_numbers  # noqa: E402

RAY = Choice("ray")
# The tiny study with units long enough (a few seconds each) for a killer to catch one running.
LONGER: dict[str, Any] = {**TINY, "train": {**TINY["train"], "episodes": 256}}


@pytest.fixture(scope="module", autouse=True)
def cluster() -> Iterator[None]:
    """One local cluster for the module; this module's helpers travel to workers by value."""
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    start_local_cluster()
    yield
    ray.shutdown()


def start_local_cluster() -> None:
    """``ray.init`` with 2 CPUs, patient with a loaded machine: its agents may take more than
    Ray's 30 s to start when every core is busy (then one more try)."""
    os.environ.setdefault("RAY_agent_register_timeout_ms", "180000")
    for attempt in (1, 2):
        try:
            ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
            return
        except Exception:
            ray.shutdown()
            if attempt == 2:
                raise


@pytest.fixture(scope="module")
def local_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[StudyResult, Path]:
    out = tmp_path_factory.mktemp("local") / "run"
    return run_study(parse_study(TINY), out, workers=2), out


def _logs(run: Path) -> dict[str, bytes]:
    return {str(p.relative_to(run)): p.read_bytes() for p in sorted(run.rglob("episodes.jsonl"))}


def _episode_ids(run: Path) -> list[str]:
    return [
        json.loads(line)["id"]
        for p in run.rglob("episodes.jsonl")
        for line in p.read_text().splitlines()
    ]


def test_ray_gives_the_numbers_and_episodes_of_the_local_pool(
    local_run: tuple[StudyResult, Path], tmp_path: Path
) -> None:
    local, a = local_run
    got = run_study(parse_study(TINY), tmp_path / "b", workers=2, executor=RAY)
    assert study_numbers(got) == study_numbers(local)
    assert _logs(tmp_path / "b") == _logs(a)
    assert (tmp_path / "b" / "diversity.json").read_bytes() == (a / "diversity.json").read_bytes()


def _kill_a_busy_worker(killed: list[int], stop: threading.Event) -> None:
    """Kill (SIGKILL) the first Ray actor seen running a unit for a quarter of a second:
    mid-unit, once it has started writing. (A second's wait missed every unit on a fast run:
    the tiny study's units can finish in under one.)"""
    seen: dict[int, float] = {}
    while not stop.is_set() and not killed:
        for pid in _busy_actors():
            first = seen.setdefault(pid, time.monotonic())
            if time.monotonic() - first > 0.25:
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
                return
        time.sleep(0.02)


def _busy_actors() -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        try:
            cmd = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if entry.name.isdigit() and cmd.startswith(b"ray::_Host.run"):
            pids.append(int(entry.name))
    return pids


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_killed_worker_s_unit_reruns_and_nothing_is_lost_or_duplicated(tmp_path: Path) -> None:
    a = tmp_path / "a"
    local = run_study(parse_study(LONGER), a, workers=2)
    killed: list[int] = []
    stop = threading.Event()
    killer = threading.Thread(target=_kill_a_busy_worker, args=(killed, stop), daemon=True)
    notes: list[str] = []
    killer.start()
    try:
        got = _quiet_study(tmp_path / "b", notes, LONGER)
    finally:
        stop.set()
        killer.join()
    assert killed, "no worker was seen running a unit"
    assert any("ray worker lost" in n and "attempt 2 of 2" in n for n in notes), notes
    assert got.failed == [] and study_numbers(got) == study_numbers(local)
    ids = _episode_ids(tmp_path / "b")
    assert len(ids) == len(set(ids)) == len(_episode_ids(a))  # none lost, none twice
    assert _logs(tmp_path / "b") == _logs(a)


def _quiet_study(
    out: Path, notes: list[str], study: dict[str, Any] = TINY, **kw: Any
) -> StudyResult:
    from rich.console import Console

    class Noting(Console):
        def print(self, *objects: Any, **_: Any) -> None:
            notes.extend(str(o) for o in objects)

    return run_study(parse_study(study), out, workers=2, executor=RAY, console=Noting(), **kw)


def test_a_study_started_locally_resumes_on_ray(
    local_run: tuple[StudyResult, Path], tmp_path: Path
) -> None:
    local, a = local_run
    b = tmp_path / "b"
    shutil.copytree(a, b)
    (b / "conditions" / "frozen-small" / "seed-0" / "summary.json").unlink()  # cut short
    (b / "study.json").unlink()
    kept = b / "conditions" / "ensemble-uniform" / "seed-0" / "summary.json"
    before = kept.stat().st_mtime_ns
    resumed = run_study(parse_study(TINY), b, workers=2, resume=True, executor=RAY)
    assert study_numbers(resumed) == study_numbers(local)
    assert kept.stat().st_mtime_ns == before  # the finished sub-run was kept, not rerun
    assert _logs(b) == _logs(a)


def _nap(context: str, seconds: float, raises: bool) -> str:
    if raises:
        raise ValueError(f"bad unit in {context}")
    time.sleep(seconds)
    return f"slept {seconds}"


def _units(*specs: tuple[str, float, bool]) -> list[Unit]:
    return [Unit(name, name, (s, r)) for name, s, r in specs]


def test_ctrl_c_keeps_every_finished_unit_and_names_the_running_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    units = _units(("quick", 0.0, False), ("slow", 60.0, False), ("later", 0.0, False))
    ledger = Ledger.of(tmp_path, units)
    original = ray_executor._Drive._progress

    def ctrl_c_once_two_are_in(self: Any) -> None:  # at the driver's poll, as Ctrl-C lands
        original(self)
        if ledger.done("quick") and ledger.done("later"):
            raise KeyboardInterrupt

    monkeypatch.setattr(ray_executor._Drive, "_progress", ctrl_c_once_two_are_in)
    started = time.monotonic()
    with pytest.raises(Interrupted) as stop:
        RayExecutor(2, {}).run(
            Work(_nap, str, "ctx"), units, ledger, advance=_ignore, retries=0, note=_ignore
        )
    assert stop.value.started == ("slow",) and stop.value.not_started == 0
    assert ledger.values == {"quick": "slept 0.0", "later": "slept 0.0"}
    assert time.monotonic() - started < 50  # the slow unit was cut short, not waited for


def _ignore(_: Any) -> None:
    pass


def test_a_unit_s_own_error_is_raised_as_itself(tmp_path: Path) -> None:
    units = _units(("fine", 0.0, False), ("broken", 0.0, True))
    ledger = Ledger.of(tmp_path, units)
    with pytest.raises(ValueError, match="bad unit in ctx"):
        RayExecutor(2, {}).run(
            Work(_nap, str, "ctx"), units, ledger, advance=_ignore, retries=1, note=_ignore
        )
    assert ledger.values in ({}, {"fine": "slept 0.0"})  # never a result for the broken one


def _read_env(context: str, name: str) -> str:
    return os.environ.get(name, "")


def test_endpoint_keys_reach_the_workers_and_no_log(tmp_path: Path) -> None:
    """A key handed to the executor (``units.env_for_workers``, as a study's endpoints name
    it) is set in each actor's environment, and is written into none of Ray's session logs
    (Ray's ``runtime_env`` ``env_vars`` would be: its runtime-env agent logs them)."""
    secret = "sk-seam-" + os.urandom(8).hex()
    units = [Unit("k", "k", ("RAY2_SEAM_KEY",))]
    ledger = Ledger.of(tmp_path, units)
    RayExecutor(1, {"RAY2_SEAM_KEY": secret}).run(
        Work(_read_env, str, "ctx"), units, ledger, advance=_ignore, retries=0, note=_ignore
    )
    assert ledger.values == {"k": secret}
    logs = Path("/tmp/ray/session_latest/logs")
    leaked = []
    for p in logs.rglob("*"):
        try:
            if p.is_file() and secret.encode() in p.read_bytes():
                leaked.append(p.name)
        except OSError:
            continue
    assert leaked == []


def _embedded_url(context: str, nap_s: float) -> tuple[int, str]:
    """In a worker: the embedded endpoint's URL, once it answered the runtime's probe."""
    settings = LLMSettings(endpoints={"local": Embedded(parallel=1, threads=1)}, cache=None)
    with LLMRuntime.open(settings, {"local"}) as rt:  # probes: the URL serves the model
        time.sleep(nap_s)  # both workers hold it at once
        return os.getpid(), rt.clients["local"].config.base_url


def _model_processes() -> list[int]:
    return [
        int(entry.name)
        for entry in Path("/proc").iterdir()
        if entry.name.isdigit() and _cmdline(entry).startswith(b"ray::_NodeModel")
    ]


def _cmdline(entry: Path) -> bytes:
    try:
        return (entry / "cmdline").read_bytes()
    except OSError:
        return b""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_the_embedded_model_starts_once_per_node_and_its_workers_share_it(
    tmp_path: Path,
) -> None:
    """Two workers on one node (the local cluster) need the embedded model: one server
    process starts (the node's named actor), both get its URL, and it stops with the
    executor."""
    try:
        local.gguf_path()
        local.xllamacpp_module()
    except ModelUnavailableError as exc:
        pytest.skip(f"embedded model not installed: {exc}")
    units = [Unit(f"u{i}", f"u{i}", (3.0,)) for i in range(2)]
    ledger = Ledger.of(tmp_path, units)
    with ray_executor.connect(None, 2, len(units), {}, _ignore) as executor:
        executor.run(
            Work(_embedded_url, str, "ctx"),
            units,
            ledger,
            advance=_ignore,
            retries=0,
            note=_ignore,
        )
        servers = _model_processes()  # while the executor is open
        named = [a["name"] for a in ray.util.list_named_actors(all_namespaces=True)]
    workers = {pid for pid, _ in ledger.values.values()}
    urls = {url for _, url in ledger.values.values()}
    assert len(workers) == 2 and len(urls) == 1, ledger.values
    assert len(servers) == 1 and servers[0] not in workers
    node = ray.get_runtime_context().get_node_id()
    assert [n for n in named if n.startswith(ray_embedded.PREFIX)] == [
        ray_embedded.server_name(
            node, ray.get_runtime_context().get_job_id(), Embedded(parallel=1, threads=1)
        )
    ]
    deadline = time.monotonic() + 30
    while _model_processes() and time.monotonic() < deadline:  # stopped with the executor
        time.sleep(0.2)
    assert _model_processes() == []
