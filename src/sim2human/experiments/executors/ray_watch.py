"""Whether the Ray cluster a study runs on is still there, asked in bounded time.

Ray reports a dead *actor* to whoever waits on it, but not a dead *node* to a driver waiting
for an actor to be placed: after ``kill -9`` of the raylet (the node manager; the out-of-memory
killer's victim as often as a worker) a unit's retry asked for a fresh actor that no node could
ever start, and ``study --executor ray`` waited with no message for as long as it was left (14
minutes in the reliability audit). Ray Tune meets the same hole by warning about pending
resources and failing trials on node loss; the driver here does the same in two ways:

- ``ClusterWatch``: every ``CHECK_S`` it counts the alive nodes (``ray.nodes()``, in a thread
  with a deadline: with the GCS gone that call can block too). No alive node, or no answer,
  for ``LOST_AFTER_S`` in a row: the cluster is lost, and the driver marks every unit it held
  (running or waiting) failed, which ends the study as a dead local worker does: the summary,
  the "failed ... --resume" lines and exit 1.
- ``START_DEADLINE_S``: a fresh actor that has not answered within it (no node with a free
  CPU, say, on a cluster that still has a node) is treated as a lost worker: its unit is run
  again or reported failed, never waited on for ever.

Both are settings (``SIM2HUMAN_RAY_LOST_AFTER_S``, ``SIM2HUMAN_RAY_START_S``) for a cluster
whose nodes come and go more slowly. ``bounded`` runs a Ray call that may never return (the
clean-up of a dead cluster) with a deadline.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

import ray

T = TypeVar("T")

CHECK_S = 2.0
"""How often the driver counts the cluster's alive nodes."""
CALL_S = 5.0
"""How long one question to the cluster (``ray.nodes()``, a progress count) may take."""


def _seconds(name: str, default: float) -> float:
    """A positive number of seconds from the environment, else ``default``."""
    try:
        value = float(os.environ.get(name, default))
    except ValueError:
        return default
    return value if value > 0 else default


LOST_AFTER_S = _seconds("SIM2HUMAN_RAY_LOST_AFTER_S", 15.0)
"""No alive node (or no answer) for this long: the cluster is lost. Ray itself marks a node
dead after about 15 s of missed health checks, so a shorter wait would not see it sooner."""
START_DEADLINE_S = _seconds("SIM2HUMAN_RAY_START_S", 300.0)
"""A fresh worker actor silent this long was never placed: its unit counts as a lost worker.
Generous: a first actor loads the study config and may start the node's embedded model."""


def bounded(call: Callable[[], T], seconds: float) -> tuple[bool, T | None]:
    """``call()`` in a daemon thread, waited on for ``seconds``: (True, its value) when it
    returned, (False, None) when it raised or is still running (left to finish on its own)."""
    box: list[T] = []

    def run() -> None:
        try:
            box.append(call())
        except Exception:  # a dead cluster raises what it raises; the caller only asks "ok?"
            return

    thread = threading.Thread(target=run, name="sim2human-ray-call", daemon=True)
    thread.start()
    thread.join(seconds)
    return (True, box[0]) if box else (False, None)


def alive_nodes() -> int | None:
    """How many of the cluster's nodes are alive, or None when the cluster did not answer."""
    ok, nodes = bounded(ray.nodes, CALL_S)
    if not ok or nodes is None:
        return None
    return sum(1 for n in nodes if n.get("Alive"))


@dataclass
class ClusterWatch:
    """Counts alive nodes now and then; says why the cluster is lost once it has been gone
    ``lost_after`` seconds in a row."""

    lost_after: float = LOST_AFTER_S
    count: Callable[[], int | None] = alive_nodes
    clock: Callable[[], float] = time.monotonic
    last_seen: float = field(default=0.0)
    next_check: float = field(default=0.0)
    last_count: int | None = field(default=None)

    def __post_init__(self) -> None:
        self.last_seen = self.next_check = self.clock()

    def lost(self) -> str | None:
        """None while the cluster has an alive node (or has not been gone long enough);
        else one line saying what is gone."""
        now = self.clock()
        if now < self.next_check:
            return None
        self.next_check = now + CHECK_S
        self.last_count = self.count()
        if self.last_count:
            self.last_seen = now
            return None
        if now - self.last_seen < self.lost_after:
            return None
        what = "has no alive node" if self.last_count == 0 else "does not answer"
        return f"the Ray cluster {what} ({now - self.last_seen:.0f} s)"
