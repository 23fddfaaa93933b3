"""Training telemetry beyond what the trainer computes: held-out gold during training.

Every ``every`` updates (and before the first one, at d = 0) the current policy plays a small
fixed set of held-out conversations (every held-out member, the first ``per_member`` evaluation
seeds), and the result is *logged* to ``metrics.jsonl`` next to the update's training stats, with
a checkpoint of the policy at that point. Nothing here feeds back into training: the trainer never
sees these numbers, and no early stopping reads them. They exist for the overoptimisation curve
(held-out gold against d = sqrt(KL(pi || pi_init))) and for the report's "where to stop".

The probe plays with its own agent (the trainer's weights, not its generator), drawing each
episode's acts from that episode's own stream (``rollout.play``), so that turning telemetry on or
off does not change what training does, and every evaluation point sees the same profiles and
the same draws.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from sim2human.agents.policy import PolicyAgent
from sim2human.rollout.evaluate import evaluate
from sim2human.scenarios.core import AnyScenario
from sim2human.simulators.base import SimulatorSpec
from sim2human.store.layout import probe_checkpoint
from sim2human.types import Episode


def batch_behaviour(episodes: Sequence[Episode]) -> dict[str, float]:
    """Act entropy (bits) and the top phrasing's share of the agent's turns in one batch."""
    counts = Counter(t.act or t.text for e in episodes for t in e.agent_turns)
    n = sum(counts.values())
    if not n:
        return {"act_entropy": 0.0, "top_act_share": 0.0}
    p = np.asarray(list(counts.values()), float) / n
    return {
        "act_entropy": float(-(p * np.log2(p)).sum()) + 0.0,
        "top_act_share": counts.most_common(1)[0][1] / n,
    }


class HeldoutProbe:
    """Evaluates a policy on a fixed held-out subset every ``every`` updates (0: never)."""

    def __init__(
        self,
        agent: PolicyAgent,
        heldout: Sequence[SimulatorSpec],
        scenario: AnyScenario,
        *,
        every: int,
        per_member: int,
        out: Path | None,
        seed: int,
        max_turns: int,
        condition: str = "",
        last_update: int | None = None,
    ) -> None:
        self.agent = PolicyAgent(scenario, net=agent.net, seed=seed)  # shares the weights only
        self.heldout = tuple(heldout)
        self.scenario = scenario
        self.every = every
        self.per_member = per_member
        self.out = out
        self.seed = seed
        self.condition = condition
        self.max_turns = max_turns
        self.last_update = last_update

    def due(self, update: int) -> bool:
        """Whether the held-out curve has a point at ``update`` (none when ``every`` is 0)."""
        return self.every > 0 and bool(self.heldout) and self.point(update)

    def point(self, update: int) -> bool:
        """Whether ``update`` is a probe point: every ``every`` updates, and the last."""
        if self.every <= 0:
            return update == self.last_update
        return update % self.every == self.every - 1 or update == self.last_update

    def evaluate(self, update: int, kl_init: float) -> dict[str, Any]:
        """Held-out proxy and gold now; saves a checkpoint named in the returned row."""
        episodes = evaluate(
            self.agent,
            self.heldout,
            self.scenario,
            split="heldout",
            per_member=self.per_member,
            condition=self.condition,
            max_turns=self.max_turns,
        )
        row: dict[str, Any] = {
            "d": math.sqrt(max(0.0, kl_init)),
            "heldout_proxy": float(np.mean([e.proxy for e in episodes])),
            "heldout_gold": float(np.mean([e.gold.success for e in episodes])),
            "heldout_field_accuracy": float(np.mean([e.gold.field_accuracy for e in episodes])),
            "heldout_n": len(episodes),
        }
        if self.out is not None:
            path = self.out / probe_checkpoint(update)
            path.parent.mkdir(parents=True, exist_ok=True)
            self.agent.save(path)
            row["checkpoint"] = probe_checkpoint(update)
        return row

    def initial(self) -> dict[str, Any] | None:
        """The d = 0 point (the untrained policy), as a metrics row of its own (update -1)."""
        if self.every <= 0 or not self.heldout:
            return None
        return {"update": -1, "episodes_seen": 0, "kl_init": 0.0, **self.evaluate(-1, 0.0)}

    def at(self, update: int, kl_init: float, episodes: Sequence[Episode]) -> dict[str, Any]:
        """Extra fields for one update's metrics row."""
        row: dict[str, Any] = {"d": math.sqrt(max(0.0, kl_init)), **batch_behaviour(episodes)}
        if self.due(update):
            row.update(self.evaluate(update, kl_init))
        return row
