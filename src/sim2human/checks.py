"""Contract checks for the seams a user plugs into (Gymnasium's ``check_env``, for our protocols).

``check_scenario``, ``check_simulator`` and ``check_agent`` each return a list of violations in
plain words (empty: the piece keeps its contract). ``tests/contract/`` runs them over every
registered scenario, family and built-in agent; ``sim2human check MODULE:Class`` runs them on a
user's own class. What they check: protocol shape, determinism for the same seeds, reply types,
satisfaction in [0, 1], and that every conversation ends within the turn limit.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from sim2human.agents.base import Agent, AgentTurn
from sim2human.agents.scripted import ScriptedAgent
from sim2human.rollout.conversation import Conversation, Job
from sim2human.scenarios.base import Scenario
from sim2human.simulators.base import Simulator, UserTurn
from sim2human.types import Outcome, Termination

SEEDS = (0, 1, 2)
MAX_TURNS = 20

SCENARIO_MEMBERS = (
    "name", "fields", "acts", "sample_profile", "empty_record", "extract", "signals",
    "interpret", "render_act", "say", "grade",
)  # fmt: skip
SIMULATOR_MEMBERS = ("spec", "start", "reply", "satisfaction", "judge")


def _missing(obj: object, members: tuple[str, ...]) -> list[str]:
    return [f"missing member {m!r}" for m in members if not hasattr(obj, m)]


def check_scenario(scenario: Scenario) -> list[str]:
    """Shape, deterministic profiles, a non-mutating extractor and a well-formed grade."""
    problems = _missing(scenario, SCENARIO_MEMBERS)
    if problems:
        return problems
    if not scenario.name:
        problems.append("name is empty")
    if not scenario.fields:
        problems.append("no fields")
    ids = [a.id for a in scenario.acts]
    if not ids:
        problems.append("no acts")
    if len(set(ids)) != len(ids):
        problems.append("act ids repeat")
    for seed in SEEDS:
        a = scenario.sample_profile(np.random.default_rng(seed))
        b = scenario.sample_profile(np.random.default_rng(seed))
        if a != b:
            problems.append(f"sample_profile is not deterministic for seed {seed}")
            break
    profile = scenario.sample_profile(np.random.default_rng(0))
    record = scenario.empty_record()
    before = copy.deepcopy(record)
    scenario.extract("hello", record, None)
    if record != before:
        problems.append("extract mutated the record it was given")
    outcome = scenario.grade(profile, record, Termination.HUNG_UP)
    if not isinstance(outcome, Outcome):
        problems.append(f"grade returned {type(outcome).__name__}, not Outcome")
    elif outcome.success:
        problems.append("grade counts a dropped call with an empty record as a success")
    return problems


def _play(simulator: Simulator, scenario: Scenario, agent: Agent, seed: int) -> Conversation:
    job = Job(simulator.spec, seed, "train", "check", "check")
    profile = scenario.sample_profile(np.random.default_rng([seed, 0]))
    conv = Conversation(
        job, scenario, simulator, profile, MAX_TURNS, record=scenario.empty_record()
    )
    first = simulator.start(profile, np.random.default_rng([seed, 1]))
    if not isinstance(first, UserTurn):
        raise _Violation(f"start returned {type(first).__name__}, not UserTurn")
    conv._hear(first.text, first.tags)
    while not conv.done:
        turns = agent.act([conv.observe()])
        if len(turns) != 1 or not isinstance(turns[0], AgentTurn):
            raise _Violation("the agent did not return one AgentTurn per observation")
        conv.step(turns[0])
        if not 0.0 <= simulator.satisfaction() <= 1.0:
            raise _Violation(f"satisfaction {simulator.satisfaction()} is outside [0, 1]")
        if len(conv.turns) > 2 * MAX_TURNS + 2:
            raise _Violation(f"the conversation did not end within {MAX_TURNS} agent turns")
    return conv


@dataclass
class _Violation(Exception):
    message: str


def check_simulator(make: Callable[[], Simulator], scenario: Scenario) -> list[str]:
    """``make`` builds a fresh simulator. Two fresh ones, played the same seeds against the
    scripted agent, must say the same things; replies are ``UserTurn``s, satisfaction and
    ``judge`` stay in [0, 1], and every call ends within the turn limit."""
    problems = _missing(make(), SIMULATOR_MEMBERS)
    if problems:
        return problems
    agent = ScriptedAgent(scenario)
    try:
        for seed in SEEDS:
            a = _play(make(), scenario, agent, seed)
            b = _play(make(), scenario, agent, seed)
            if a.turns != b.turns:
                problems.append(f"two fresh simulators said different things on seed {seed}")
            episode = a.episode()
            score = a.simulator.judge(episode) if hasattr(a.simulator, "judge") else 0.0
            if not 0.0 <= score <= 1.0:
                problems.append(f"judge gave {score}, outside [0, 1]")
    except _Violation as v:
        problems.append(v.message)
    return problems


def check_agent(agent: Agent, scenario: Scenario, simulator: Callable[[], Simulator]) -> list[str]:
    """One ``AgentTurn`` per observation, text turns, and calls that end within the limit."""
    if not hasattr(agent, "act") or not hasattr(agent, "name"):
        return ["missing member 'act' or 'name'"]
    problems: list[str] = []
    try:
        for seed in SEEDS:
            conv = _play(simulator(), scenario, agent, seed)
            if any(not isinstance(t.text, str) for t in conv.turns):
                problems.append("a turn's text is not a string")
    except _Violation as v:
        problems.append(v.message)
    return problems


def describe(obj: Any) -> str:
    """Which contract ``obj`` (a class) claims: 'scenario', 'simulator' or 'agent'."""
    if all(hasattr(obj, m) for m in ("sample_profile", "grade", "extract")):
        return "scenario"
    if all(hasattr(obj, m) for m in ("start", "reply", "satisfaction")):
        return "simulator"
    if hasattr(obj, "act"):
        return "agent"
    return "unknown"
