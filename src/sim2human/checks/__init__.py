"""Contract checks for the seams a user implements: Gymnasium's ``check_env``, for ours.

``check_scenario``, ``check_simulator``, ``check_agent`` and ``check_sampler`` exercise one
object through its protocol and return a ``CheckReport``: every check that ran, passed or not,
with what was wrong. They check what the rest of sim2human relies on and a type checker cannot
see: shapes and types of what comes back, determinism (the same seed gives the same call), that
nothing the caller owns is mutated, that a scenario hears what its own users say, that a
simulator's judge never reads the gold outcome, and that calls end. ``sim2human check
MODULE:NAME`` runs them on a user's own object; the contract test runs them over everything
registered here.

One module per protocol: ``scenario``, ``simulator``, ``agent``, ``sampler``; ``report`` the
report they fill, ``crossing`` everything registered crossed with a scenario.
"""

from __future__ import annotations

from typing import Any

from sim2human.checks.agent import InOrderAgent, check_agent
from sim2human.checks.report import CheckReport, Finding
from sim2human.checks.sampler import check_sampler
from sim2human.checks.scenario import check_scenario
from sim2human.checks.simulator import check_simulator

__all__ = [
    "CheckReport",
    "Finding",
    "InOrderAgent",
    "check_agent",
    "check_sampler",
    "check_scenario",
    "check_simulator",
    "describe",
]


def describe(obj: Any) -> str:
    """Which seam ``obj`` looks like: scenario, simulator, agent, or '' for none."""
    if all(hasattr(obj, a) for a in ("sample_profile", "grade")):
        return "scenario"
    if all(hasattr(obj, a) for a in ("start", "reply", "satisfaction")):
        return "simulator"
    if hasattr(obj, "act"):
        return "agent"
    if all(hasattr(obj, a) for a in ("next", "update")):
        return "sampler"
    return ""
