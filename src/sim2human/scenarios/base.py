"""The Scenario seam as simulators and agents use it today: a slot-filling scenario.

The core every scenario implements is ``scenarios.core.Scenario`` (state, ends, gold as a
score); ``scenarios.slots`` is the kit that implements it for slot filling. The simulators and
the act-level agents still read slot members (``extract``, ``say``, ``interpret``, ``fields``),
so ``Scenario`` here names the kit's protocol; once the scenario owns the user's moves and its
reference agent (issue #22, item 2), the pieces that need only the core take the core's.
"""

from __future__ import annotations

from sim2human.scenarios.core import Act, ActKind, ActStyle
from sim2human.scenarios.slots import AgentIntent, UserSignals, grade_record
from sim2human.scenarios.slots import SlotScenario as Scenario

__all__ = [
    "Act",
    "ActKind",
    "ActStyle",
    "AgentIntent",
    "Scenario",
    "UserSignals",
    "grade_record",
]
