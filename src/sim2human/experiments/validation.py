"""A condition's ``select`` (``mix.SelectOn``) at work: validation members choose the checkpoint.

Why: agents trained alike on the same ensemble can transfer very differently by seed (issue 37:
real-people gold 37 or 82 for the same condition), and a team trains one seed. Choosing, among a
sub-run's probe checkpoints, the one with the highest gold on *validation* members (a training
family's fresh members, or real visits of a split no held-out family replays, such as
``aci-train``) is the standard cure that never lets held-out families or held-out visits steer
training: the selection sees only what the condition is allowed to train on.

The validation members are drawn as a ``mix``'s are (``family.sample``), from their own seed
stream, so they are not the training members of the same family; each is played
``per_member`` times at every probe point (``train.eval_every`` updates and the last), with the
episode seeds every evaluation uses, and the best point's weights are the sub-run's agent
(``summary.json``'s ``selected_update``; ties go to the later point).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import numpy as np

from sim2human.agents.policy import PolicyAgent
from sim2human.rollout.evaluate import evaluate
from sim2human.scenarios.base import Scenario
from sim2human.simulators.base import SimulatorSpec


class CheckpointSelection:
    """Plays the validation members at each probe point and keeps the best point's weights."""

    def __init__(
        self,
        agent: PolicyAgent,
        members: Sequence[SimulatorSpec],
        scenario: Scenario,
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
