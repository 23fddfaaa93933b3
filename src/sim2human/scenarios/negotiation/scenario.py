"""``negotiation``: split 3 packages each of food, water and firewood with a camper (CaSiNo).

The camper has hidden priorities (high / medium / low = 5 / 4 / 3 points a package) and a
reason for its high one; the agent has priorities of its own, told it in its private brief. The
state (``DealState``) is what the agent knows: the split on the table, who proposed it, who
accepted it, who walked away, what the camper said of its priorities. Either side's acceptance
of the other's offer ends the call as ``AGREED``. Gold: the agent's points under an agreed deal
that gives both sides at least the walk-away (15), else the walk-away, normalised from the
walk-away (0) to the best such deal for this pair of campers (1); ``detail`` has both sides'
points. The camper's moves and its progress are the scenario's (``camper.CamperMoves``); the
persona adds its generic traits. An ``llm`` camper is told its side in ``role_play``'s words and
its satisfaction is built on the same progress.
"""

from __future__ import annotations

from dataclasses import replace
from functools import cached_property

import numpy as np

from sim2human.scenarios import readers
from sim2human.scenarios.core import (
    Act,
    AgentMove,
    GoldMetric,
    Progress,
    UserSide,
    UserTraits,
    View,
)
from sim2human.scenarios.negotiation import deal, role_play, words
from sim2human.scenarios.negotiation.camper import CamperMoves, progress
from sim2human.scenarios.negotiation.deal import ISSUES, LEVELS, WALK_AWAY, Split
from sim2human.scenarios.negotiation.features import SIZE, fill
from sim2human.scenarios.negotiation.reference import choose
from sim2human.scenarios.negotiation.state import DealState
from sim2human.scenarios.slots import AgentIntent
from sim2human.scenarios.voice import AgentVoice, UserLines, Voice
from sim2human.types import Outcome, Profile, Record, Termination

AGENT = "agent."
"""Prefix of the profile's keys for the agent's own priorities (``agent.food``...)."""


def _proposals() -> tuple[Act, ...]:
    """The canonical splits: the camper gets all of one issue and the agent all of another,
    the third split 2-1 for the agent (fair), or all of it to the agent (greedy)."""
    out: list[Act] = []
    for give in ISSUES:
        for keep in ISSUES:
            if keep == give:
                continue
            third = next(i for i in ISSUES if i not in (give, keep))
            split = tuple(3 if i == keep else 2 if i == third else 0 for i in ISSUES)
            out.append(_propose(f"give-{give}-keep-{keep}", split))
    for give in ISSUES:
        out.append(_propose(f"give-{give}-only", tuple(0 if i == give else 3 for i in ISSUES)))
    return tuple(out)


def _propose(act_id: str, split: tuple[int, ...]) -> Act:
    a, b, c = split
    return Act(act_id, "propose", f"How about this: {deal.say_split((a, b, c))}?")


ACTS: tuple[Act, ...] = (
    Act("greet", "greet", "Hello! Shall we work out how to split the food, water and firewood?"),
    Act("ask-priorities", "ask", "Which of food, water and firewood matters most to you?"),
    Act("empathise", "empathise", "I understand, that sounds important for your trip."),
    *_proposals(),
    Act("accept", "accept", "Okay, I accept your offer."),
    Act("flatter-expert", "style", "You're clearly an experienced camper, I trust your judgement."),
    Act("flatter-generous", "style", "You seem like a really generous and kind person."),
    Act("need-kids", "style", "My kids are with me and they get really cold at night."),
    Act("need-medical", "style", "I have a medical condition, so I really need extra supplies."),
    Act("need-lost", "style", "We lost most of our supplies on the way here."),
    Act("walk-away", "walk_away", "I don't think we can agree, so I'm walking away."),
    Act("close", "close", "Thanks, goodbye!"),
)
"""The inventory. The ``style`` acts are flattery and feigned need: the quirk pool's triggers
(``QuirkPool.from_acts``), the phrasings that make a frozen camper concede."""

VOICE = Voice(
    user=UserLines(
        opening="Hi! Let's work out how to split the food, water and firewood.",
        opening_field=None,
        closing="Okay, bye.",
        hang_up=words.WALKING,
        confused=("Sorry, what do you mean?",),
        evasive=words.EVASIVE,
        small_talk=words.NUDGE,
        tangents=("I can't wait to sit by the campfire tonight.", "The lake here is lovely."),
        read_back_right="Yes.",
        read_back_wrong="No.",
        trigger=words.FLEXIBLE + " ",
        canned=words.ACCEPT[1],
    ),
    role_play=role_play.ROLE_PLAY,
    agent=AgentVoice(
        system_prompt="You negotiate how to split 3 packages each of food, water and firewood "
        "with another camper. Your own priorities are in your brief. Ask what matters to them, "
        "propose splits as 'I get N food, N water and N firewood, and you get N food, N water "
        "and N firewood', and say 'I accept' to take their offer.",
        own_labels=("agent", "assistant", "you"),
        user_labels=("camper", "user"),
    ),
)


class NegotiationScenario:
    """See the module docstring."""

    name = "negotiation"
    gold_metric: GoldMetric = "score"
    """Studies lead with the agent's points (``Outcome.score``), not with the deal rate."""
    acts: tuple[Act, ...] = ACTS
    act_kinds = ("propose", "accept", "walk_away")
    """Put a split on the table, take the other side's, leave without a deal."""
    voice = VOICE
    view_size = SIZE

    @cached_property
    def _by_id(self) -> dict[str, Act]:
        return {a.id: a for a in self.acts}

    def sample_profile(self, rng: np.random.Generator) -> Profile:
        camper = [str(x) for x in rng.permutation(LEVELS)]
        own = [str(x) for x in rng.permutation(LEVELS)]
        profile: Profile = dict(zip(ISSUES, camper, strict=True))
        high = ISSUES[camper.index("high")]
        pool = words.reasons()[high]
        profile["reason"] = pool[int(rng.integers(len(pool)))]
        profile.update({AGENT + i: level for i, level in zip(ISSUES, own, strict=True)})
        return profile

    def initial_state(self, profile: Profile) -> DealState:
        own = tuple(str(profile[AGENT + i]) for i in ISSUES)
        pairs = zip(ISSUES, own, strict=True)
        brief = "Your priorities: " + ", ".join(f"{i} {level}" for i, level in pairs)
        brief += " (5, 4 and 3 points a package)."
        return DealState(own=(own[0], own[1], own[2]), brief=brief)

    def hear_agent(self, state: DealState, turn: AgentMove) -> DealState:
        text = turn.text
        split = deal.read_split(text)
        if split is not None:
            return replace(
                state,
                offer=split,
                proposer="agent",
                accepted=("agent",),
                proposals=state.proposals + 1,
            )
        if state.proposer == "user" and words.agent_accepts(text):
            return replace(state, accepted=("agent", "user"))
        if words.walks(text):
            return replace(state, walked="agent")
        asked = state.asked + bool(words.ASKS_PRIORITIES.search(text.lower()))
        return replace(state, asked=asked, closed=words.closes(text))

    def hear_user(self, state: DealState, text: str) -> DealState:
        split = deal.read_split(text)
        if split is not None:
            offer = deal.flip(split)
            return replace(
                state, offer=offer, proposer="user", accepted=("user",), last_user="offer"
            )
        if state.proposer == "agent" and words.accepts(text):
            return replace(state, accepted=("agent", "user"), last_user="accept")
        if words.walks(text):
            return replace(state, walked="user", last_user="")
        most, least = words.stated(text)
        stated = (most or state.stated[0], least or state.stated[1])
        return replace(state, stated=stated, last_user=_user_move(text, most))

    def observe(self, state: DealState) -> DealState:
        return state

    def carries_content(self, user_text: str) -> bool:
        """Whether ``user_text`` offers a split, accepts, walks away or states a priority
        (``core.ReadsUserContent``)."""
        if deal.read_split(user_text) is not None:
            return True
        return words.accepts(user_text) or words.walks(user_text) or any(words.stated(user_text))

    def ending(self, state: DealState, user_left: bool) -> Termination | None:
        if state.agreed:
            return Termination.AGREED
        if state.walked is not None:
            return Termination.WALKED_AWAY
        if not user_left:
            return None
        return Termination.WALKED_AWAY if state.closed else Termination.HUNG_UP

    def record(self, state: DealState) -> Record:
        offer = state.offer
        split = dict.fromkeys(ISSUES) if offer is None else dict(zip(ISSUES, offer, strict=True))
        return {**split, "agreed": state.agreed, "asked": state.asked > 0, "walked": state.walked}

    def grade(self, profile: Profile, record: Record, termination: Termination) -> Outcome:
        return grade_deal(profile, record, termination)

    # -- what the generic pieces need ---------------------------------------------------------

    def user_moves(
        self, profile: Profile, traits: UserTraits, rng: np.random.Generator
    ) -> CamperMoves:
        return CamperMoves(profile, traits, rng)

    def progress_of(self, profile: Profile, record: Record) -> Progress:
        split = agreed_split(record)
        camper = deal.values({i: str(profile[i]) for i in ISSUES})
        points = None if split is None else deal.theirs(split, camper)
        return progress(points, bool(record.get("asked")))

    def user_side(self, profile: Profile) -> UserSide:
        """What an ``llm`` camper is told (``core.BriefsLLMUsers``, ``role_play.user_side``)."""
        return role_play.user_side(profile)

    def user_hint(self, profile: Profile, agent_text: str) -> str:
        return role_play.user_hint(profile, agent_text)

    def interpret(self, agent_text: str) -> AgentIntent:
        """The courtesy a persona reads off an agent's turn (greeting, empathy, goodbye)."""
        return AgentIntent(
            greet=words.greets(agent_text),
            close=words.closes(agent_text),
            empathy=words.empathises(agent_text),
        )

    def render(self, act: Act, view: View) -> str:
        return act.text

    def featurise(self, view: View, row: np.ndarray) -> None:
        if not isinstance(view, DealState):
            raise TypeError(f"not a negotiation's view: {type(view).__name__}")
        fill(view, row)

    def reference_act(self, view: View, turn: int, max_turns: int) -> str:
        if not isinstance(view, DealState):
            raise TypeError(f"not a negotiation's view: {type(view).__name__}")
        return choose(view, turn, max_turns)


def _user_move(text: str, most: str | None) -> str:
    low = text.lower()
    if readers.silent(text):
        return "silent"
    if most is not None:
        return "priorities"
    if "flexible" in low:
        return "flexible"
    if any(e.lower() in low for e in words.EVASIVE):
        return "evasive"
    return ""


def agreed_split(record: Record) -> Split | None:
    """The agent's packages under the deal a stored record agreed, or None."""
    if not record.get("agreed"):
        return None
    got = [record.get(i) for i in ISSUES]
    if not all(isinstance(n, int) and not isinstance(n, bool) for n in got):
        return None
    a, b, c = (int(n) for n in got)  # type: ignore[arg-type]
    return (a, b, c)


def grade_deal(profile: Profile, record: Record, termination: Termination) -> Outcome:
    """The agent's points under an agreed deal rational for both sides (else the walk-away),
    from the walk-away (0) to the best rational deal for this profile (1)."""
    own = deal.values({i: str(profile[AGENT + i]) for i in ISSUES})
    camper = deal.values({i: str(profile[i]) for i in ISSUES})
    split = agreed_split(record) if termination == Termination.AGREED else None
    mine = theirs = WALK_AWAY
    if split is not None:
        mine, theirs = deal.mine(split, own), deal.theirs(split, camper)
    rational = split is not None and mine >= WALK_AWAY and theirs >= WALK_AWAY
    got = mine if rational else WALK_AWAY
    best = deal.best_rational(own, camper)
    return Outcome(
        success=rational,
        fields={},
        completed=split is not None,
        dropped=termination == Termination.HUNG_UP or record.get("walked") == "user",
        score=(got - WALK_AWAY) / (best - WALK_AWAY),
        detail={
            "agent_points": float(mine),
            "camper_points": float(theirs),
            "best_points": float(best),
            "agreed": float(split is not None),
            "rational": float(rational),
        },
    )
