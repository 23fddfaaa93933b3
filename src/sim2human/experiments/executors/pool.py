"""Work in spawned worker processes that die with their parent, survive the death of one of
them, and advance a progress bar by sending episode counts over their own pipes.

Workers never outlive the process that started them: on Linux the kernel kills each one when its
parent dies (``PR_SET_PDEATHSIG``, so ``kill -9`` of the main process too), and everywhere a
watchdog thread exits a worker whose parent has gone. Workers ignore Ctrl-C and SIGTERM: the
parent handles them, stops the workers, and reports which calls were cut short
(``Interrupted``), so a terminal shows one line per interrupted sub-run instead of a traceback
per worker. There is no manager process to orphan.

Why not ``concurrent.futures.ProcessPoolExecutor``: when one of its workers dies (the
out-of-memory killer's usual victim) it breaks for good, terminates every other worker and fails
every call with ``BrokenProcessPool``, naming none. Here each worker has its own pipe, so the
parent knows which call a dead worker was running: that call is run again in a fresh worker up
to ``retries`` times (Ray Tune's ``FailureConfig(max_failures=...)``), then marked failed, while
the other calls go on undisturbed (``WorkersDied`` names each failed call and why).

Why progress goes over each worker's own pipe, not a ``multiprocessing.Queue``: a queue's
writers share one lock, taken by a feeder thread in each worker; a worker killed while its feeder
held it left the lock taken for good, so every other worker's progress stopped and then its exit
(which flushes the queue) never came, and the parent, joining its children at exit, waited for
ever: a study that had finished every sub-run never ended (the CI of stop 52). A worker's own
pipe dies with it, and the parent reads a cut-off message as that worker's death.
"""

from __future__ import annotations

import ctypes
import multiprocessing as mp
import os
import pickle
import signal
import sys
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable, Sequence
from contextlib import suppress
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from typing import Any, TypeVar

from sim2human.errors import Sim2HumanError
from sim2human.experiments.executors.units import Note
from sim2human.store import collector

T = TypeVar("T")
PR_SET_PDEATHSIG = 1
_NOT_STARTED, _STARTED, _DONE = 0, 1, 2
_PROGRESS, _REPLY = "progress", "reply"
"""The two messages a worker sends: episodes done since the last, and its call's outcome."""
PROGRESS_EVERY = 0.1
"""Seconds between a worker's progress messages (counts in between are added up)."""
_sink: Any = None
"""In a worker: where ``report_progress`` puts its numbers (None when nowhere)."""
_state: Any = None
"""In a worker: the shared per-call state array (not started / started / done)."""


class Interrupted(KeyboardInterrupt):
    """Ctrl-C during ``in_processes``: the calls cut short and how many never started."""

    def __init__(self, started: Sequence[str], not_started: int) -> None:
        super().__init__(f"interrupted: {len(started)} running, {not_started} not started")
        self.started = tuple(started)
        self.not_started = not_started


@dataclass(frozen=True)
class Failure:
    """A call whose worker died on each of its ``attempts``."""

    index: int
    label: str
    reason: str
    attempts: int


class WorkersDied(Sim2HumanError):
    """Calls whose workers died ``retries + 1`` times; every other call finished.
    ``results``: in call order, None for the failed ones."""

    def __init__(self, failures: Sequence[Failure], results: Sequence[Any]) -> None:
        named = "; ".join(f"{f.label}: {f.reason}" for f in failures)
        super().__init__(f"{len(failures)} of {len(results)} call(s) failed: {named}")
        self.failures = tuple(failures)
        self.results = list(results)


class RemoteTraceback(Exception):
    """The traceback of an exception raised in a worker (its ``__cause__`` in the parent)."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text

    def __str__(self) -> str:
        return f"\n{self.text}"


def death(exitcode: int | None) -> str:
    """Why a worker is gone, in words (``exitcode`` as ``multiprocessing`` gives it)."""
    if exitcode is None or exitcode >= 0:
        return f"worker exited with code {exitcode}" if exitcode else "worker exited"
    number = -exitcode
    try:
        name = signal.Signals(number).name
    except ValueError:
        name = ""
    oom = ", perhaps out of memory" if number == signal.SIGKILL else ""
    return f"worker died (signal {number}{' ' + name if name else ''}{oom})"


def report_progress(n: int) -> None:
    """Advance the parent's progress bar by ``n`` (in a worker of ``in_processes``, or of an
    executor that set a sink with ``set_progress_sink``)."""
    if _sink is not None:
        _sink.put(n)


def set_progress_sink(sink: Any) -> None:
    """Where ``report_progress`` puts its numbers in this worker (anything with ``put(n)``):
    how a remote executor's worker feeds the driver's progress bar."""
    global _sink
    _sink = sink


def die_with_parent(parent: int) -> None:
    """Make this process exit when ``parent`` does (call it first thing in a child)."""
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):  # no prctl: the watchdog below still works
            pass
    if os.getppid() != parent:  # it died before the line above took effect
        os._exit(1)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="sim2human-parent-watch", daemon=True).start()


class _PipeSink:
    """A worker's end of its pipe: progress (added up, sent at most every ``PROGRESS_EVERY``
    seconds) and then its call's reply, one thread at a time (a call may report from threads)."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self.lock = threading.Lock()
        self.pending = 0
        self.sent = time.monotonic()

    def put(self, n: int) -> None:
        with self.lock:
            self.pending += n
            if time.monotonic() - self.sent >= PROGRESS_EVERY:
                self._flush()

    def reply(self, ok: bool, value: Any) -> None:
        """The call's outcome, after the progress it has not sent yet."""
        with self.lock:
            self._flush()
            self.conn.send((_REPLY, ok, value))

    def _flush(self) -> None:
        if self.pending:
            self.conn.send((_PROGRESS, self.pending))
            self.pending = 0
        self.sent = time.monotonic()


def _init_worker(parent: int, sink: _PipeSink, state: Any) -> None:
    global _sink, _state
    die_with_parent(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C and stops us
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # and SIGTERM, the same way
    _sink, _state = sink, state


def _call(index: int, fn: Callable[..., T], args: tuple[Any, ...]) -> T:
    _state[index] = _STARTED
    collector.for_batch_work()  # the worker is ours: collect rarely while it plays
    try:
        return fn(*args)
    finally:
        _state[index] = _DONE


def _portable(err: BaseException) -> tuple[BaseException, str]:
    """``err`` as it can cross the pipe (else a RuntimeError saying what it was), and its
    traceback's text."""
    text = "".join(traceback.format_exception(err))
    try:
        pickle.loads(pickle.dumps(err))
    except Exception:  # any failure to round-trip: send a plain one instead
        return RuntimeError(f"{type(err).__name__}: {err}"), text
    return err, text


def _serve(conn: Connection, parent: int, state: Any) -> None:
    """A worker's life: run each ``(index, fn, args)`` it is sent, send progress while it runs,
    then ``(_REPLY, True, result)`` or ``(_REPLY, False, (exception, traceback))``, until it is
    sent None or the pipe closes."""
    sink = _PipeSink(conn)
    _init_worker(parent, sink, state)
    while True:
        try:
            task = conn.recv()
        except (EOFError, OSError):
            return
        if task is None:
            return
        index, fn, args = task
        try:
            ok, value = True, _call(index, fn, args)
        except BaseException as err:  # raised again in the parent
            ok, value = False, _portable(err)
        try:
            sink.reply(ok, value)
        except Exception as err:  # an unpicklable result (pickled whole before any byte is sent)
            sink.reply(False, _portable(RuntimeError(f"the result cannot be sent: {err}")))


class _Worker:
    """One spawned worker and the parent's end of its pipe."""

    def __init__(self, ctx: Any, initargs: tuple[Any, ...]) -> None:
        here, there = ctx.Pipe()
        self.proc = ctx.Process(target=_serve, args=(there, *initargs), name="sim2human-worker")
        self.proc.start()
        there.close()  # the child holds the only other end: its death is EOF here
        self.conn: Connection = here
        self.index = -1
        """The call it is running."""
        self.reported = 0
        """The progress that call has reported (taken back if it dies and runs again)."""

    def gone(self) -> str:
        """Why it died (it has: its pipe is closed)."""
        self.conn.close()
        self.proc.join(5)
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join(5)
        return death(self.proc.exitcode)


@dataclass
class _Plan:
    """What ``in_processes`` tracks across workers: results, attempts, failures."""

    calls: Sequence[tuple[Any, ...]]
    names: list[str]
    retries: int
    note: Note | None
    state: Any

    def __post_init__(self) -> None:
        n = len(self.calls)
        self.results: list[Any] = [None] * n
        self.attempts = [0] * n
        self.pending = deque(range(n))
        self.failures: list[Failure] = []
        self.error: tuple[BaseException, str] | None = None

    def died(self, index: int, reason: str) -> bool:
        """Run the call again (True), or mark it failed once its attempts are spent."""
        if self.attempts[index] <= self.retries and self.error is None:
            self.state[index] = _NOT_STARTED
            self.pending.appendleft(index)
            if self.note is not None:
                self.note(
                    f"{self.names[index]}: {reason}; running it again (attempt "
                    f"{self.attempts[index] + 1} of {self.retries + 1})"
                )
            return True
        self.state[index] = _DONE
        self.failures.append(Failure(index, self.names[index], reason, self.attempts[index]))
        return False


class _Pool:
    def __init__(
        self, ctx: Any, size: int, initargs: tuple[Any, ...], advance: Callable[[int], None]
    ) -> None:
        self.ctx, self.size, self.initargs, self.advance = ctx, size, initargs, advance
        self.idle: list[_Worker] = []
        self.busy: dict[Connection, _Worker] = {}

    def run(self, fn: Callable[..., Any], plan: _Plan) -> None:
        """Every call of ``plan`` through the workers; a dead worker is replaced."""
        while self.busy or (plan.pending and plan.error is None):
            while plan.pending and plan.error is None and len(self.busy) < self.size:
                self._start(fn, plan, plan.pending.popleft())
            for conn in wait(list(self.busy)):
                assert isinstance(conn, Connection)
                self._receive(conn, plan)

    def _start(self, fn: Callable[..., Any], plan: _Plan, index: int) -> None:
        worker = self.idle.pop() if self.idle else _Worker(self.ctx, self.initargs)
        worker.index, worker.reported = index, 0
        plan.attempts[index] += 1
        with suppress(BrokenPipeError, ConnectionResetError):  # died idle: seen in _collect
            worker.conn.send((index, fn, plan.calls[index]))
        self.busy[worker.conn] = worker

    def _receive(self, conn: Connection, plan: _Plan) -> None:
        """One message from a busy worker: progress, its call's reply, or its death (a message
        cut off by it is end of file here)."""
        try:
            message = conn.recv()
        except (EOFError, OSError):
            worker = self.busy.pop(conn)
            if plan.died(worker.index, worker.gone()) and worker.reported:
                self.advance(-worker.reported)  # the attempt that runs again reports it anew
            return
        if message[0] == _PROGRESS:
            self.busy[conn].reported += message[1]
            self.advance(message[1])
            return
        _, ok, value = message
        worker = self.busy.pop(conn)
        self.idle.append(worker)
        if ok:
            plan.results[worker.index] = value
        elif plan.error is None:  # the first failure: no new calls; the running ones end
            plan.error = value

    def kill(self) -> None:
        """Kill every worker now (their calls rerun on --resume)."""
        workers = [*self.busy.values(), *self.idle]
        for w in workers:
            if w.proc.is_alive():
                w.proc.kill()
        for w in workers:
            w.proc.join(5)
            w.conn.close()
        self.busy.clear()
        self.idle.clear()

    def close(self) -> None:
        """Tell idle workers to exit, without waiting for them (a trained sub-run's worker takes
        about a second to tear down torch; ``multiprocessing`` joins them at the latest when
        this process exits); kill any still busy."""
        for w in self.idle:
            with suppress(OSError):
                w.conn.send(None)
            w.conn.close()
        self.idle.clear()
        self.kill()


def in_processes(
    fn: Callable[..., T],
    calls: Sequence[tuple[Any, ...]],
    workers: int,
    *,
    advance: Callable[[int], None] | None = None,
    labels: Sequence[str] | None = None,
    retries: int = 0,
    note: Note | None = None,
) -> list[T]:
    """``fn(*args)`` for each of ``calls`` in up to ``workers`` spawned processes; results in
    the order of ``calls``. ``advance`` is given what ``report_progress`` reports in the
    workers (added up over ``PROGRESS_EVERY`` seconds), in this process.

    A call whose worker dies is run again in a new worker up to ``retries`` times (``note``
    says so), then counted failed; the others go on, and ``WorkersDied`` names the failed ones
    (by ``labels``) once the rest are done. An exception a call raises stops calls not yet
    started and is raised once the running ones end. Ctrl-C stops every worker at once and
    raises ``Interrupted`` naming the calls that were running."""
    ctx = mp.get_context("spawn")
    state = ctx.Array("b", max(1, len(calls)), lock=False)
    names = list(labels) if labels is not None else [str(i) for i in range(len(calls))]
    plan = _Plan(calls, names, retries, note, state)
    pool = _Pool(ctx, max(1, workers), (os.getpid(), state), advance or _ignore)
    try:
        pool.run(fn, plan)
    except KeyboardInterrupt:
        pool.kill()
        started = [names[i] for i in range(len(calls)) if state[i] == _STARTED]
        waiting = sum(state[i] == _NOT_STARTED for i in range(len(calls)))
        raise Interrupted(started, waiting) from None
    finally:
        pool.close()
    if plan.error is not None:
        err, text = plan.error
        raise err from RemoteTraceback(text)
    if plan.failures:
        raise WorkersDied(sorted(plan.failures, key=lambda f: f.index), plan.results)
    return plan.results


def _ignore(n: int) -> None:
    """Progress nobody asked for."""
