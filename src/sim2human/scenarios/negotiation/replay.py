"""CaSiNo as a replay corpus: real campers' words, for the ``negotiation`` scenario.

A member is one side of one CaSiNo dialogue (id ``<dialogue_id>-<1|2>``, ``mturk_agent_1``/``_2``).
Its hidden profile is that participant's own: its priorities (``value2issue``), its own reason
for its high one (``value2reason``), and, as the agent's priorities, those of the person it
really negotiated with. Its cooperativeness comes from its social value orientation
(``COOPERATIVENESS``, fixed a priori: the corpus records SVO, not a number).

A replayed utterance cannot answer an offer it never heard, so the camper is two halves:

- **the talk is real**: every turn that is not an offer, an acceptance or a statement of
  priorities is the participant's next own utterance, in dialogue order (tag ``verbatim``);
  utterances the scenario would read as a move (an offer, "deal", "walk away", "... matters
  most") are left out, so real words never accept or reject anything by accident;
- **the decisions are a rule**: the negotiation's own camper (``CamperMoves`` through the persona
  without quirks: calm, no trigger, no tastes) weighs every offer at the participant's own
  priorities and accepts one that meets its aspiration, never one below its walk-away; a
  rejection or counter-offer is the participant's next utterance followed by the rule's offer
  in the scenario's readable form, an answer about priorities is the scenario's sentence plus
  the participant's own reason, an acceptance is the rule's words (tag ``adapted``).

Satisfaction is the persona rule over the scenario's progress measure (``PersonaSimulator``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Final

import numpy as np

from sim2human.corpora import casino
from sim2human.errors import UsageError
from sim2human.scenarios import readers
from sim2human.scenarios.catalog import get_scenario
from sim2human.scenarios.core import AnyScenario
from sim2human.scenarios.negotiation import deal
from sim2human.scenarios.negotiation.deal import ISSUES
from sim2human.scenarios.negotiation.scenario import AGENT, NegotiationScenario
from sim2human.scenarios.negotiation.state import DealState
from sim2human.simulators.base import Quirks, SimulatorSpec, UserTurn
from sim2human.simulators.persona import PersonaSimulator
from sim2human.simulators.replay_corpus import Corpus, CorpusFamily
from sim2human.types import Episode, Profile

MIN_TALK: Final = 3
"""Participants with fewer usable utterances than this are not members."""
COOPERATIVENESS: Final = {"prosocial": 0.9, "proself": 0.6, "unclassified": 0.75}
"""Cooperativeness by social value orientation (0.9 is the persona's default)."""
_SIDE: Final = {"1": "mturk_agent_1", "2": "mturk_agent_2"}
HELDOUT_SPLITS: Final[tuple[casino.Split, ...]] = ("valid", "test")
"""The splits of ``casino-heldout`` (``CASINO.families``)."""


def wrong_task(scenario: AnyScenario) -> str | None:
    """Why CaSiNo's campsite negotiations are not ``scenario``'s task, or None."""
    if not isinstance(scenario, NegotiationScenario):
        return "CaSiNo replay members play the negotiation scenario only"
    return None


def unplayable(scenario: AnyScenario) -> str | None:
    """Why CaSiNo members cannot play ``scenario`` (they negotiate the campsite), or None."""
    return wrong_task(scenario) or casino.missing()


def human_turns(data: str | None) -> list[tuple[str, tuple[str, ...]]]:
    """Every held-out (valid + test) camper's own utterances, deal events left out, from
    ``data``: the human reference fidelity compares simulated campers with."""
    return [
        (f"{d.dialogue_id}-{k}", tuple(text for who, text in d.utterances if who == side))
        for split in HELDOUT_SPLITS
        for d in casino.load(split, data)
        for k, side in _SIDE.items()
    ]


def _splits(names: tuple[str, ...]) -> tuple[casino.Split, ...]:
    out: list[casino.Split] = []
    for name in names:
        if name not in casino.SPLITS:
            raise UsageError(f"CaSiNo corpus: unknown split {name!r} (known: train, valid, test)")
        out.append(casino.SPLITS[casino.SPLITS.index(name)])
    return tuple(out)


@lru_cache(maxsize=4)
def member_ids(splits: tuple[str, ...]) -> tuple[str, ...]:
    found = tuple(
        f"{d.dialogue_id}-{k}"
        for s in _splits(splits)
        for d in casino.load(s)
        for k, side in _SIDE.items()
        if len(_talk(d, side)) >= MIN_TALK
    )
    if not found:
        raise UsageError(f"CaSiNo corpus: no playable camper in split(s) {', '.join(splits)}")
    return found


@lru_cache(maxsize=1)
def _by_id() -> dict[str, casino.Dialogue]:
    return {d.dialogue_id: d for s in casino.SPLITS for d in casino.load(s)}


def camper(member_id: str) -> tuple[casino.Dialogue, str]:
    """The dialogue and side (``mturk_agent_1``/``_2``) of a member id."""
    did, _, k = member_id.rpartition("-")
    d = _by_id().get(did)
    if d is None or k not in _SIDE:
        raise UsageError(f"replay member: {member_id!r} is not a camper of the CaSiNo corpus")
    return d, _SIDE[k]


def _talk(d: casino.Dialogue, side: str) -> tuple[str, ...]:
    """The participant's utterances the scenario reads as no move (see the module docstring)."""
    return tuple(text for who, text in d.utterances if who == side and _is_talk(text))


def _is_talk(text: str) -> bool:
    """Heard after an offer of the agent's, ``text`` changes nothing but the camper's last move
    (no offer, no acceptance, no walking away, no priorities stated)."""
    if readers.silent(text):
        return False
    scenario = _negotiation()
    before = scenario.hear_agent(
        DealState(own=("high", "medium", "low"), brief=""),
        _Offer(text=f"How about this: {deal.say_split((1, 1, 1))}?"),
    )
    after = scenario.hear_user(before, text)
    return replace(after, last_user="") == before and after.last_user in ("", "evasive")


@dataclass(frozen=True)
class _Offer:
    """An agent's turn as ``_is_talk`` puts it to the scenario (``core.AgentMove``)."""

    text: str
    act: str | None = None
    field: str | None = None


@lru_cache(maxsize=1)
def _negotiation() -> NegotiationScenario:
    found = get_scenario("negotiation")
    assert isinstance(found, NegotiationScenario)
    return found


def card(member_id: str, scenario: AnyScenario) -> Profile:
    """The participant's own priorities and reason; the agent's are its real opponent's."""
    if (why := unplayable(scenario)) is not None:
        raise UsageError(f"replay member {member_id!r}: {why}")
    d, side = camper(member_id)
    me = d.participants[side]
    other = d.participants[next(s for s in casino.SIDES if s != side)]
    reason = me.reasons.get("high", "")
    profile: Profile = {i: me.priorities[i] for i in ISSUES}
    profile["reason"] = reason if _is_talk(reason) else ""
    profile.update({AGENT + i: other.priorities[i] for i in ISSUES})
    return profile


class ReplayCamper:
    """One CaSiNo participant: real words for the talk, the scenario's rule for the deal."""

    def __init__(self, spec: SimulatorSpec, scenario: AnyScenario) -> None:
        if (why := unplayable(scenario)) is not None:
            raise UsageError(f"simulator {spec.id!r}: {why}")
        self.spec = spec
        self.scenario = scenario
        d, side = camper(spec.id.removeprefix(f"{spec.family}-"))
        self.talk = _talk(d, side)
        traits = spec.traits.model_copy(
            update={
                "emotion": "calm",
                "cooperativeness": COOPERATIVENESS.get(d.participants[side].svo, 0.75),
                "quirks": Quirks(over_rewarded=(), bonus=0.0, trigger=None, leniency=0.0),
            }
        )
        self._rule = PersonaSimulator(
            spec.model_copy(update={"kind": "persona", "traits": traits}), scenario
        )
        self._next = 0

    def start(self, profile: Profile, rng: np.random.Generator) -> UserTurn:
        self._rule.start(profile, rng)
        self._next = 0
        return UserTurn(text=self._said(), tags=("verbatim",))

    def reply(self, agent_text: str) -> UserTurn:
        return self._reword(self._rule.reply(agent_text))

    def hear_end(self, agent_text: str) -> None:
        self._rule.hear_end(agent_text)

    def satisfaction(self) -> float:
        return self._rule.satisfaction()

    def judge(self, episode: Episode) -> float:
        return self._rule.judge(episode)

    def _reword(self, turn: UserTurn) -> UserTurn:
        """The rule's turn in the participant's words where it makes no move (module docstring)."""
        offer = deal.read_split(turn.text)
        if offer is not None:
            said = f"{self._said()} How about this: {deal.say_split(offer)}?"
            return UserTurn(text=said, done=turn.done, tags=(*turn.tags, "adapted"))
        if turn.done or {"accept", "priorities", "silent", "confused", "hangup"} & set(turn.tags):
            return UserTurn(text=turn.text, done=turn.done, tags=(*turn.tags, "adapted"))
        return UserTurn(text=self._said(), tags=(*turn.tags, "verbatim"))

    def _said(self) -> str:
        """The participant's next utterance; after the last, from its second one again."""
        if self._next >= len(self.talk):
            self._next = min(1, len(self.talk) - 1)
        text = self.talk[self._next]
        self._next += 1
        return text


CASINO: Final = Corpus(
    name="casino",
    families=(
        CorpusFamily(
            "casino-train",
            ("train",),
            "real campers' words: CaSiNo train negotiations (negotiation)",
        ),
        CorpusFamily(
            "casino-heldout",
            HELDOUT_SPLITS,
            "real campers' words: CaSiNo valid + test negotiations (negotiation)",
        ),
    ),
    ids=member_ids,
    unplayable=unplayable,
    missing=casino.missing,
    title="held-out CaSiNo campers' turns (valid + test)",
    wrong_task=wrong_task,
    human_turns=human_turns,
    play=ReplayCamper,
    card=card,
)
