"""The local executor: today's worker pool (``pool.in_processes``) behind the executor
seam (``units.Executor``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from sim2human.experiments.executors.pool import WorkersDied, in_processes
from sim2human.experiments.executors.units import Ledger, Note, Shipment, Unit, Work


def _local_unit(work: Work, unit: Unit) -> Any:
    """One unit in a local worker: the run directory is on this disk, so it writes in place."""
    return work.fn(work.load(work.payload), *unit.call_args())


class LocalExecutor:
    """Today's pool (``in_processes``) behind the executor seam (``units.Executor``): units in
    spawned processes on this machine, each writing its files in place; results delivered to
    the ledger once the pool is done."""

    name = "local"

    def __init__(self, workers: int) -> None:
        self.workers = workers

    def run(
        self,
        work: Work,
        units: Sequence[Unit],
        ledger: Ledger,
        *,
        advance: Callable[[int], None],
        retries: int,
        note: Note,
    ) -> None:
        calls = [(work, u) for u in units]
        labels = [u.label for u in units]
        try:
            results = in_processes(
                _local_unit,
                calls,
                self.workers,
                advance=advance,
                labels=labels,
                retries=retries,
                note=note,
            )
        except WorkersDied as died:
            failed = {f.index for f in died.failures}
            for i, unit in enumerate(units):
                if i not in failed:
                    ledger.deliver(Shipment(unit.id, died.results[i]))
            raise
        for unit, value in zip(units, results, strict=True):
            ledger.deliver(Shipment(unit.id, value))
