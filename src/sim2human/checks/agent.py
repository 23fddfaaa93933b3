"""The Agent protocol's checks (one turn per observation, text turns, calls that end), and the
scenario-free agent that drives the other checks."""

from __future__ import annotations

from collections.abc import Sequence

from sim2human.agents.base import Agent, AgentTurn, Observation
from sim2human.checks.report import CheckReport, expect
from sim2human.rollout.conversation import Job
from sim2human.rollout.play import play
from sim2human.scenarios.capabilities import say_act
from sim2human.scenarios.core import AnyScenario
from sim2human.simulators.base import SimulatorSpec
from sim2human.types import Episode


class InOrderAgent:
    """Says the scenario's acts in inventory order, one per turn, then closes: a scenario-free
    agent to drive the checks (the scripted agent knows intake's acts only)."""

    name = "in-order"

    def __init__(self, scenario: AnyScenario) -> None:
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


def check_agent(
    agent: Agent, scenario: AnyScenario, specs: Sequence[SimulatorSpec], *, max_turns: int
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
