"""A negotiation's view as numbers for the policy network (``core.FeaturisesViews``): the split
on the table and its worth to the agent, who proposed it, the agent's own priorities, what the
camper said of its own, whether the agent asked, what the camper's last turn was, and how many
splits the agent has proposed."""

from __future__ import annotations

import numpy as np

from sim2human.scenarios.negotiation import deal
from sim2human.scenarios.negotiation.deal import ISSUES, LEVELS, PACKAGES
from sim2human.scenarios.negotiation.state import DealState

MOVES = ("offer", "accept", "reject", "priorities", "evasive", "flexible", "silent")
MAX_POINTS = 5 * PACKAGES * len(ISSUES)
SIZE = 6 + 1 + 9 + 6 + 1 + len(MOVES) + 1


def fill(view: DealState, row: np.ndarray) -> None:
    """Write the view's numbers into ``row`` (its first ``view_size`` entries)."""
    if view.offer is not None:
        row[0:3] = [n / PACKAGES for n in view.offer]
        row[3] = view.proposer == "agent"
        row[4] = view.proposer == "user"
        row[5] = deal.mine(view.offer, view.own_values) / MAX_POINTS
    i = 6
    row[i] = view.asked > 0
    i += 1
    for k, level in enumerate(view.own):
        row[i + 3 * k + LEVELS.index(level)] = 1
    i += 9
    most, least = view.stated
    if most is not None:
        row[i + ISSUES.index(most)] = 1
    if least is not None:
        row[i + 3 + ISSUES.index(least)] = 1
    i += 6
    row[i] = min(1.0, view.proposals / 5)
    i += 1
    if view.last_user in MOVES:
        row[i + MOVES.index(view.last_user)] = 1
    i += len(MOVES)
    row[i] = view.walked is not None
