"""``scripted``: a sensible rule baseline, and the proof that the scenario is solvable.

Greets, asks each missing field in plain words, clarifies on confusion, re-prompts after silence,
reads the record back once, and closes when everything is filled (or asking again is hopeless).
"""

from __future__ import annotations

from collections.abc import Sequence

from sim2human.agents.base import AgentTurn, Observation
from sim2human.scenarios.base import Act, Scenario

MAX_ASKS = 3


class ScriptedAgent:
    name = "scripted"

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        self.by_id = {a.id: a for a in scenario.acts}
        self.ask = {
            a.field: a for a in reversed(scenario.acts) if a.kind == "ask" and a.style == "plain"
        }

    def act(self, observations: Sequence[Observation]) -> list[AgentTurn]:
        return [self._one(o) for o in observations]

    def _one(self, obs: Observation) -> AgentTurn:
        asked = dict(obs.asked)
        if obs.turn == 0:
            return self._say("greet.plain", obs)
        if obs.signals.confused:
            return self._say("clarify.simple", obs)
        if obs.signals.silent:
            return (
                self._say("clarify.repeat", obs)
                if obs.last_field
                else self._say("prompt.silence", obs)
            )
        missing = [
            f for f in self.scenario.fields if obs.record[f] is None and asked.get(f, 0) < MAX_ASKS
        ]
        if missing and obs.turn < obs.max_turns - 2:
            return self._say(self.ask[missing[0]].id, obs)
        if "confirm.readback" not in obs.history and obs.turn < obs.max_turns - 1:
            return self._say("confirm.readback", obs)
        return self._say("close.plain", obs)

    def _say(self, act_id: str, obs: Observation) -> AgentTurn:
        act: Act = self.by_id[act_id]
        text = self.scenario.render_act(act, obs.last_field, obs.record)
        return AgentTurn(
            text=text,
            act=act.id,
            field=act.field or (obs.last_field if act.kind == "clarify" else None),
        )
