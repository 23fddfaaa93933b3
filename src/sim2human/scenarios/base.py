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

from sim2human.scenarios.capabilities import act_wording
from sim2human.scenarios.core import Act, ActKind, ActStyle, View
from sim2human.scenarios.slots import AgentIntent, UserSignals, grade_record
from sim2human.scenarios.slots import SlotScenario as Scenario


def say_act(scenario: object, act: Act, view: View) -> str:
    """The words of ``act`` in a call whose agent sees ``view`` (``capabilities.act_wording``)."""
    return act_wording(scenario)(act, view)


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
