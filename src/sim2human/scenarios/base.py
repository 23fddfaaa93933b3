"""The Scenario seam as simulators and agents use it today: a slot-filling scenario.

The core every scenario implements is ``scenarios.core.Scenario`` (state, ends, gold as a
score); ``scenarios.slots`` is the kit that implements it for slot filling. The simulators and
the act-level agents still read slot members (``extract``, ``say``, ``interpret``, ``fields``),
so ``Scenario`` here names the kit's protocol. A scenario of another shape (negotiation) reaches
them through the core's optional members, each checked first: its users' moves
(``SuppliesMoves``, which the kit supplies too), its act wording (``RendersActs``, through
``say_act`` here), its featuriser (``FeaturisesViews``) and its reference rule
(``agents.scripted``).
"""

from __future__ import annotations

from collections.abc import Callable

from sim2human.scenarios.core import Act, ActKind, ActStyle, RendersActs, View
from sim2human.scenarios.slots import AgentIntent, SlotState, UserSignals, grade_record
from sim2human.scenarios.slots import SlotScenario as Scenario


def say_act(scenario: Scenario, act: Act, view: View) -> str:
    """The words of ``act`` in a call whose agent sees ``view``: the scenario's own ``render``
    where it has one (``scenarios.core.RendersActs``), else the slot kit's ``render_act``."""
    return act_wording(scenario)(act, view)


def act_wording(scenario: Scenario) -> Callable[[Act, View], str]:
    """``say_act`` for ``scenario``, its protocol check made once: an agent that says an act
    every turn keeps this (a runtime protocol ``isinstance`` per turn was ~5% of a rollout)."""
    if isinstance(scenario, RendersActs):
        return scenario.render

    def slot_kit(act: Act, view: View) -> str:
        if not isinstance(view, SlotState):
            raise TypeError(f"scenario {scenario.name!r} words no act for a {type(view).__name__}")
        return scenario.render_act(act, view.last_field, view.record)

    return slot_kit


__all__ = [
    "Act",
    "ActKind",
    "ActStyle",
    "AgentIntent",
    "Scenario",
    "UserSignals",
    "act_wording",
    "grade_record",
    "say_act",
]
