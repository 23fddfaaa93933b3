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

import copy
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, get_args

import numpy as np

from sim2human.agents.base import Agent, AgentTurn, Observation
from sim2human.rollout.conversation import Conversation, Job, job_profile
from sim2human.rollout.play import play
from sim2human.samplers.build import Sampler
from sim2human.samplers.feedback import BatchInfo, draw_level
from sim2human.scenarios.base import ActKind, AgentIntent, Scenario, UserSignals
from sim2human.scenarios.voice import Voice
from sim2human.simulators.base import Simulator, SimulatorSpec, UserTurn
from sim2human.simulators.llm_prompts import PROMPT_STYLES
from sim2human.types import Episode, Outcome, Termination

PROFILES = 8
"""Profiles (seeds) each check draws: enough to meet every field's values, small enough to run
in a second."""


@dataclass(frozen=True)
class Finding:
    check: str
    ok: bool
    detail: str = ""


@dataclass
class CheckReport:
    """What was checked on ``subject`` (``kind``: scenario, simulator or agent)."""

    subject: str
    kind: str
    findings: list[Finding] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(f.ok for f in self.findings)

    def violations(self) -> list[Finding]:
        return [f for f in self.findings if not f.ok]

    def run(self, check: str, fn: Callable[[], str | None]) -> None:
        """Record ``fn``: it returns what is wrong (or None), or raises (also a violation)."""
        try:
            problem = fn()
        except Exception as err:  # a check that crashes found a violation: say which
            problem = f"raised {type(err).__name__}: {err}"
        self.findings.append(Finding(check, problem is None, problem or ""))

    def lines(self) -> list[str]:
        head = f"{self.kind} {self.subject}: " + (
            "every check passed" if self.ok else f"{len(self.violations())} violation(s)"
        )
        return [head] + [
            f"  {'ok  ' if f.ok else 'FAIL'} {f.check}" + (f": {f.detail}" if f.detail else "")
            for f in self.findings
        ]


# ---------------------------------------------------------------------------------- scenario


def check_scenario(scenario: Scenario) -> CheckReport:
    """The Scenario protocol: fields, acts, profiles, records, reading, grading."""
    report = CheckReport(getattr(scenario, "name", type(scenario).__name__), "scenario")
    checks: list[tuple[str, Callable[[Scenario], str | None]]] = [
        ("name is a non-empty string", _name),
        ("fields are unique, non-empty strings", _fields),
        ("acts: unique ids, known kinds, asks name a field, one closes", _acts),
        ("sample_profile: every field, deterministic by seed", _profiles),
        ("empty_record: every field, all None", _empty),
        ("extract: a new record, input untouched", _extract),
        ("say then extract: the scenario hears its own users", _hears),
        ("interpret: rendered asks ask their field, closes close", _interpret),
        ("signals: a UserSignals", _signals),
        ("grade: the true record succeeds, an empty one fails", _grade),
        ("voice: user lines said, every llm prompt style written", _voice),
    ]
    for name, check in checks:
        report.run(name, partial(check, scenario))
    return report


def _expect(condition: object, problem: str) -> str | None:
    return None if condition else problem


def _name(s: Scenario) -> str | None:
    return _expect(isinstance(s.name, str) and s.name, f"name is {s.name!r}")


def _empty(s: Scenario) -> str | None:
    record = s.empty_record()
    return _expect(record == dict.fromkeys(s.fields), f"got {record!r}")


def _signals(s: Scenario) -> str | None:
    got = s.signals("...", s.empty_record(), s.empty_record())
    return _expect(isinstance(got, UserSignals), f"signals() returned {type(got).__name__}")


def _fields(s: Scenario) -> str | None:
    f = s.fields
    if not f or not all(isinstance(x, str) and x for x in f):
        return f"fields must be non-empty strings, got {f!r}"
    return _expect(len(set(f)) == len(f), f"repeated field names in {f!r}")


def _acts(s: Scenario) -> str | None:
    acts, kinds = s.acts, set(get_args(ActKind))
    ids = [a.id for a in acts]
    if not acts or len(set(ids)) != len(ids):
        return "acts must be non-empty with unique ids"
    if bad := [a.id for a in acts if a.kind not in kinds]:
        return f"unknown kinds on acts {bad} (known: {sorted(kinds)})"
    if bad := [a.id for a in acts if a.kind == "ask" and a.field not in s.fields]:
        return f"ask acts {bad} name no field of the scenario"
    return _expect(any(a.kind == "close" for a in acts), "no act closes the call")


def _profiles(s: Scenario) -> str | None:
    for seed in range(PROFILES):
        a = s.sample_profile(np.random.default_rng(seed))
        if set(a) != set(s.fields):
            return f"seed {seed}: profile keys {sorted(a)} are not the fields"
        if a != s.sample_profile(np.random.default_rng(seed)):
            return f"seed {seed}: two draws with the same seed differ"
    return None


def _extract(s: Scenario) -> str | None:
    record = s.empty_record()
    kept = copy.deepcopy(record)
    profile = s.sample_profile(np.random.default_rng(0))
    field0 = s.fields[0]
    out = s.extract(s.say(field0, profile[field0], 1.0, np.random.default_rng(0)), record, field0)
    if record != kept:
        return "extract() changed the record it was given"
    return _expect(set(out) == set(s.fields), f"extract() returned keys {sorted(out)}")


def _hears(s: Scenario) -> str | None:
    misses = []
    for seed in range(PROFILES):
        profile = s.sample_profile(np.random.default_rng(seed))
        for f in s.fields:
            text = s.say(f, profile[f], 0.0, np.random.default_rng(seed))
            heard = s.extract(text, s.empty_record(), f)[f]
            if heard != profile[f]:
                misses.append(f"{f}: said {text!r}, heard {heard!r}, meant {profile[f]!r}")
    return f"{len(misses)} misses, e.g. {misses[0]}" if misses else None


def _interpret(s: Scenario) -> str | None:
    record = s.empty_record()
    for act in s.acts:
        intent = s.interpret(s.render_act(act, None, record))
        if not isinstance(intent, AgentIntent):
            return f"interpret() of act {act.id!r} returned {type(intent).__name__}"
        if act.kind == "ask" and act.field not in intent.asks:
            return f"act {act.id!r} asks {act.field!r} but reads as asking {intent.asks}"
        if act.kind == "close" and not intent.close:
            return f"act {act.id!r} closes the call but does not read as a close"
    return None


def _grade(s: Scenario) -> str | None:
    profile = s.sample_profile(np.random.default_rng(0))
    right = s.grade(profile, dict(profile), Termination.COMPLETED)
    empty = s.grade(profile, s.empty_record(), Termination.COMPLETED)
    if not isinstance(right, Outcome) or not right.success:
        return f"the true record, call closed, does not succeed: {right!r}"
    return _expect(not empty.success, "an empty record succeeds")


def _voice(s: Scenario) -> str | None:
    v = s.voice
    if not isinstance(v, Voice):
        return f"voice is a {type(v).__name__}, not a scenarios.voice.Voice"
    if v.user.opening_field not in (None, *s.fields):
        return f"opening_field {v.user.opening_field!r} is not a field"
    said = {k: (x,) if isinstance(x, str) else x for k, x in vars(v.user).items() if x is not None}
    if empty := [k for k, lines in said.items() if not lines or not all(lines)]:
        return f"empty user lines: {empty}"
    missing = [p for p in PROMPT_STYLES if v.role_play and p not in v.role_play.prompts]
    return _expect(not missing, f"role_play has no prompt for styles {missing}")


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
        lambda: _expect(isinstance(spec, SimulatorSpec), f"spec is {type(spec).__name__}"),
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
    record = scenario.empty_record()
    picks = rng.integers(len(acts), size=turns)
    return [scenario.render_act(acts[int(k)], None, record) for k in picks]


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
    reply = sim.reply(scenario.render_act(close, None, scenario.empty_record()))
    return _expect(reply.done, f"the reply to {close.text!r} is not done: {reply.text!r}")


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
            text = self.scenario.render_act(act, obs.last_field, obs.record)
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
        }
    )
    flipped = episode.model_copy(update={"gold": wrong, "proxy": 1.0 - episode.proxy})
    a, b = make().judge(episode), make().judge(flipped)
    return _expect(a == b, f"judge() gave {a} and, with gold flipped, {b}")


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
        return _expect(len(played) == len(jobs), f"{len(jobs)} calls gave {len(played)} episodes")

    def texts() -> str | None:
        said = [t.text for e in played for t in e.turns if t.speaker == "agent"]
        return _expect(said and all(t.strip() for t in said), "an agent turn was empty")

    def ends() -> str | None:
        longest = max((sum(t.speaker == "agent" for t in e.turns) for e in played), default=0)
        return _expect(longest <= max_turns, f"a call ran {longest} agent turns (> {max_turns})")

    name = getattr(agent, "name", None)
    report.run(
        "name is a non-empty string", lambda: _expect(isinstance(name, str) and name, "no name")
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
        lambda: _expect(not drawn or loop(0) == drawn[0], "two runs with seed 0 drew differently"),
    )
    return report


def describe(obj: Any) -> str:
    """Which seam ``obj`` looks like: scenario, simulator, agent, or '' for none."""
    if all(hasattr(obj, a) for a in ("sample_profile", "extract", "grade")):
        return "scenario"
    if all(hasattr(obj, a) for a in ("start", "reply", "satisfaction")):
        return "simulator"
    if hasattr(obj, "act"):
        return "agent"
    if all(hasattr(obj, a) for a in ("next", "update")):
        return "sampler"
    return ""
