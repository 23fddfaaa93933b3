"""Choosing an executor by name (``--executor local|ray``) and opening it for one study.

``local`` is the process pool of ``executors``; ``ray`` is imported only when asked for, so the
core never needs Ray, and a missing ``ray`` is one usage error before anything is written.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass

from sim2human.errors import UsageError
from sim2human.experiments.executors.local_executor import LocalExecutor
from sim2human.experiments.executors.units import Executor, Note
from sim2human.llm.runtime import LLMSettings, serve_embedded

EXECUTORS = ("local", "ray")
ON_RAY_LOSS = ("fail", "local")
"""What a study does when its Ray cluster is lost (``ray_watch``): ``fail`` the units it held
(exit 1, ``--resume`` later), or run them on this machine (``fallback``)."""


@dataclass(frozen=True)
class Choice:
    """What ``--executor``, ``--address`` and ``--workers`` asked for."""

    kind: str = "local"
    address: str | None = None
    on_ray_loss: str = "fail"

    def check(self) -> None:
        """Refuse an unknown executor, an address without Ray, or Ray not installed."""
        if self.kind not in EXECUTORS:
            raise UsageError(f"--executor {self.kind}: not one of {', '.join(EXECUTORS)}")
        if self.on_ray_loss not in ON_RAY_LOSS:
            raise UsageError(
                f"--on-ray-loss {self.on_ray_loss}: not one of {', '.join(ON_RAY_LOSS)}"
            )
        if self.kind != "ray":
            if self.address is not None:
                raise UsageError("--address is for --executor ray (a Ray cluster to join)")
            if self.on_ray_loss != "fail":
                raise UsageError("--on-ray-loss is for --executor ray")
            return
        if not ray_installed():
            raise UsageError(
                "--executor ray needs Ray, which is not installed: "
                "pip install 'sim2human[ray]' (or pip install ray)"
            )


def ray_installed() -> bool:
    """Whether ``import ray`` would find it (without importing it: that takes seconds)."""
    return importlib.util.find_spec("ray") is not None


def served_for(
    choice: Choice, settings: LLMSettings, needed: set[str]
) -> AbstractContextManager[LLMSettings]:
    """The endpoint settings the workers are handed. ``local``: an embedded model the work
    needs started here, once, its 127.0.0.1 address handed to every worker. ``ray``: the
    entries as written; each node's workers share that node's one server, started by the
    first of them to need it (``ray_embedded``), so workers on other nodes reach one too."""
    if choice.kind == "ray":
        return nullcontext(settings)
    return serve_embedded(settings, needed)


@contextmanager
def open_executor(
    choice: Choice, workers: int | None, n_units: int, env: dict[str, str], note: Note
) -> Iterator[tuple[Executor, int]]:
    """The executor and how many units it runs at once (at most ``n_units``): ``local``
    defaults to every core, ``ray`` to the cluster's CPUs."""
    choice.check()
    if choice.kind == "local":
        n = max(1, min(workers or os.cpu_count() or 1, n_units))
        yield LocalExecutor(n), n
        return
    from sim2human.experiments.executors.ray_executor import connect

    fallback = choice.on_ray_loss == "local"
    with connect(choice.address, workers, n_units, env, note, fallback) as ray_executor:
        yield ray_executor, ray_executor.workers
