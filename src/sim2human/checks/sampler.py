"""The Sampler protocol's checks: members are specs, draws are deterministic by seed, and it keeps
drawing while it learns from finished episodes."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from sim2human.checks.agent import InOrderAgent
from sim2human.checks.report import CheckReport, expect
from sim2human.rollout.conversation import Job
from sim2human.rollout.play import play
from sim2human.samplers.build import Sampler
from sim2human.samplers.feedback import BatchInfo, draw_level
from sim2human.scenarios.core import AnyScenario
from sim2human.simulators.base import SimulatorSpec


def check_sampler(
    make: Callable[[], Sampler], scenario: AnyScenario, *, max_turns: int, updates: int = 3
) -> CheckReport:
    """The Sampler protocol: members are specs, draws are deterministic by seed, and it keeps
    drawing while it learns from finished episodes (the trainer's loop, with a scripted agent)."""
    report = CheckReport(getattr(make(), "name", type(make()).__name__), "sampler")

    def loop(seed: int) -> list[tuple[str, int]]:
        sampler, rng, drawn = make(), np.random.default_rng(seed), []
        for update in range(updates):
            levels = [draw_level(sampler, rng) for _ in range(8)]
            if bad := [type(s).__name__ for s, _ in levels if not isinstance(s, SimulatorSpec)]:
                raise TypeError(f"drew {bad[0]}, not a SimulatorSpec")
            drawn += [(s.id, k) for s, k in levels]
            jobs = [Job(spec=s, seed=k, phase="train") for s, k in levels]
            played = play(InOrderAgent(scenario), jobs, scenario, max_turns=max_turns)
            info = BatchInfo(update, 8 * (update + 1), tuple(1.0 for _ in played))
            sampler.update(played, info)
        return drawn

    drawn: list[list[tuple[str, int]]] = []
    report.run("draws specs while it learns from episodes", lambda: drawn.append(loop(0)))
    report.run(
        "the same seed gives the same draws",
        lambda: expect(not drawn or loop(0) == drawn[0], "two runs with seed 0 drew differently"),
    )
    return report
