"""The slot kit's protocol under the name most of the house still types scenarios with.

The core every scenario implements is ``scenarios.core.Scenario`` (state, ends, gold as a
score); ``scenarios.slots`` is the kit that implements it for slot filling, and ``Scenario``
here is the kit's protocol (``SlotScenario``), which the simulators and act-level agents are
typed on. A scenario of another shape is not a ``SlotScenario``: what those consumers need of
it beyond the core is read through ``scenarios.capabilities``, each capability with a default
or a one-line refusal (its users' moves, its act wording, its featuriser, its courtesy).
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
