"""``study --executor ray --on-ray-loss local``: what a lost Ray cluster left runs on this
machine, and the study ends as a local run of it does (same numbers, episodes, exit).

The lost cluster is played by an executor that delivers some units and then raises what the
Ray executor raises when ``ray_watch`` sees the cluster gone (``ClusterLost``), so the runner's
fallback is tested without Ray; the real ``kill -9`` of the raylet is in
``test_ray_node_loss.py``."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from sim2human.errors import UsageError
from sim2human.experiments.executors.backends import Choice, ray_installed
from sim2human.experiments.executors.local_executor import LocalExecutor
from sim2human.experiments.executors.pool import WorkersDied
from sim2human.experiments.executors.units import ClusterLost, Ledger, Unit, Work
from sim2human.experiments.study import runner
from sim2human.experiments.study.config import parse_study
from sim2human.experiments.study.results import StudyResult
from sim2human.experiments.study.runner import run_study
from tiny_study import TINY, study_numbers

LOST = "the Ray cluster has no alive node (15 s)"


class LostCluster:
    """Delivers its first ``deliver`` units (run locally, as a node would), then is lost."""

    name = "ray"

    def __init__(self, deliver: int) -> None:
        self.deliver = deliver

    def run(
        self, work: Work, units: Sequence[Unit], ledger: Ledger, *, retries: int, **kw: Any
    ) -> None:
        LocalExecutor(1).run(work, units[: self.deliver], ledger, retries=retries, **kw)
        raise ClusterLost(LOST, [u for u in units if not ledger.done(u.id)])


def _lose_the_cluster(monkeypatch: pytest.MonkeyPatch, deliver: int) -> None:
    local_open = runner.open_executor

    @contextmanager
    def fake(choice: Choice, workers: int | None, n: int, env: Any, note: Any) -> Iterator[Any]:
        if choice.kind != "ray":  # the fallback's own local executor
            with local_open(choice, workers, n, env, note) as opened:
                yield opened
            return
        yield LostCluster(deliver), 2

    monkeypatch.setattr(runner, "open_executor", fake)


def _study(out: Path, notes: list[str], choice: Choice) -> StudyResult:
    from rich.console import Console

    class Noting(Console):
        def print(self, *objects: Any, **_: Any) -> None:
            notes.extend(str(o) for o in objects)

    return run_study(parse_study(TINY), out, workers=2, executor=choice, console=Noting())


def _logs(run: Path) -> dict[str, bytes]:
    return {str(p.relative_to(run)): p.read_bytes() for p in sorted(run.rglob("episodes.jsonl"))}


@pytest.mark.slow
@pytest.mark.skipif(not ray_installed(), reason="--executor ray needs the ray extra")
def test_a_lost_cluster_s_units_run_here_as_a_local_run_would(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    local = run_study(parse_study(TINY), tmp_path / "local", workers=2)
    _lose_the_cluster(monkeypatch, deliver=1)
    notes: list[str] = []
    got = _study(tmp_path / "ray", notes, Choice("ray", on_ray_loss="local"))
    assert got.failed == []  # nothing failed: the exit of a local run (0)
    assert study_numbers(got) == study_numbers(local)
    assert _logs(tmp_path / "ray") == _logs(tmp_path / "local")
    said = " ".join(notes)
    assert LOST in said and "unfinished unit(s) on this machine (--on-ray-loss local)" in said


@pytest.mark.skipif(not ray_installed(), reason="--executor ray needs the ray extra")
def test_a_worker_dying_in_the_fallback_is_reported_against_the_whole_study(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A local worker dying past its retries in the fallback is one failed sub-run, named by
    its place in the whole study (not in the fallback's share of it)."""
    units = [Unit(id=f"u{i}", label=f"unit {i}", args=(i,)) for i in range(3)]
    ledger = Ledger.of(tmp_path, units)
    lost = ClusterLost(LOST, units[1:])

    def dies(self: LocalExecutor, work: Work, rest: Sequence[Unit], led: Ledger, **_: Any) -> None:
        from sim2human.experiments.executors.pool import Failure

        raise WorkersDied([Failure(1, rest[1].label, "worker died", 2)], [None, None])

    monkeypatch.setattr(LocalExecutor, "run", dies)
    from sim2human.experiments.executors.fallback import run_here

    with pytest.raises(WorkersDied) as died:
        run_here(
            lost,
            units,
            ledger,
            work_for=lambda live: Work(print, print, ""),
            settings=parse_study(TINY).llm,
            needed=set(),
            workers=1,
            advance=lambda n: None,
            retries=1,
            note=lambda s: None,
        )
    assert [(f.index, f.label) for f in died.value.failures] == [(2, "unit 2")]


def test_on_ray_loss_is_for_ray_and_fail_or_local() -> None:
    with pytest.raises(UsageError, match="--on-ray-loss is for --executor ray"):
        Choice("local", on_ray_loss="local").check()
    with pytest.raises(UsageError, match="--on-ray-loss later: not one of fail, local"):
        Choice("ray", on_ray_loss="later").check()
