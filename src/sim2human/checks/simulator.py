"""The Simulator protocol's checks: replies and satisfaction of the right shape, the same call for
the same seed, a closing turn that ends it, and a judge that never reads the gold outcome."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from sim2human.checks.agent import InOrderAgent
from sim2human.checks.report import CheckReport, expect
from sim2human.rollout.conversation import Conversation, Job, job_profile
from sim2human.scenarios.capabilities import say_act
from sim2human.scenarios.core import AnyScenario, View
from sim2human.simulators.base import Simulator, SimulatorSpec, UserTurn


def check_simulator(
    make: Callable[[], Simulator], scenario: AnyScenario, *, turns: int = 8
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


def _script(scenario: AnyScenario, turns: int, seed: int) -> list[str]:
    """Agent lines a checker says: the scenario's acts in a seeded order, rendered."""
    acts = [a for a in scenario.acts if a.kind != "close"]
    rng = np.random.default_rng(seed)
    view = _first_view(scenario)
    picks = rng.integers(len(acts), size=turns)
    return [say_act(scenario, acts[int(k)], view) for k in picks]


def _first_view(scenario: AnyScenario) -> View:
    """The agent's view before anyone spoke (a profile of seed 0's)."""
    profile = scenario.sample_profile(np.random.default_rng(0))
    return scenario.observe(scenario.initial_state(profile))


def _talk(sim: Simulator, scenario: AnyScenario, turns: int, seed: int) -> list[UserTurn]:
    profile = job_profile(Job(spec=sim.spec, seed=seed), scenario)
    said = [sim.start(profile, np.random.default_rng(seed))]
    for line in _script(scenario, turns, seed):
        if said[-1].done:
            break
        said.append(sim.reply(line))
    return said


def _shape(sim: Simulator, scenario: AnyScenario, turns: int) -> str | None:
    for reply in _talk(sim, scenario, turns, 0):
        if not isinstance(reply, UserTurn) or not isinstance(reply.text, str):
            return f"a reply is {type(reply).__name__}, not a UserTurn with text"
        s = sim.satisfaction()
        if not isinstance(s, float | int) or math.isnan(s) or not 0.0 <= s <= 1.0:
            return f"satisfaction() returned {s!r}"
    return None


def _same_call(make: Callable[[], Simulator], scenario: AnyScenario, turns: int) -> str | None:
    for seed in range(3):
        a = [(t.text, t.done) for t in _talk(make(), scenario, turns, seed)]
        b = [(t.text, t.done) for t in _talk(make(), scenario, turns, seed)]
        if a != b:
            diff = next(i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y)
            return f"seed {seed}, turn {diff}: {a[diff][0]!r} then {b[diff][0]!r}"
    return None


def _closes(sim: Simulator, scenario: AnyScenario) -> str | None:
    close = next(a for a in scenario.acts if a.kind == "close")
    profile = job_profile(Job(spec=sim.spec, seed=0), scenario)
    sim.start(profile, np.random.default_rng(0))
    reply = sim.reply(say_act(scenario, close, _first_view(scenario)))
    return expect(reply.done, f"the reply to {close.text!r} is not done: {reply.text!r}")


def _blind_judge(make: Callable[[], Simulator], scenario: AnyScenario, turns: int) -> str | None:
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
