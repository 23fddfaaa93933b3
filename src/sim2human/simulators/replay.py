"""``replay``: users who speak in real people's words, from any corpus of
``replay_families.CORPORA``: ACI-Bench doctor-patient visits (intake), MultiWOZ 2.1 bookings
(support) and CaSiNo campsite negotiations (negotiation: ``ReplayCamper`` in
``scenarios/negotiation/replay.py``, its own simulator; the rest of this docstring is the
slot-filling replay).

A corpus is one ``replay_corpus.Corpus`` row, in the folder of the scenario its people play
(``scenarios/intake/replay.py``, ``scenarios/support/replay.py``); a family names its corpus and
splits. A member is one encounter (dialogue). Its hidden profile is the encounter's card
(``scenarios/intake/replay_card.py``, or a MultiWOZ goal); its words are the user's own turns,
indexed by what the agent (the doctor, the wizard) had just asked, as the scenario's
``interpret`` reads the agent's turn. When the agent asks for a field the member answers with:

``verbatim``
    a real turn that answered that question in the visit and, read by the scenario's extractor,
    says the card's value;
``adapted``
    a real answer turn that says something else (or, when the agent asks the same field a second
    time and the visit has no answer turn, a short real turn of the patient) followed by the
    card's value in the scenario's plainest words: the only place non-human words enter;
``fallback``
    any other real turn of that patient, in visit order (stories, hedges, questions back).

Each reply carries one of those three tags (``UserTurn.tags``), so a run can report the shares.
Satisfaction is the persona rule without quirks (a replayed patient has no planted blind spot):
it is computed by ``PersonaSimulator.judge`` on the call so far, not copied.

The member id names its encounter (``aci-heldout-D2N068``, ``multiwoz-heldout-PMUL1635``); each
corpus is read from the path its ``corpora`` module resolves (``$SIM2HUMAN_DATA`` or
``../shared/data`` beside the repository).
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final, Literal, NamedTuple

import numpy as np

from sim2human import seeding
from sim2human.errors import UsageError
from sim2human.scenarios.capabilities import need_slot_kit
from sim2human.scenarios.core import AnyScenario
from sim2human.scenarios.slots import SlotScenario, applicable_fields, corrects, keep_answers
from sim2human.simulators.base import (
    Quirks,
    Simulator,
    SimulatorSpec,
    UserTurn,
)
from sim2human.simulators.manner import Manner
from sim2human.simulators.persona import PersonaSimulator
from sim2human.simulators.replay_corpus import Corpus, Member
from sim2human.simulators.replay_families import REPLAY_FAMILIES, corpus_of
from sim2human.types import Episode, Profile, Record

ReplyKind = Literal["verbatim", "adapted", "fallback"]
REPLY_KINDS: Final[tuple[ReplyKind, ...]] = ("verbatim", "adapted", "fallback")
_YES = re.compile(r"^(yes|yeah|yep|correct|right|that's right|mm-hmm|uh-huh)\b")


def _corpus(spec: SimulatorSpec) -> Corpus:
    if spec.family not in REPLAY_FAMILIES:
        raise UsageError(f"simulator {spec.id!r}: {spec.family!r} is not a replay family")
    return corpus_of(spec.family)


def member_for(spec: SimulatorSpec, scenario: SlotScenario) -> Member:
    corpus = _corpus(spec)
    if corpus.member is None:
        raise UsageError(f"simulator {spec.id!r}: its corpus has no slot-filling members")
    return corpus.member(spec.id.removeprefix(f"{spec.family}-"), scenario)


def build_replay(spec: SimulatorSpec, scenario: AnyScenario) -> Simulator:
    """A replay member: its corpus's own simulator where it has one, else ``ReplaySimulator``
    (a slot-filling scenario's: answers indexed by the field asked)."""
    corpus = _corpus(spec)
    if corpus.play is not None:
        return corpus.play(spec, scenario)
    return ReplaySimulator(spec, need_slot_kit(scenario, f"replay member {spec.id!r}"))


def replay_card(spec: SimulatorSpec, scenario: AnyScenario) -> Profile:
    """The hidden profile a replay member plays (the same every episode: one real caller)."""
    corpus = _corpus(spec)
    if corpus.card is not None:
        return corpus.card(spec.id.removeprefix(f"{spec.family}-"), scenario)
    kit = need_slot_kit(scenario, f"replay member {spec.id!r}")
    return dict(member_for(spec, kit).card.values)


class _Said(NamedTuple):
    """One turn of the call as the replayed caller keeps it for its own rule (``satisfaction``):
    a named tuple, not a validated ``Turn``, which cost a tenth of a replayed call's time."""

    speaker: Literal["agent", "user"]
    text: str
    tags: tuple[str, ...] = ()


@dataclass
class _Call:
    profile: Profile
    rng: np.random.Generator
    turns: list[_Said] = field(default_factory=list)
    used: set[int] = field(default_factory=set)
    asked: dict[str, int] = field(default_factory=dict)
    told: set[str] = field(default_factory=set)
    next_story: int = 1
    # what the rule has read of ``turns`` so far (kept turn by turn, as persona does)
    read: int = 0
    record: Record = field(default_factory=dict)
    answered: frozenset[str] = frozenset()
    expecting: str | None = None
    asked_now: bool = False
    manner: Manner = field(default_factory=Manner)
    confusions: int = 0
    n_fields: int = 0
    """The fields that apply to this caller's profile (fixed for the call: read once, since
    asking a scenario whether its fields are conditional costs more than the rest of a turn's
    rule)."""


class ReplaySimulator:
    def __init__(self, spec: SimulatorSpec, scenario: SlotScenario) -> None:
        self.spec = spec
        self.scenario = scenario
        self.member = member_for(spec, scenario)
        calm = spec.traits.model_copy(
            update={
                "emotion": "calm",
                "quirks": Quirks(over_rewarded=(), bonus=0.0, trigger=None, leniency=0.0),
            }
        )
        self._rule = PersonaSimulator(
            spec.model_copy(update={"kind": "persona", "traits": calm}), scenario
        )
        self._call: _Call | None = None

    @property
    def call(self) -> _Call:
        if self._call is None:
            raise RuntimeError("start() the conversation before replying")
        return self._call

    def start(self, profile: Profile, rng: np.random.Generator) -> UserTurn:
        if self.spec.traits.temperature == 0:
            key = zlib.crc32(repr(sorted(profile.items())).encode())
            rng = seeding.stream(self.spec.seed, "same-call", key)
        self._call = _Call(
            profile=profile,
            rng=rng,
            record=self.scenario.empty_record(),
            n_fields=len(applicable_fields(self.scenario, profile)),
        )
        self.call.used.add(self.member.opening)
        return self._user(self.member.turns[self.member.opening], "verbatim")

    def reply(self, agent_text: str) -> UserTurn:
        c = self.call
        c.turns.append(_Said("agent", agent_text))
        intent = self.scenario.interpret(agent_text)
        if intent.close:
            k = self.member.closing
            if k is None:
                return self._user("Okay, thank you.", "adapted", done=True)
            return self._user(self.member.turns[k], "verbatim", done=True)
        if intent.confirm:
            return self._readback(agent_text)
        if not intent.asks:
            return self._user(*self._fallback(), done=False)
        parts: list[str] = []
        kinds: list[ReplyKind] = []
        for f in intent.asks:
            c.asked[f] = c.asked.get(f, 0) + 1
            text, kind = self._answer(f)
            if text not in parts:
                parts.append(text)
            kinds.append(kind)
        kind = (
            "adapted" if "adapted" in kinds else ("verbatim" if "verbatim" in kinds else "fallback")
        )
        return self._user(" ".join(parts), kind)

    def _answer(self, f: str) -> tuple[str, ReplyKind]:
        c, m = self.call, self.member
        if f not in c.profile:  # a question that does not apply to this caller's booking
            return self._fallback()
        value = c.profile[f]
        pool = [k for k in m.answers.get(f, ()) if k not in c.used] or list(m.answers.get(f, ()))
        right = [k for k in pool if (f, k) in m.says_card]
        if right:
            c.told.add(f)
            return m.turns[self._pick(right)], "verbatim"
        if pool or c.asked[f] > 1:  # a real answer that says otherwise, or asked again
            said = self.scenario.say(f, value, 0.0, c.rng)
            c.told.add(f)
            if not pool:
                return f"{self._fallback()[0]} {said}", "adapted"
            k = self._pick(pool)  # keep the real words unless they say another value
            return (f"{m.turns[k]} {said}" if (f, k) in m.says_none else said), "adapted"
        return self._fallback()

    def _fallback(self) -> tuple[str, ReplyKind]:
        """The patient's next turn in visit order that answered no field question (the visit's
        story, hedges, questions back), then any unused turn, then any turn."""
        c, m = self.call, self.member
        indexed = {k for ks in m.answers.values() for k in ks}
        order = [k for k in range(len(m.turns)) if k not in c.used]
        free = [k for k in order if k not in indexed] or order or list(range(len(m.turns)))
        k = free[0] if self.spec.traits.temperature == 0 else self._pick(free[:3])
        return m.turns[k], "fallback"

    def _pick(self, ks: Sequence[int]) -> int:
        k = ks[0] if self.spec.traits.temperature == 0 else ks[int(self.call.rng.integers(len(ks)))]
        self.call.used.add(k)
        return k

    def _readback(self, agent_text: str) -> UserTurn:
        c, m = self.call, self.member
        heard = self.scenario.extract(agent_text, self.scenario.empty_record(), None)
        mine = c.profile
        wrong = [f for f, v in heard.items() if v is not None and f in mine and v != mine[f]]
        if wrong:
            said = self.scenario.say(wrong[0], c.profile[wrong[0]], 0.0, c.rng)
            return self._user(f"No, that's not right. {said}", "adapted")
        yes = [k for k in range(len(m.turns)) if _YES.match(m.turns[k]) and len(m.turns[k]) < 40]
        return (
            self._user(m.turns[self._pick(yes)], "verbatim")
            if yes
            else self._user("Yes, that's right.", "adapted")
        )

    def _user(self, text: str, kind: ReplyKind, done: bool = False) -> UserTurn:
        self.call.turns.append(_Said("user", text, (kind,)))
        return UserTurn(text=text, done=done, tags=(kind,))

    # -- proxy reward: the persona rule without quirks ------------------------------------------

    def satisfaction(self) -> float:
        """The persona rule over the call so far: what got across is its own turns as the
        scenario's extractor reads them, each against the question it answered."""
        c = self.call
        for t in c.turns[c.read :]:
            if t.speaker == "agent":
                intent = self.scenario.interpret(t.text)
                c.manner = c.manner.then(intent)
                c.expecting = (
                    intent.asks[0] if intent.asks else (None if intent.confirm else c.expecting)
                )
                c.asked_now = bool(intent.asks) or intent.confirm
            else:
                heard = self.scenario.extract(t.text, c.record, c.expecting)
                c.record, c.answered = keep_answers(
                    c.record,
                    heard,
                    c.answered,
                    c.expecting,
                    asked_now=c.asked_now,
                    correcting=corrects(t.text),
                )
                c.confusions += "confused" in t.tags
        c.read = len(c.turns)
        across = {f for f, v in c.record.items() if v is not None and v == c.profile.get(f)}
        return self._rule.score_manner(
            c.manner, across, c.confusions, dropped=False, n_fields=c.n_fields
        )

    def judge(self, episode: Episode) -> float:
        return self._rule.judge(episode)


def reply_shares(episodes: Sequence[Episode]) -> dict[str, float]:
    """Share of replay user turns that were verbatim, adapted, fallback (empty without any)."""
    kinds = [
        k
        for e in episodes
        for t in e.turns
        if t.speaker == "user"
        for k in t.tags
        if k in REPLY_KINDS
    ]
    return {k: kinds.count(k) / len(kinds) for k in REPLY_KINDS} if kinds else {}
