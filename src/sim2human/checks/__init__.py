"""Contract checks for the seams a user implements: Gymnasium's ``check_env``, for ours.

``check_scenario``, ``check_simulator``, ``check_agent`` and ``check_sampler`` exercise one
object through its protocol and return a ``CheckReport``: every check that ran, passed or not,
with what was wrong. They check what the rest of sim2human relies on and a type checker cannot
see: shapes and types of what comes back, determinism (the same seed gives the same call), that
nothing the caller owns is mutated, that a scenario hears what its own users say, that a
simulator's judge never reads the gold outcome, and that calls end. ``sim2human check
MODULE:NAME`` runs them on a user's own object; the contract test runs them over everything
registered here.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from sim2human.agents.base import Agent, AgentTurn, Observation
from sim2human.checks.report import CheckReport, Finding, expect
from sim2human.checks.scenario import check_scenario
from sim2human.rollout.conversation import Conversation, Job, job_profile
from sim2human.rollout.play import play
from sim2human.samplers.build import Sampler
from sim2human.samplers.feedback import BatchInfo, draw_level
from sim2human.scenarios.base import Scenario, say_act
from sim2human.scenarios.core import View
from sim2human.simulators.base import Simulator, SimulatorSpec, UserTurn
from sim2human.types import Episode

__all__ = ["CheckReport", "Finding", "check_scenario"]


# --------------------------------------------------------------------------------- simulator


def check_simulator(
    make: Callable[[], Simulator], scenario: Scenario, *, turns: int = 8
) -> CheckReport:
    """The Simulator protocol, on fresh instances from ``make`` talking to ``scenario``'s acts."""
    first = make()
    report = CheckReport(getattr(first.spec, "id", type(first).__name__), "simulator")
    spec = first.spec
    report.run(
        "spec is a SimulatorSpec",
        lambda: expect(isinstance(spec, SimulatorSpec), f"spec is {type(spec).__name__}"),
    )
    report.run(
        "replies are UserTurns; satisfaction a number in [0, 1] after each",
        lambda: _shape(make(), scenario, turns),
    )
    report.run(
        "the same seed and agent turns give the same call",
        lambda: _same_call(make, scenario, turns),
    )
    report.run("a closing agent turn ends the call", lambda: _closes(make(), scenario))
    report.run("judge never reads the gold outcome", lambda: _blind_judge(make, scenario, turns))
    return report


def _script(scenario: Scenario, turns: int, seed: int) -> list[str]:
    """Agent lines a checker says: the scenario's acts in a seeded order, rendered."""
    acts = [a for a in scenario.acts if a.kind != "close"]
    rng = np.random.default_rng(seed)
    view = _first_view(scenario)
    picks = rng.integers(len(acts), size=turns)
    return [say_act(scenario, acts[int(k)], view) for k in picks]


def _first_view(scenario: Scenario) -> View:
    """The agent's view before anyone spoke (a profile of seed 0's)."""
    profile = scenario.sample_profile(np.random.default_rng(0))
    return scenario.observe(scenario.initial_state(profile))


def _talk(sim: Simulator, scenario: Scenario, turns: int, seed: int) -> list[UserTurn]:
    profile = job_profile(Job(spec=sim.spec, seed=seed), scenario)
    said = [sim.start(profile, np.random.default_rng(seed))]
    for line in _script(scenario, turns, seed):
        if said[-1].done:
            break
        said.append(sim.reply(line))
    return said


def _shape(sim: Simulator, scenario: Scenario, turns: int) -> str | None:
    for reply in _talk(sim, scenario, turns, 0):
        if not isinstance(reply, UserTurn) or not isinstance(reply.text, str):
            return f"a reply is {type(reply).__name__}, not a UserTurn with text"
        s = sim.satisfaction()
        if not isinstance(s, float | int) or math.isnan(s) or not 0.0 <= s <= 1.0:
            return f"satisfaction() returned {s!r}"
    return None


def _same_call(make: Callable[[], Simulator], scenario: Scenario, turns: int) -> str | None:
    for seed in range(3):
        a = [(t.text, t.done) for t in _talk(make(), scenario, turns, seed)]
        b = [(t.text, t.done) for t in _talk(make(), scenario, turns, seed)]
        if a != b:
            diff = next(i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y)
            return f"seed {seed}, turn {diff}: {a[diff][0]!r} then {b[diff][0]!r}"
    return None


def _closes(sim: Simulator, scenario: Scenario) -> str | None:
    close = next(a for a in scenario.acts if a.kind == "close")
    profile = job_profile(Job(spec=sim.spec, seed=0), scenario)
    sim.start(profile, np.random.default_rng(0))
    reply = sim.reply(say_act(scenario, close, _first_view(scenario)))
    return expect(reply.done, f"the reply to {close.text!r} is not done: {reply.text!r}")


class InOrderAgent:
    """Says the scenario's acts in inventory order, one per turn, then closes: a scenario-free
    agent to drive the checks (the scripted agent knows intake's acts only)."""

    name = "in-order"

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        acts = scenario.acts
        self.script = [a for a in acts if a.kind != "close"] + [
            a for a in acts if a.kind == "close"
        ]

    def act(self, observations: Sequence[Observation]) -> list[AgentTurn]:
        out = []
        for obs in observations:
            act = self.script[min(len(obs.history), len(self.script) - 1)]
            text = say_act(self.scenario, act, obs.view)
            out.append(AgentTurn(text=text, act=act.id, field=act.field))
        return out


def _blind_judge(make: Callable[[], Simulator], scenario: Scenario, turns: int) -> str | None:
    sim = make()
    agent = InOrderAgent(scenario)
    conv = Conversation.open(Job(spec=sim.spec, seed=0), scenario, turns + 4, simulator=sim)
    while not conv.done:
        conv.step(agent.act([conv.observe()])[0])
    episode = conv.episode()
    gold = episode.gold
    wrong = gold.model_copy(
        update={
            "success": not gold.success,
            "fields": {f: not v for f, v in gold.fields.items()},
            "completed": not gold.completed,
            "score": 1.0 - gold.score,
            "detail": {k: 1.0 - v for k, v in gold.detail.items()},
        }
    )
    flipped = episode.model_copy(update={"gold": wrong, "proxy": 1.0 - episode.proxy})
    a, b = make().judge(episode), make().judge(flipped)
    return expect(a == b, f"judge() gave {a} and, with gold flipped, {b}")


# ------------------------------------------------------------------------------------- agent


def check_agent(
    agent: Agent, scenario: Scenario, specs: Sequence[SimulatorSpec], *, max_turns: int
) -> CheckReport:
    """The Agent protocol: one turn per observation, text turns, calls that end."""
    report = CheckReport(getattr(agent, "name", type(agent).__name__), "agent")
    played: list[Episode] = []

    def plays() -> str | None:
        jobs = [Job(spec=s, seed=k) for s in specs for k in range(2)]
        played.extend(play(agent, jobs, scenario, max_turns=max_turns))
        return expect(len(played) == len(jobs), f"{len(jobs)} calls gave {len(played)} episodes")

    def texts() -> str | None:
        said = [t.text for e in played for t in e.turns if t.speaker == "agent"]
        return expect(said and all(t.strip() for t in said), "an agent turn was empty")

    def ends() -> str | None:
        longest = max((sum(t.speaker == "agent" for t in e.turns) for e in played), default=0)
        return expect(longest <= max_turns, f"a call ran {longest} agent turns (> {max_turns})")

    name = getattr(agent, "name", None)
    report.run(
        "name is a non-empty string", lambda: expect(isinstance(name, str) and name, "no name")
    )
    report.run("plays whole calls against the given simulators", plays)
    report.run("every agent turn is non-empty text", texts)
    report.run("calls end within max_turns", ends)
    return report


# ----------------------------------------------------------------------------------- sampler


def check_sampler(
    make: Callable[[], Sampler], scenario: Scenario, *, max_turns: int, updates: int = 3
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
