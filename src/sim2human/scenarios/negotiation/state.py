"""The negotiation's dialogue state: what the agent knows of the call (also its view)."""

from __future__ import annotations

from dataclasses import dataclass

from sim2human.scenarios.negotiation import deal
from sim2human.scenarios.negotiation.deal import ISSUES, Split


@dataclass(frozen=True, slots=True)
class DealState:
    """A negotiation so far, as the agent knows it (so it is also the agent's view)."""

    own: tuple[str, str, str]
    """The agent's own priority level of food, water and firewood."""
    brief: str
    offer: Split | None = None
    """The split on the table: the agent's packages of each issue."""
    proposer: str | None = None
    accepted: tuple[str, ...] = ()
    """Who accepted the split on the table ("agent", "user"); its proposer has."""
    walked: str | None = None
    closed: bool = False
    asked: int = 0
    """How often the agent asked what matters to the camper."""
    stated: tuple[str | None, str | None] = (None, None)
    """What the camper said it needs most and least."""
    last_user: str = ""
    """What the camper's last turn was (``features.MOVES``), or "" for anything else."""
    proposals: int = 0

    @property
    def agreed(self) -> bool:
        return self.offer is not None and set(self.accepted) == {"agent", "user"}

    @property
    def own_values(self) -> dict[str, int]:
        return deal.values(dict(zip(ISSUES, self.own, strict=True)))
