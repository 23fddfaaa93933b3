"""The featuriser: an ``Observation`` as a fixed-length vector for the policy network."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from sim2human.agents.base import Observation
from sim2human.scenarios.base import Scenario


class Featuriser:
    def __init__(self, scenario: Scenario) -> None:
        self.fields = scenario.fields
        self.act_ids = tuple(a.id for a in scenario.acts)
        self.act_index = {a: i for i, a in enumerate(self.act_ids)}
        nf, na = len(self.fields), len(self.act_ids)
        self.size = nf + nf + (nf + 1) + 4 + 1 + na + na

    def __call__(self, observations: Sequence[Observation]) -> np.ndarray:
        out = np.zeros((len(observations), self.size), dtype=np.float32)
        for row, obs in zip(out, observations, strict=True):
            self._fill(row, obs)
        return out

    def _fill(self, row: np.ndarray, obs: Observation) -> None:
        nf, na = len(self.fields), len(self.act_ids)
        asked = dict(obs.asked)
        i = 0
        for k, f in enumerate(self.fields):
            row[i + k] = obs.record[f] is not None
            row[i + nf + k] = min(asked.get(f, 0), 3) / 3
        i += 2 * nf
        last = self.fields.index(obs.last_field) + 1 if obs.last_field in self.fields else 0
        row[i + last] = 1
        i += nf + 1
        s = obs.signals
        row[i : i + 4] = (s.silent, s.confused, s.new_fields > 0, s.corrected)
        i += 4
        row[i] = obs.turn / obs.max_turns
        i += 1
        if obs.history and obs.history[-1] in self.act_index:
            row[i + self.act_index[obs.history[-1]]] = 1
        i += na
        for a in obs.history:
            if a in self.act_index:
                row[i + self.act_index[a]] = min(1.0, row[i + self.act_index[a]] + 0.5)
