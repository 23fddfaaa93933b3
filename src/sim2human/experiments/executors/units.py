"""The executor seam: a study's work as units with deterministic ids, run by an executor, and
written into the run directory by the driver alone.

A **unit** is one job of a study (a condition x seed sub-run, the scripted reference, the
diversity measurement) named by an id computed from the config, never by a worker
(``conditions/<name>/seed-<k>``): the same study gives the same ids on every executor and on
every resume. An **executor** runs units somewhere (``local``: spawned processes on this
machine, ``pool.in_processes``; ``ray``: actors on a Ray cluster, ``ray_executor``) and
hands each result to the driver's **ledger**, the single writer of the run directory: a result
whose id it already holds is dropped (a remote task run twice, as Ray's at-most-once retries
allow, is counted once). A unit that writes files (``Unit.out``) writes them in place where the
run directory is on the worker's disk (``local``); elsewhere it writes them into a scratch
folder on its own node and ships them back (``perform``), and the ledger writes them with
``summary.json`` last, the file that marks a sub-run finished.

Failures of the infrastructure (a worker killed, a node lost) are retried up to a limit and
reported as failed jobs (``pool.WorkersDied``, then ``study.json``'s ``failed``), never
scored as an agent's failure: an agent's numbers come only from units that finished.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from sim2human import outputs
from sim2human.errors import Sim2HumanError
from sim2human.store.layout import SUMMARY

Note = Callable[[str], None]
Advance = Callable[[int], None]


@dataclass(frozen=True)
class Unit:
    """One job: ``id`` (deterministic, unique in a study), ``label`` (for people), the
    arguments of the work function, and ``out``: the path it writes (passed as its last
    argument), or None."""

    id: str
    label: str
    args: tuple[Any, ...]
    out: str | None = None

    def call_args(self, out: str | None = None) -> tuple[Any, ...]:
        """The work function's arguments, writing to ``out`` (default: the unit's own)."""
        if self.out is None:
            return self.args
        return (*self.args, out if out is not None else self.out)


@dataclass(frozen=True)
class Work:
    """What every unit of a batch runs: ``fn(load(payload), *unit.call_args())``. A remote
    worker computes ``load(payload)`` once (the study config, parsed) and keeps it."""

    fn: Callable[..., Any]
    load: Callable[[Any], Any]
    payload: Any


@dataclass(frozen=True)
class Shipment:
    """A unit's result as it crosses machines: its return value and the files it wrote
    (``(relative path, bytes)``; one entry with path ``""`` when ``out`` is a file)."""

    unit_id: str
    value: Any
    files: tuple[tuple[str, bytes], ...] = ()
    is_dir: bool = True


def perform(work: Work, context: Any, unit: Unit) -> Shipment:
    """Run ``unit`` on a worker whose disk may not hold the run directory: into a fresh
    scratch folder, then its files packed into the shipment (the folder removed)."""
    if unit.out is None:
        return Shipment(unit.id, work.fn(context, *unit.call_args()))
    scratch = Path(tempfile.mkdtemp(prefix="sim2human-unit-"))
    try:
        target = scratch / Path(unit.out).name
        value = work.fn(context, *unit.call_args(str(target)))
        files, is_dir = _pack(target)
        return Shipment(unit.id, value, files, is_dir)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _pack(target: Path) -> tuple[tuple[tuple[str, bytes], ...], bool]:
    """The files a unit wrote at ``target`` (a file or a folder), and whether it is a folder."""
    if target.is_file():
        return (("", target.read_bytes()),), False
    files = sorted(
        (str(p.relative_to(target)), p.read_bytes()) for p in target.rglob("*") if p.is_file()
    )
    return tuple(files), True


def shipped_order(files: Sequence[tuple[str, bytes]]) -> list[tuple[str, bytes]]:
    """The order the ledger writes a shipment's files in: ``SUMMARY`` (whose presence marks a
    sub-run finished) after everything else."""
    return sorted(files, key=lambda f: (Path(f[0]).name == SUMMARY, f[0]))


@dataclass
class Ledger:
    """The driver's record of finished units, the one writer of ``root`` (the run directory).

    ``deliver`` takes a unit's result once: a second result for an id already delivered is
    dropped (and counted in ``duplicates``)."""

    root: Path
    units: dict[str, Unit]
    values: dict[str, Any] = field(default_factory=dict)
    duplicates: int = 0

    @classmethod
    def of(cls, root: Path, units: Sequence[Unit]) -> Ledger:
        ids = [u.id for u in units]
        if len(set(ids)) != len(ids):
            raise ValueError(f"unit ids are not unique: {sorted(ids)}")
        return cls(root, {u.id: u for u in units})

    def deliver(self, result: Shipment) -> bool:
        """Write ``result``'s files (if shipped) and keep its value; False for a duplicate."""
        if result.unit_id in self.values:
            self.duplicates += 1
            return False
        unit = self.units[result.unit_id]
        if unit.out is not None and result.files:
            self._write(Path(unit.out), result)
        self.values[result.unit_id] = result.value
        return True

    def _write(self, target: Path, result: Shipment) -> None:
        outputs.remove(target, inside=self.root)  # what a cut-short attempt left, if any
        for rel, data in shipped_order(result.files):
            path = target / rel if result.is_dir else target
            outputs.write_bytes(path, data, inside=self.root)

    def done(self, unit_id: str) -> bool:
        return unit_id in self.values


class ClusterLost(Sim2HumanError):
    """The cluster a remote executor ran on is gone, and the study asked to go on without it
    (``study --on-ray-loss local``): ``rest`` are its units not delivered (running, waiting,
    or failed on the cluster), for the driver to run on this machine (``fallback``)."""

    def __init__(self, why: str, rest: Sequence[Unit]) -> None:
        super().__init__(f"{why}; {len(rest)} unit(s) not finished")
        self.why = why
        self.rest = tuple(rest)


class Executor(Protocol):
    """Where units run. ``run`` delivers each finished unit to ``ledger`` as it finishes,
    retries a unit whose worker died up to ``retries`` times (``note`` says so), raises
    ``pool.WorkersDied`` naming the units that still failed once the others are done,
    the first exception a unit raised once the running ones end, and
    ``pool.Interrupted`` on Ctrl-C (finished units delivered, the rest stopped)."""

    name: str

    def run(
        self,
        work: Work,
        units: Sequence[Unit],
        ledger: Ledger,
        *,
        advance: Advance,
        retries: int,
        note: Note,
    ) -> None: ...


def env_for_workers(names: Sequence[str]) -> dict[str, str]:
    """The environment variables remote workers need (endpoint keys by the names the config
    gives, ``SIM2HUMAN_*`` settings): set ones only. Their values travel to each worker in its
    constructor's arguments, never in a log line (``say_env`` names them)."""
    wanted = {*names, *(k for k in os.environ if k.startswith("SIM2HUMAN_"))}
    return {k: os.environ[k] for k in sorted(wanted) if os.environ.get(k)}


def say_env(env: dict[str, str]) -> str:
    """One line naming (never showing) the variables passed to workers."""
    return "passing to workers: " + (", ".join(sorted(env)) if env else "no variables")
