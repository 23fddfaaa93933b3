"""The featuriser: an ``Observation`` as a fixed-length vector for the policy network.

It describes the conversation's state (what the record holds, what was asked and how often, what
the user just signalled, how far the call has gone), never the agent's own act history: a policy
fed its own script learns an open-loop script ("ask each field once, then close") that breaks as
soon as a user garbles, evades or goes quiet. Act-independent, so it is the same for any scenario's
inventory.

A scenario of another shape describes its own view (``scenarios.core.FeaturisesViews``: a
negotiation's offer on the table, own brief, what the camper said), or its dataclass view is
described field by field (``scenarios.capabilities.ViewNumbers``); the featuriser adds the
turn share. A slot scenario whose fields apply only to some callers (``slots.AppliesFields``)
gets one more block: which fields apply given what is recorded, and "all filled" counts those.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from sim2human.agents.base import Observation
from sim2human.scenarios.capabilities import slot_kit, view_numbers
from sim2human.scenarios.core import FeaturisesViews, Scenario
from sim2human.scenarios.slots import conditional

TURN_FEATURES = 2
"""The turn share, and whether the call is two turns from its limit."""


class Featuriser:
    def __init__(self, scenario: Scenario[Any]) -> None:
        self.own: FeaturisesViews | None = view_numbers(scenario)
        if self.own is not None:
            self.size = self.own.view_size + TURN_FEATURES
            return
        kit = slot_kit(scenario)
        assert kit is not None  # view_numbers describes every scenario off the slot kit
        self.fields = kit.fields
        self.index = {f: i for i, f in enumerate(self.fields)}
        nf = len(self.fields)
        self.size = 3 * nf + (nf + 1) + 4 + 5
        self.applies = conditional(scenario)
        if self.applies is not None:  # which fields apply given the record: a mask at the end
            self.size += nf

    def __call__(self, observations: Sequence[Observation]) -> np.ndarray:
        out = np.zeros((len(observations), self.size), dtype=np.float32)
        for row, obs in zip(out, observations, strict=True):
            self._fill(row, obs)
        return out

    def _fill(self, row: np.ndarray, obs: Observation) -> None:
        if self.own is not None:
            self.own.featurise(obs.view, row)
            row[-TURN_FEATURES:] = (obs.turn / obs.max_turns, obs.turn >= obs.max_turns - 2)
            return
        nf = len(self.fields)
        filled = 0
        for k, f in enumerate(self.fields):
            if obs.record[f] is not None:
                row[k] = 1
                filled += 1
        needed = nf
        if self.applies is not None:
            wanted = self.applies.applicable(obs.record)
            row[[self.size - nf + self.index[f] for f in wanted]] = 1
            filled, needed = sum(obs.record[f] is not None for f in wanted), len(wanted)
        for f, n in obs.asked:
            if (j := self.index.get(f)) is not None:
                row[nf + j] = 1
                row[2 * nf + j] = n >= 2
        i = 3 * nf
        row[i + (self.index[obs.last_field] + 1 if obs.last_field in self.index else 0)] = 1
        i += nf + 1
        s = obs.signals
        row[i : i + 4] = (s.silent, s.confused, s.new_fields > 0, s.corrected)
        i += 4
        row[i : i + 5] = (
            obs.turn / obs.max_turns,
            obs.turn >= obs.max_turns - 2,
            obs.greeted,
            obs.read_back,
            filled == needed,
        )
