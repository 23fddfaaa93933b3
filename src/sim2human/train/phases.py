"""Where a sub-run's wall time goes, by phase: what ``benchmarks/bench_demo.py`` reads.

A sub-run's ``summary.json`` says how long it took (``wall_seconds``); to take time out of a
study one must know *which part* is slow: playing the conversations (the simulators and the
scenario's readers), the policy's inference, PPO's updates, the held-out probe, the final
evaluation on training members, held-out families and real people. ``Phases`` adds up seconds by
phase name as the sub-run goes; the sub-run stores them as ``phase_seconds``, and how much work
the training phases did as ``phase_work`` (turns played, the policy's decisions, PPO's minibatch
steps), so that a phase's seconds can be set against its floor: the same work at the rate of the
persona alone, or of the matrix products alone (``benchmarks/bench_demo.py --floors``). Timing never
changes what is played or trained (the clock is read, nothing else), so the episodes are the same
with it as without. Plain ``time.perf_counter``: a profiler would cost more than it measures here,
and the phases are the study's own, not its functions'.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

START = "start"
"""Before the first batch: the world, the sampler, the probe's set, the optimizer."""
PLAY = "play"
"""Conversation play during training: simulators, perturbations, the scenario's readers."""
POLICY = "policy"
"""The policy's inference during training: features, action draws, values."""
UPDATE = "update"
"""PPO's gradient steps."""
PROBE = "probe"
"""Logging each update: the held-out probe (``train.telemetry``), metrics and episode logs."""
WARM_START = "warm_start"
"""A language-model sub-run: waiting for its warm start, or making it, and loading it."""
GRPO = "grpo"
"""A language-model sub-run's GRPO steps, playing and updating (``metrics.jsonl`` splits each
step's seconds into its play and the rest)."""


class Phases:
    """Seconds by phase, added up; phases appear in the order first timed."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.work: dict[str, int] = {}

    def add(self, phase: str, seconds: float) -> None:
        self.seconds[phase] = self.seconds.get(phase, 0.0) + seconds

    def did(self, phase: str, units: int) -> None:
        """Count ``units`` of ``phase``'s work, in its own unit: ``PLAY`` in turns of training
        calls (both speakers'), ``POLICY`` in the agent turns it chose, ``UPDATE`` in minibatch
        steps."""
        self.work[phase] = self.work.get(phase, 0) + units

    @contextmanager
    def timing(self, phase: str) -> Iterator[None]:
        """Time the block as ``phase`` (exceptions included: the time was spent)."""
        began = time.perf_counter()
        try:
            yield
        finally:
            self.add(phase, time.perf_counter() - began)

    def rounded(self) -> dict[str, float]:
        """The phases, in seconds to the millisecond: what ``summary.json`` stores."""
        return {k: round(v, 3) for k, v in self.seconds.items()}
