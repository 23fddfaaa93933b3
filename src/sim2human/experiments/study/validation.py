"""A condition's ``select`` (``config.SelectOn``) at work: validation members choose the checkpoint.

Why: agents trained alike on the same ensemble transfer very differently by seed (issue 37:
real-people gold 19 to 66 for one condition over ten seeds), and a team trains one seed. This
plays, at each of a sub-run's probe points, *validation* members (a training family's fresh
members, or real visits of a split no held-out family replays, such as ``aci-train``), keeps the
point with the best gold, and records that gold: held-out families and held-out visits never
steer it. Measured (docs/results/real-patients.md, ten seeds): choosing the point does not
steady the seeds (a run that never learns what real callers need has no good point), but the
recorded validation gold predicts the sub-run's real-people gold (r = 0.96 over 30 sub-runs),
so it tells a team whether the seed it has is one to deploy.

The validation members are drawn as a ``mix``'s are (``family.sample``), from their own seed
stream, so they are not the training members of the same family; each is played
``per_member`` times at every probe point (``train.eval_every`` updates and the last), with the
episode seeds every evaluation uses, and the best point's weights are the sub-run's agent
(``summary.json``'s ``selected_update`` and ``validation_gold``; ties go to the later point).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import numpy as np

from sim2human.agents.policy import PolicyAgent
from sim2human.rollout.evaluate import evaluate
from sim2human.scenarios.core import AnyScenario
from sim2human.simulators.base import SimulatorSpec


class CheckpointSelection:
    """Plays the validation members at each probe point and keeps the best point's weights."""

    def __init__(
        self,
        agent: PolicyAgent,
        members: Sequence[SimulatorSpec],
        scenario: AnyScenario,
        *,
        per_member: int,
        max_turns: int,
        seed: int,
        condition: str = "",
    ) -> None:
        self.agent = agent
        self.player = PolicyAgent(scenario, net=agent.net, seed=seed)  # shares the weights only
        self.members = tuple(members)
        self.scenario = scenario
        self.per_member = per_member
        self.max_turns = max_turns
        self.condition = condition
        self.best_gold = -1.0
        self.best_update: int | None = None
        self._best_state: dict[str, Any] | None = None

    def at(self, update: int) -> dict[str, Any]:
        """Validation gold now (a metrics row's ``validation_gold`` and ``validation_n``); the
        weights are kept when it is the best so far."""
        episodes = evaluate(
            self.player,
            self.members,
            self.scenario,
            split="validation",
            per_member=self.per_member,
            condition=self.condition,
            max_turns=self.max_turns,
        )
        gold = float(np.mean([e.gold.success for e in episodes]))
        if gold >= self.best_gold:
            self.best_gold, self.best_update = gold, update
            self._best_state = copy.deepcopy(self.agent.net.state_dict())
        return {"validation_gold": gold, "validation_n": len(episodes)}

    def restore(self) -> int | None:
        """Put the best point's weights into the agent; the update they are from (None when
        no point was played)."""
        if self._best_state is not None:
            self.agent.net.load_state_dict(self._best_state)
        return self.best_update
