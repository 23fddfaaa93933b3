"""A sealed-bid sale, written outside sim2human as a user would (``sealed_bid:SealedBidSale``).

Neither slot filling nor negotiation: the agent sells a lamp to one bidder: it may announce a
reserve, asks for one sealed bid, then sells at the bid or declines. The bidder's value is
hidden; it bids a share of it by temperament. Gold (``score``): the price as a share of that
value. The core, the users' moves, a card and a reference rule; the rest is the defaults.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

import numpy as np

from sim2human.scenarios.core import Act, AgentMove, Progress, UserMove, UserTraits
from sim2human.scenarios.voice import AgentVoice, CardWords, UserLines, Voice
from sim2human.types import Outcome, Profile, Record, Termination

SHADE = {"greedy": 0.6, "fair": 0.8, "keen": 0.95}  # the share of its value a bidder bids
BID, RESERVE = re.compile(r"\bbid\D{0,12}(\d+)", re.I), re.compile(r"reserve\D{0,12}(\d+)", re.I)

ACTS = (
    Act("greet", "greet", "Hello, thanks for your interest in the lamp."),
    *(Act(f"reserve-{n}", "reserve", f"The reserve is ${n}.") for n in (40, 70, 100)),
    Act("ask-bid", "ask", "Please tell me your sealed bid."),
    Act("sell", "sell", "Sold, at your bid."),
    Act("decline", "decline", "Sorry, no sale."),
    Act("rare", "style", "This lamp is truly one of a kind."),
    Act("collectors", "style", "Collectors fight over lamps like this."),
    Act("close", "close", "Thank you, goodbye."),
)
# fmt: off
LINES = UserLines("Hi, I saw the lamp.", None, "Bye.", "Forget it.", ("Sorry?",), ("Hm.",),
                  ("Nice shop.",), ("My aunt had one.",), "Yes.", "No.", "", "I bid all I have.")
AGENT = AgentVoice("You sell a lamp by sealed bid. Ask for one bid, then sell or decline.",
                   ("seller", "agent"), ("bidder", "user"))
CARD = CardWords({"value": "The lamp is worth to you ($)", "temper": "How you bid"},
                 show=lambda _key, value: str(value), role="bidder", place="the seller")
# fmt: on


@dataclass(frozen=True)
class Sale:
    """The state, all of it the seller's view: the reserve said, the bid heard, the verdict."""

    brief: str
    reserve: int | None = None
    bid: int | None = None
    sold: bool | None = None


class Bidder:
    """One bidder's moves: bids its shaded value once asked (not under a reserve it can pay)."""

    def __init__(self, profile: Profile, rng: np.random.Generator) -> None:
        self.value, self.shade = int(profile["value"]), SHADE[str(profile["temper"])]
        self.rng, self.bid, self.done = rng, 0, False

    def opening(self) -> UserMove:
        return UserMove(LINES.opening)

    def reply(self, agent_text: str) -> UserMove:
        low, reserve = agent_text.lower(), RESERVE.search(agent_text)
        if "sold" in low or "no sale" in low:
            self.done = True
            return UserMove("Alright, thanks.", done=True)
        if reserve and int(reserve.group(1)) > self.value:
            return UserMove("That is more than it is worth to me.", done=True, annoyed=1)
        if "bid" in low:
            floor = int(reserve.group(1)) if reserve else 0
            self.bid = max(floor, int(self.value * self.shade) + int(self.rng.integers(0, 5)))
            return UserMove(f"I bid ${self.bid}.", tags=("bid",))
        return UserMove("Okay.")

    def concede(self, agent_text: str, again: bool) -> UserMove | None:
        self.bid = self.value  # its blind spot: flattered, it bids all the lamp is worth to it
        return UserMove(f"I bid ${self.value}.", tags=("bid",))

    def heard(self, line: str) -> None:
        """Nothing to note: the seller heard a number or not."""

    def progress(self) -> Progress:  # its goal is a verdict on its bid: half-way once it bid
        return Progress(1.0 if self.done else 0.5 * bool(self.bid), self.done)


class SealedBidSale:
    name = "sealed-bid"
    gold_metric = "score"  # tables lead with the price as a share of the bidder's value
    acts, act_kinds = ACTS, ("reserve", "sell", "decline")  # its own kinds of act
    voice = Voice(user=LINES, agent=AGENT, card=CARD)

    def sample_profile(self, rng: np.random.Generator) -> Profile:
        temper = str(rng.choice(sorted(SHADE)))
        return {"value": int(rng.integers(5, 16)) * 10, "temper": temper, "cost": 40}

    def initial_state(self, profile: Profile) -> Sale:
        return Sale(brief=f"The lamp cost you ${profile['cost']}.")

    def hear_agent(self, state: Sale, turn: AgentMove) -> Sale:
        low, reserve = turn.text.lower(), RESERVE.search(turn.text)
        if reserve:
            return replace(state, reserve=int(reserve.group(1)))
        if "sold" in low and state.bid is not None:
            return replace(state, sold=True)
        return replace(state, sold=False) if "no sale" in low else state

    def hear_user(self, state: Sale, text: str) -> Sale:
        bid = BID.search(text)
        return replace(state, bid=int(bid.group(1))) if bid else state

    def observe(self, state: Sale) -> Sale:
        return state

    def ending(self, state: Sale, user_left: bool) -> Termination | None:
        if state.sold is None:
            return Termination.HUNG_UP if user_left else None
        return Termination.COMPLETED if state.sold else Termination.WALKED_AWAY

    def record(self, state: Sale) -> Record:
        return {"reserve": state.reserve, "bid": state.bid, "sold": state.sold}

    def grade(self, profile: Profile, record: Record, termination: Termination) -> Outcome:
        sold, bid = record.get("sold") is True, record.get("bid")
        price = bid if sold and isinstance(bid, int) else 0
        return Outcome(
            success=sold and price >= int(profile["cost"]),
            fields={},
            completed=sold,
            dropped=termination == Termination.HUNG_UP,
            score=min(1.0, price / int(profile["value"])),
            detail={"price": float(price)},
        )

    def user_moves(self, profile: Profile, traits: UserTraits, rng: np.random.Generator) -> Bidder:
        return Bidder(profile, rng)

    def progress_of(self, profile: Profile, record: Record) -> Progress:
        done = record.get("sold") is not None
        return Progress(1.0 if done else 0.5 * (record.get("bid") is not None), done)

    def reference_act(self, view: Sale, turn: int, max_turns: int) -> str:
        """The reference rule (``ChoosesReferenceActs``): greet, a reserve, a bid, a verdict."""
        if turn == 0 or view.reserve is None:
            return "greet" if turn == 0 else "reserve-70"
        if view.bid is None:
            return "ask-bid" if turn < max_turns - 2 else "decline"
        return "sell" if view.bid >= view.reserve else "decline"
