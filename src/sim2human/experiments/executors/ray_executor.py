"""The ``ray`` executor: a study's units on Ray actors, on this machine or a cluster.

With ``ray_embedded`` (the embedded model, one server per node), the only module that imports
Ray (the ``ray`` extra; ``backends`` imports this one only for ``--executor ray``). Each worker
is an actor that parses the study config once and then runs units one at a time, pulled by the
driver as workers free up (the controller / pull-worker shape of tau2-bench's runner; verl's
agent-loop workers are Ray actors the same way). A unit runs into a scratch folder on the
worker's node and its files come back in the result (``units.perform``): the driver's ledger is
the single writer of the run directory, and drops a second result for a unit id it already
holds.

Retries are ours, not Ray's (actors with ``max_restarts=0``, ``max_task_retries=0``): a unit
whose actor died (killed, out of memory, its node lost) runs again on a fresh actor up to
``retries`` times, then is reported failed, as in the local pool. Ray's own retries would
rerun a unit silently and could deliver it twice. Ctrl-C kills the actors (their units are cut
short and rerun on ``--resume``); every unit delivered before it is kept.

Endpoint keys and ``SIM2HUMAN_*`` settings (``units.env_for_workers``) reach each actor as
an argument of its constructor, which sets them in the actor's own environment before it
loads anything; only their names are ever printed. Not through Ray's ``runtime_env``
``env_vars``: Ray's runtime-env agent writes those, values and all, into
``/tmp/ray/session_*/logs/runtime_env_agent.log`` ("created runtime env: {"env_vars": ...}",
seen with Ray 2.x here), so a key passed that way lands in a log file on every node.
"""

from __future__ import annotations

import logging
import os
import signal
import time
from collections import deque
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from typing import Any

import ray
from ray import exceptions as ray_errors

from sim2human.errors import Sim2HumanError, UsageError
from sim2human.experiments.executors import pool, ray_embedded, ray_watch
from sim2human.experiments.executors.pool import Failure, Interrupted, RemoteTraceback, WorkersDied
from sim2human.experiments.executors.units import (
    Advance,
    ClusterLost,
    Ledger,
    Note,
    Shipment,
    Unit,
    Work,
    perform,
    say_env,
)
from sim2human.llm.runtime import serve_embedded_by
from sim2human.store import collector

QUIET: dict[str, Any] = {"logging_level": logging.WARNING, "log_to_driver": False}
"""Ray's own start-up lines and the workers' output stay out of the study's terminal."""
POLL_S = 0.2
"""How often the driver looks at finished units and the workers' progress."""
INFRASTRUCTURE = (
    ray_errors.RayActorError,  # the actor died: killed, out of memory, its node lost
    ray_errors.WorkerCrashedError,
    ray_errors.ObjectLostError,
    ray_errors.NodeDiedError,
)
"""Errors of the machinery, never of the unit: the unit is run again (and never scored)."""


class _Tally:
    """An actor adding up the episodes workers finish; the driver takes the sum to advance
    its progress bar."""

    def __init__(self) -> None:
        self.n = 0

    def add(self, n: int) -> None:
        self.n += n

    def take(self) -> int:
        n, self.n = self.n, 0
        return n


class _ToTally:
    """What ``pool.report_progress`` puts on in a worker: the tally actor."""

    def __init__(self, tally: Any) -> None:
        self.tally = tally

    def put(self, n: int) -> None:
        self.tally.add.remote(n)


class _Host:
    """A worker actor: the study config parsed once, then unit after unit."""

    def __init__(self, work: Work, tally: Any, env: dict[str, str]) -> None:
        os.environ.update(env)  # keys and settings, before anything reads them
        collector.for_batch_work()  # the worker is ours: collect rarely while it plays
        pool.set_progress_sink(_ToTally(tally))
        serve_embedded_by(ray_embedded.node_server)  # the node's one embedded model, shared
        self.work = work
        self.context = work.load(work.payload)

    def pid(self) -> int:
        return os.getpid()

    def run(self, unit: Unit) -> Shipment:
        return perform(self.work, self.context, unit)


@contextmanager
def connect(
    address: str | None,
    workers: int | None,
    n_units: int,
    env: dict[str, str],
    note: Note,
    fallback: bool = False,
) -> Iterator[RayExecutor]:
    """Join the cluster at ``address`` (``auto``, ``ray://HOST:PORT``), or start a local one
    with ``workers`` CPUs (default: every core), or use the one this process already joined;
    leave it as found afterwards (the embedded servers its workers started, stopped).
    ``fallback``: a lost cluster raises ``ClusterLost`` (its units to run elsewhere) instead of
    failing them."""
    mine = not ray.is_initialized()
    if mine:
        _init(address, workers)
    try:
        cpus = int(ray.cluster_resources().get("CPU", 1))
        n = max(1, min(workers or cpus, n_units))
        where = address or "a local Ray cluster"
        note(f"ray: {n} worker(s) on {where} ({cpus} CPUs); {say_env(env)}")
        yield RayExecutor(n, env, fallback)
    finally:  # bounded: with the cluster gone, either call can wait for ever
        ray_watch.bounded(ray_embedded.stop_servers, ray_watch.CALL_S)
        if mine:
            ray_watch.bounded(ray.shutdown, ray_watch.CALL_S)


def _init(address: str | None, workers: int | None) -> None:
    """``ray.init``, keeping this process's SIGTERM handler (Ray's own would exit without the
    lines an interrupted study prints, ``cli/signals``)."""
    previous = signal.getsignal(signal.SIGTERM)
    try:
        if address is None:
            _start_local(workers or os.cpu_count() or 1)
        else:
            _join(address)
    finally:
        with suppress(ValueError):  # not the main thread: nothing was changed
            signal.signal(signal.SIGTERM, previous)


def _start_local(cpus: int) -> None:
    """A local Ray instance, patient with a busy machine: Ray gives its node agents 30 s to
    start, which a machine whose every core is busy can miss (then one more try)."""
    os.environ.setdefault("RAY_agent_register_timeout_ms", "180000")
    for attempt in (1, 2):
        try:
            ray.init(num_cpus=cpus, include_dashboard=False, **QUIET)
            return
        except Exception as err:  # Ray raises a bare Exception when its node times out
            ray.shutdown()
            if attempt == 2:
                raise Sim2HumanError(f"cannot start a local Ray cluster: {_first(err)}") from None


def _join(address: str) -> None:
    try:
        ray.init(address=address, **QUIET)
    except (ConnectionError, RuntimeError, ValueError) as err:
        raise UsageError(
            f"--address {address}: cannot join the Ray cluster: {_first(err)}"
        ) from None


def _first(err: BaseException) -> str:
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__


class RayExecutor:
    """Units on ``workers`` Ray actors (``units.Executor``)."""

    name = "ray"

    def __init__(self, workers: int, env: dict[str, str], fallback: bool = False) -> None:
        self.workers, self.env, self.fallback = workers, env, fallback

    def run(
        self,
        work: Work,
        units: Sequence[Unit],
        ledger: Ledger,
        *,
        advance: Advance,
        retries: int,
        note: Note,
    ) -> None:
        drive = _Drive(self, work, ledger, advance, retries, note, deque(units))
        try:
            drive.loop()
        except KeyboardInterrupt:
            started = [u.label for _, u in drive.busy.values()]
            drive.stop()
            raise Interrupted(started, len(drive.pending)) from None
        drive.stop()
        if drive.lost is not None and drive.error is None:
            raise ClusterLost(drive.lost, [u for u in units if not ledger.done(u.id)])
        drive.finish(units)


@dataclass
class _Drive:
    """The driver's side of one ``RayExecutor.run``: which actor runs which unit, attempts,
    failures, the first error a unit raised."""

    ex: RayExecutor
    work: Work
    ledger: Ledger
    advance: Advance
    retries: int
    note: Note
    pending: deque[Unit]
    busy: dict[Any, tuple[Any, Unit]] = field(default_factory=dict)
    idle: list[Any] = field(default_factory=list)
    attempts: dict[str, int] = field(default_factory=dict)
    failures: list[Failure] = field(default_factory=list)
    error: BaseException | None = None
    probes: dict[Any, tuple[Any, float]] = field(default_factory=dict)
    watch: ray_watch.ClusterWatch = field(default_factory=ray_watch.ClusterWatch)
    lost: str | None = None
    """Why the cluster is gone, when it went and the executor falls back (``ClusterLost``)."""

    def __post_init__(self) -> None:
        self.tally = ray.remote(num_cpus=0)(_Tally).remote()
        options: dict[str, Any] = {"num_cpus": 1, "max_restarts": 0, "max_task_retries": 0}
        self.host = ray.remote(_Host).options(**options)  # no runtime_env: Ray logs its env_vars

    def loop(self) -> None:
        while self.busy or (self.pending and self.error is None):
            while self.pending and self.error is None and len(self.busy) < self.ex.workers:
                self._start(self.pending.popleft())
            ready, _ = ray.wait(list(self.busy), num_returns=1, timeout=POLL_S)
            self._progress()
            for ref in ready:
                self._collect(ref)
            self._never_started()
            if (lost := self.watch.lost()) is not None:
                self._lost(lost)
                return
        self._progress()

    def _never_started(self) -> None:
        """A fresh actor silent past ``START_DEADLINE_S`` was never placed (no node with a
        free CPU): its unit counts as a lost worker's, run again or failed."""
        if not self.probes:
            return
        started, _ = ray.wait(list(self.probes), num_returns=len(self.probes), timeout=0)
        for probe in started:
            del self.probes[probe]
        now, deadline = time.monotonic(), ray_watch.START_DEADLINE_S
        for probe, (actor, since) in list(self.probes.items()):
            if now - since < deadline:
                continue
            del self.probes[probe]
            for ref, (holder, unit) in list(self.busy.items()):
                if holder is actor:
                    del self.busy[ref]
                    with suppress(Exception):
                        ray.kill(actor)
                    self._died(unit, f"no Ray node started a worker for it in {deadline:.0f} s")

    def _lost(self, why: str) -> None:
        """The cluster is gone: every unit held (running or waiting) is failed, none rerun
        (there is nowhere to run it); ``finish`` reports them as a dead local worker's are.
        With ``fallback``, nothing is failed: ``run`` hands every unit not delivered on."""
        held = [u for _, u in self.busy.values()] + list(self.pending)
        self.busy.clear()
        self.pending.clear()
        self.probes.clear()
        if self.ex.fallback:
            self.lost = why
            return
        self.note(f"{why}; the {len(held)} unit(s) it held failed")
        for unit in held:
            tried = self.attempts.get(unit.id, 0)
            self.failures.append(Failure(len(self.failures), unit.label, why, tried))

    def _start(self, unit: Unit) -> None:
        if self.idle:
            actor = self.idle.pop()
        else:
            actor = self.host.remote(self.work, self.tally, self.ex.env)
            self.probes[actor.pid.remote()] = (actor, time.monotonic())
        self.attempts[unit.id] = self.attempts.get(unit.id, 0) + 1
        self.busy[actor.run.remote(unit)] = (actor, unit)

    def _progress(self) -> None:
        with suppress(*INFRASTRUCTURE, ray_errors.GetTimeoutError):
            if n := ray.get(self.tally.take.remote(), timeout=ray_watch.CALL_S):
                self.advance(n)

    def _collect(self, ref: Any) -> None:
        actor, unit = self.busy.pop(ref)
        try:
            shipment = ray.get(ref)
        except INFRASTRUCTURE as err:
            with suppress(Exception):
                ray.kill(actor)
            self._died(unit, _reason(err))
            return
        except ray_errors.RayTaskError as err:  # the unit raised: no new units, as locally
            self.idle.append(actor)
            if self.error is None:
                cause = getattr(err, "cause", None)
                self.error = cause if isinstance(cause, BaseException) else err
                self.error.__cause__ = RemoteTraceback(str(err))
            return
        self.idle.append(actor)
        self.ledger.deliver(shipment)

    def _died(self, unit: Unit, reason: str) -> None:
        """Run the unit again on a fresh actor, or mark it failed once its attempts are spent."""
        tried = self.attempts[unit.id]
        if tried <= self.retries and self.error is None:
            self.pending.appendleft(unit)
            self.note(
                f"{unit.label}: {reason}; running it again "
                f"(attempt {tried + 1} of {self.retries + 1})"
            )
            return
        self.failures.append(Failure(len(self.failures), unit.label, reason, tried))

    def stop(self) -> None:
        """Kill every actor now (a running unit is cut short; it reruns on ``--resume``)."""
        for actor in [*(a for a, _ in self.busy.values()), *self.idle]:
            with suppress(Exception):
                ray.kill(actor)
        with suppress(Exception):
            ray.kill(self.tally)
        self.busy.clear()
        self.idle.clear()

    def finish(self, units: Sequence[Unit]) -> None:
        """Raise what went wrong, as ``in_processes`` does."""
        if self.error is not None:
            raise self.error
        if self.failures:
            order = {u.label: i for i, u in enumerate(units)}
            failures = [
                Failure(order[f.label], f.label, f.reason, f.attempts) for f in self.failures
            ]
            results = [self.ledger.values.get(u.id) for u in units]
            raise WorkersDied(sorted(failures, key=lambda f: f.index), results)


def _reason(err: BaseException) -> str:
    """Why a unit's worker is gone, in one line."""
    return f"ray worker lost ({type(err).__name__}: {_first(err)[:160]})"
