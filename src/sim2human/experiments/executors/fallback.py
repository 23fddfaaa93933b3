"""Running on this machine what a lost Ray cluster left unfinished (``--on-ray-loss local``).

By default a lost cluster fails the units it held: the study exits 1 and ``--resume`` runs
them later, which is right on a shared cluster whose nodes come back. A person who started a
study on a laptop's own Ray, or on a cluster they cannot wait for, asks for the other answer:
every unit the cluster did not deliver (running, waiting, or failed on it, since a unit that
raised stops the study before this) runs on the local executor, into the same ledger, under
the same ``--retries``. The study then ends as a local run does: the same ``study.json``,
the same summary and exit code (1 only if a local worker died past its retries).

Units run here with the embedded model served here (``backends.served_for`` for ``local``),
not the nodes' servers Ray's workers used.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from sim2human.experiments.executors.backends import Choice, open_executor, served_for
from sim2human.experiments.executors.pool import Failure, WorkersDied
from sim2human.experiments.executors.units import Advance, ClusterLost, Ledger, Note, Unit, Work
from sim2human.llm.runtime import LLMSettings


def run_here(
    lost: ClusterLost,
    units: Sequence[Unit],
    ledger: Ledger,
    *,
    work_for: Callable[[LLMSettings], Work],
    settings: LLMSettings,
    needed: set[str],
    workers: int | None,
    advance: Advance,
    retries: int,
    note: Note,
) -> None:
    """Run ``lost.rest`` on the local executor into ``ledger``. ``work_for`` gives the work
    with the endpoint settings served here; a ``WorkersDied`` comes out numbered over
    ``units`` (as the remote executor's would), its results read from ``ledger``."""
    rest = list(lost.rest)
    note(
        f"{lost.why}; running its {len(rest)} unfinished unit(s) on this machine "
        "(--on-ray-loss local)"
    )
    here = Choice()
    with (
        served_for(here, settings, needed) as live,
        open_executor(here, workers, len(rest), {}, note) as (local, _),
    ):
        try:
            local.run(work_for(live), rest, ledger, advance=advance, retries=retries, note=note)
        except WorkersDied as died:
            order = {u.id: i for i, u in enumerate(units)}
            failures = [
                Failure(order[rest[f.index].id], f.label, f.reason, f.attempts)
                for f in died.failures
            ]
            results = [ledger.values.get(u.id) for u in units]
            raise WorkersDied(failures, results) from None
