"""``scripted``: a sensible rule baseline, and the proof that the scenario is solvable.

Greets, asks each missing field in plain words, clarifies on confusion, re-prompts after silence,
reads the record back once, and closes when everything is filled (or asking again is hopeless).

It knows no scenario's act ids: its plan (``Plan``) picks acts from the inventory by kind and
field, so it plays any slot-filling scenario. A scenario whose acts it cannot read that way names
them itself (a ``reference_plan`` member: role -> act id), and a scenario of another shape
supplies its own reference agent (``reference_agent()``, see ``reference_agent`` below).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from sim2human.agents.base import Agent, AgentTurn, Observation
from sim2human.errors import UsageError
from sim2human.scenarios.capabilities import Lacks, say_act, slot_kit
from sim2human.scenarios.core import Act, View
from sim2human.scenarios.slots import SlotScenario, conditional

MAX_ASKS = 3
ROLES = ("greet", "clarify", "repeat", "prompt", "confirm", "close")
"""What the plan says besides asks: a greeting, a clarification after confusion, a repeat of the
last question after silence, a prompt after silence with no question pending, the read-back and
the close."""


@dataclass(frozen=True)
class Plan:
    """The acts the scripted agent says: by role, and the plain ask of each field."""

    ask: Mapping[str, Act]
    greet: Act | None
    clarify: Act | None
    repeat: Act | None
    prompt: Act | None
    confirm: Act | None
    close: Act

    @classmethod
    def of(cls, scenario: SlotScenario) -> Plan:
        """The plan read off the acts: for each role the first act of its kind (plain style
        first), the repeat the last clarification; ``reference_plan`` overrides by id."""
        acts = scenario.acts
        by_role = {
            "greet": _first(acts, "greet"),
            "clarify": _first(acts, "clarify"),
            "repeat": _last(acts, "clarify"),
            "prompt": _first(acts, "prompt"),
            "confirm": _first(acts, "confirm"),
            "close": _first(acts, "close"),
        }
        if isinstance(scenario, NamesItsPlan):
            by_role.update(_named(scenario, scenario.reference_plan))
        close = by_role.pop("close")
        if close is None:
            raise UsageError(f"scenario {scenario.name!r}: no act closes the call")
        asks = {a.field: a for a in reversed(acts) if a.kind == "ask" and a.field is not None}
        plain = {
            a.field: a
            for a in reversed(acts)
            if a.kind == "ask" and a.field is not None and a.style == "plain"
        }
        return cls(ask={**asks, **plain}, close=close, **by_role)


@runtime_checkable
class NamesItsPlan(Protocol):
    """A scenario that names the scripted agent's acts itself (role -> act id, any of
    ``ROLES``; the roles it leaves out are read off its acts by kind)."""

    @property
    def reference_plan(self) -> Mapping[str, str]: ...


@runtime_checkable
class HasReferenceAgent(Protocol):
    """A scenario that supplies its own reference agent (one of another shape than slot filling)."""

    def reference_agent(self) -> Agent: ...


@runtime_checkable
class ChoosesReferenceActs(Protocol):
    """A scenario that supplies its reference agent as a rule over its own acts: the act id to
    say next, from the agent's view (a negotiation's: ask, propose the fair split, accept a
    fair counter). The rule lives with the scenario; ``RuleAgent`` says it."""

    @property
    def acts(self) -> tuple[Act, ...]: ...

    def reference_act(self, view: View, turn: int, max_turns: int) -> str: ...


def reference_agent(scenario: object) -> Agent:
    """The scenario's reference agent: its own if it supplies one, its rule's if it supplies
    a rule, else the scripted agent (slot filling); a scenario of another shape with neither
    is refused in one line."""
    if isinstance(scenario, HasReferenceAgent):
        return scenario.reference_agent()
    if isinstance(scenario, ChoosesReferenceActs):
        return RuleAgent(scenario)
    if (kit := slot_kit(scenario)) is not None:
        return ScriptedAgent(kit)
    raise Lacks(
        scenario,
        "reference agent",
        "give it reference_act(view, turn, max_turns) -> act id, or reference_agent() "
        "(sim2human.agents.scripted.ChoosesReferenceActs, HasReferenceAgent)",
    )


class RuleAgent:
    """Says the acts a scenario's reference rule chooses (``ChoosesReferenceActs``)."""

    name = "scripted"

    def __init__(self, scenario: ChoosesReferenceActs) -> None:
        self.scenario = scenario
        self.by_id = {a.id: a for a in scenario.acts}

    def act(self, observations: Sequence[Observation]) -> list[AgentTurn]:
        return [self._one(o) for o in observations]

    def _one(self, obs: Observation) -> AgentTurn:
        act = self.by_id[self.scenario.reference_act(obs.view, obs.turn, obs.max_turns)]
        text = say_act(self.scenario, act, obs.view)
        return AgentTurn(text=text, act=act.id, field=act.field)


class ScriptedAgent:
    name = "scripted"

    def __init__(self, scenario: SlotScenario) -> None:
        self.scenario = scenario
        self.plan = Plan.of(scenario)
        self._applies = conditional(scenario)

    def act(self, observations: Sequence[Observation]) -> list[AgentTurn]:
        return [self._one(o) for o in observations]

    def _one(self, obs: Observation) -> AgentTurn:
        plan = self.plan
        if obs.turn == 0 and plan.greet is not None:
            return self._say(plan.greet, obs)
        if obs.signals.confused and (act := plan.clarify or self._again(obs)) is not None:
            return self._say(act, obs)
        if obs.signals.silent:
            act = plan.repeat if obs.last_field else plan.prompt
            if (act := act or self._again(obs) or plan.prompt) is not None:
                return self._say(act, obs)
        asked = dict(obs.asked)
        fields = (
            self.scenario.fields if self._applies is None else self._applies.applicable(obs.record)
        )
        missing = [
            f
            for f in fields  # those that apply given what is recorded (the domain first)
            if obs.record[f] is None and asked.get(f, 0) < MAX_ASKS and f in plan.ask
        ]
        if missing and obs.turn < obs.max_turns - 2:
            return self._say(plan.ask[missing[0]], obs)
        confirm = plan.confirm
        if confirm is not None and confirm.id not in obs.history and obs.turn < obs.max_turns - 1:
            return self._say(confirm, obs)
        return self._say(plan.close, obs)

    def _again(self, obs: Observation) -> Act | None:
        """The last question asked again (a scenario with no clarify or prompt act)."""
        return self.plan.ask.get(obs.last_field) if obs.last_field is not None else None

    def _say(self, act: Act, obs: Observation) -> AgentTurn:
        text = self.scenario.render_act(act, obs.last_field, obs.record)
        return AgentTurn(
            text=text,
            act=act.id,
            field=act.about(obs.last_field),
        )


def _first(acts: Sequence[Act], kind: str) -> Act | None:
    """The first act of ``kind`` in plain style, else the first of any style."""
    of_kind = [a for a in acts if a.kind == kind]
    return next((a for a in of_kind if a.style == "plain"), of_kind[0] if of_kind else None)


def _last(acts: Sequence[Act], kind: str) -> Act | None:
    of_kind = [a for a in acts if a.kind == kind]
    return of_kind[-1] if of_kind else None


def _named(scenario: SlotScenario, plan: Mapping[str, str]) -> dict[str, Act | None]:
    by_id = {a.id: a for a in scenario.acts}
    out: dict[str, Act | None] = {}
    for role, act_id in plan.items():
        if role not in ROLES:
            known = ", ".join(ROLES)
            raise UsageError(
                f"scenario {scenario.name!r}: reference_plan role {role!r} (known: {known})"
            )
        if act_id not in by_id:
            raise UsageError(
                f"scenario {scenario.name!r}: reference_plan {role}: no act {act_id!r}"
            )
        out[role] = by_id[act_id]
    return out
