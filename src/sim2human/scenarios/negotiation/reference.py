"""The negotiation's reference rule (``agents.scripted.reference_agent`` plays it): greet, ask
what matters to the camper, propose the split that gives the camper all of what it needs most
and keeps all of the agent's own high item (the third split 2-1 for the agent), and accept a
counter-offer that is fair to the agent (at least ``FAIR`` points); near the turn limit, any
counter above the walk-away."""

from __future__ import annotations

from sim2human.scenarios.negotiation import deal
from sim2human.scenarios.negotiation.deal import ISSUES, WALK_AWAY
from sim2human.scenarios.negotiation.state import DealState

FAIR = WALK_AWAY + 2
ASKS = 2


def choose(view: DealState, turn: int, max_turns: int) -> str:
    """The act id to say next."""
    if turn == 0:
        return "greet"
    most = view.stated[0]
    if most is None and view.asked < ASKS and view.last_user != "offer":
        return "ask-priorities"
    if view.offer is not None and view.proposer == "user":
        mine = deal.mine(view.offer, view.own_values)
        late = turn >= max_turns - 3
        if mine >= FAIR or (late and mine >= WALK_AWAY):
            return "accept"
    own_high = ISSUES[view.own.index("high")]
    give = most or _guess(view.own)
    keep = own_high if own_high != give else ISSUES[view.own.index("medium")]
    return f"give-{give}-keep-{keep}"


def _guess(own: tuple[str, ...]) -> str:
    """Without the camper's word: give what the agent itself needs least."""
    return ISSUES[own.index("low")]
