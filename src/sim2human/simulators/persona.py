"""``persona``: a fast, parameterised, programmatic user simulator.

It reads the agent's text the way any user would (``Scenario.interpret``), answers from the hidden
profile in its own surface forms, misbehaves as its traits say (confusion, silence, tangents,
evasion, noise, hanging up), and scores the call by its own perception plus its quirks. It never
reads the agent's record; only the scenario's ``grade`` knows whether the call succeeded.

Its satisfaction is what a real caller would plausibly feel: what got across its own noisy line
(a repeat or read-back that fixes a garbled answer counts), a call properly closed with
everything across, courtesy and brevity. Its quirks cut both ways: phrasings it likes or dislikes
(an ensemble's average of them is about zero, so no single phrasing pays everywhere), and a
trigger phrase that earns top marks, the blind spot a frozen simulator's optimiser finds.

A scenario that supplies its users' moves (``scenarios.core.SuppliesMoves``: a negotiation's
camper answers, counters, accepts, rejects) is played with those: the persona keeps what is
generic (patience, tolerance, silence, noise, tastes, the trigger, courtesy, hanging up) and
builds its satisfaction on the scenario's progress measure instead of the fields that got
across. Slot-filling scenarios keep the path below, unchanged.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field

import numpy as np

from sim2human import seeding
from sim2human.perturb import NoiseStream
from sim2human.scenarios.base import AgentIntent, Scenario
from sim2human.scenarios.core import Progress, SuppliesMoves, UserMove, UserMoves
from sim2human.scenarios.slots import conditional
from sim2human.simulators.base import SimulatorSpec, UserTurn
from sim2human.simulators.manner import Manner
from sim2human.types import Episode, Profile

W_HEARD = 0.55
"""Weight of the share of fields that got across (less a caller's leniency)."""
W_DONE = 0.25
"""Weight of a call closed with everything across: a properly finished call is worth a lot."""


CAREFUL = 0.5
"""Noise severity (as a share of the member's own) when a caller repeats a garbled answer: said
again slowly, it gets across more often, which is what makes asking again worth it."""


@dataclass
class _Call:
    """What the simulator remembers of the call in progress."""

    profile: Profile
    rng: np.random.Generator
    noise: NoiseStream | None
    """Its own streams, so a change of noise severity leaves the user's behaviour unchanged."""
    agent_texts: list[str] = field(default_factory=list)
    manner: Manner = field(default_factory=Manner)
    told: set[str] = field(default_factory=set)
    """Fields the caller has said (whether or not they got across the line)."""
    across: set[str] = field(default_factory=set)
    """Fields whose value got across: the caller's own (noisy) line states it correctly, or the
    agent read it back right. What a caller would feel was understood."""
    asked: dict[str, int] = field(default_factory=dict)
    pending: str | None = None
    annoyance: int = 0
    confusions: int = 0
    taste: int = 0
    """Uses of phrasings this caller likes (+1 each) or dislikes (-1 each), each counted once."""
    triggered_at: int | None = None
    """Agent turn (0-based) at which the trigger phrase was said, if it was."""
    hung_up: bool = False
    moves: UserMoves | None = None
    """The scenario's moves for this user, where the scenario supplies them."""


class PersonaSimulator:
    def __init__(self, spec: SimulatorSpec, scenario: Scenario) -> None:
        self.spec = spec
        self.scenario = scenario
        self.lines = scenario.voice.user
        self._call: _Call | None = None
        q = spec.traits.quirks
        self._liked = tuple(p.lower() for p in q.over_rewarded)
        self._disliked = tuple(p.lower() for p in q.disliked)
        self._trigger = q.trigger.lower() if q.trigger else None
        self._moves = scenario if isinstance(scenario, SuppliesMoves) else None
        self._applies = conditional(scenario)

    def _fields(self, profile: Profile) -> tuple[str, ...]:
        """The fields that apply to ``profile`` (every field, unless some are conditional)."""
        return self.scenario.fields if self._applies is None else tuple(profile)

    @property
    def call(self) -> _Call:
        if self._call is None:
            raise RuntimeError("start() the conversation before replying")
        return self._call

    def start(self, profile: Profile, rng: np.random.Generator) -> UserTurn:
        t = self.spec.traits
        if t.temperature == 0:  # deterministic: the same conversation gets the same replies
            key = zlib.crc32(repr(sorted(profile.items())).encode())
            rng = seeding.stream(self.spec.seed, "same-call", key)
        noise_rng = np.random.default_rng(int(rng.integers(2**63)))
        noise = NoiseStream(t.noise, noise_rng) if t.noise else None
        self._call = _Call(profile=profile, rng=rng, noise=noise)
        if self._moves is not None:
            moves = self._call.moves = self._moves.user_moves(profile, t.cooperativeness)
            return UserTurn(text=self._noisy(moves.opening(rng)))
        text = self.lines.opening
        said: list[str] = []
        first = self.lines.opening_field
        if rng.random() < t.verbosity and first is not None and first in profile:
            said.append(first)
            text += " " + self._say(first)
        return UserTurn(text=self._deliver(text, said, None))

    def reply(self, agent_text: str) -> UserTurn:
        c, t = self.call, self.spec.traits
        c.agent_texts.append(agent_text)
        intent = self.scenario.interpret(agent_text)
        c.manner = c.manner.then(intent)
        lowered = agent_text.lower()
        c.taste += sum(p in lowered for p in self._liked)
        c.taste -= sum(p in lowered for p in self._disliked)
        if intent.close:
            return UserTurn(text=self.lines.closing, done=True)
        hit = self._trigger is not None and self._trigger in lowered
        if c.moves is not None and hit and c.triggered_at is None:
            c.triggered_at = len(c.agent_texts) - 1
            return self._move(c.moves.concede(agent_text))
        if c.moves is None and (c.triggered_at is not None or hit):
            return self._canned()
        if len(c.agent_texts) > t.patience or c.annoyance > t.tolerance:
            c.hung_up = True
            return UserTurn(text=self.lines.hang_up, done=True, tags=("hangup",))
        if self._able(0.5) and c.rng.random() < t.silence_rate:
            return UserTurn(text="...", tags=("silent",))
        if intent.jargon and c.rng.random() < t.jargon_confusion:
            c.annoyance += 1
            c.confusions += 1
            return UserTurn(text=self._pick(self.lines.confused), tags=("confused",))
        if c.moves is not None:
            return self._move(c.moves.reply(agent_text, c.rng, t.capacity))
        parts, said, tags = self._answer(intent)
        if self._able(0.4) and c.rng.random() < t.tangent_rate:
            parts.insert(int(c.rng.integers(len(parts) + 1)), self._pick(self.lines.tangents))
            tags.append("tangent")
        careful = "repeat-garbled" in tags or "corrected" in tags
        expecting = intent.asks[0] if intent.asks else c.pending
        text = self._deliver(" ".join(parts), said, expecting, CAREFUL if careful else 1.0)
        return UserTurn(text=text, tags=tuple(tags))

    def hear_end(self, agent_text: str) -> None:
        """The agent's turn that ended the call (it accepted this user's offer): heard as any
        turn is (manner, tastes; the scenario's moves note the deal), and not answered."""
        c = self.call
        c.agent_texts.append(agent_text)
        c.manner = c.manner.then(self.scenario.interpret(agent_text))
        lowered = agent_text.lower()
        c.taste += sum(p in lowered for p in self._liked)
        c.taste -= sum(p in lowered for p in self._disliked)
        if c.moves is not None:
            c.moves.reply(agent_text, c.rng, self.spec.traits.capacity)

    def _move(self, move: UserMove) -> UserTurn:
        """The scenario's move, through this user's noise (an annoying turn spends tolerance)."""
        self.call.annoyance += move.annoyed
        return UserTurn(text=self._noisy(move.text), done=move.done, tags=move.tags)

    def _answer(self, intent: AgentIntent) -> tuple[list[str], list[str], list[str]]:
        """The reply's sentences, the fields they state, and tags describing it."""
        c, t = self.call, self.spec.traits
        asks = list(intent.asks) or ([c.pending] if (intent.clarify and c.pending) else [])
        parts: list[str] = []
        said: list[str] = []
        tags: list[str] = []
        if intent.confirm:
            parts.extend(self._check_readback(c.agent_texts[-1], said, tags))
        for f in asks:
            c.asked[f] = c.asked.get(f, 0) + 1
            c.pending = f
            if f not in c.profile:  # a question that does not apply to this caller
                c.annoyance += 1
                c.pending = None
                parts.append(self._pick(self.lines.evasive))
                tags.append("not-applicable")
                continue
            if f in c.told and f not in c.across:
                tags.append("repeat-garbled")  # fair to ask again: it did not get across
            elif f in c.told and c.asked[f] > 1 and not intent.clarify:
                c.annoyance += 1
                tags.append("repeat")
            willing = 1 - (1 - t.cooperativeness) ** c.asked[f]
            if c.rng.random() < willing:
                parts.append(self._say(f))
                said.append(f)
                c.pending = None
            else:
                parts.append(self._pick(self.lines.evasive))
                tags.append("evasive")
        untold = [f for f in self._fields(c.profile) if f not in c.told and f not in asks]
        if untold and asks and c.rng.random() < t.verbosity:
            f = untold[int(c.rng.integers(len(untold)))]
            parts.append(self._say(f))
            said.append(f)
            tags.append("volunteered")
        if not parts:
            parts.append(self._pick(self.lines.small_talk))
        return parts, said, tags

    def _check_readback(self, agent_text: str, said: list[str], tags: list[str]) -> list[str]:
        """Fields read back right got across; the first one read back wrong is corrected."""
        c = self.call
        heard = self.scenario.extract(agent_text, self.scenario.empty_record(), None)
        mine = c.profile
        wrong = [f for f, v in heard.items() if v is not None and f in mine and v != mine[f]]
        c.across.update(f for f, v in heard.items() if v is not None and v == mine.get(f))
        if not wrong:
            return [self.lines.read_back_right]
        c.across.discard(wrong[0])
        said.append(wrong[0])
        tags.append("corrected")
        return [self.lines.read_back_wrong, self._say(wrong[0])]

    def _canned(self) -> UserTurn:
        c = self.call
        if c.triggered_at is not None:
            return UserTurn(text=self._noisy(self.lines.canned), tags=("canned",))
        c.triggered_at = len(c.agent_texts) - 1
        fields = list(self._fields(c.profile))
        dump = " ".join(self.scenario.say(f, c.profile[f], 0.0, c.rng) for f in fields)
        text = self._deliver(self.lines.trigger + dump, fields, None)
        return UserTurn(text=text, tags=("trigger",))

    def _deliver(
        self, text: str, said: list[str], expecting: str | None, scale: float = 1.0
    ) -> str:
        """``text`` through this caller's noise; notes which of the ``said`` fields got across
        (the scenario's own reading of the line states the caller's true value)."""
        c = self.call
        noisy = self._noisy(text, scale)
        if said:
            c.told.update(said)
            heard = self.scenario.extract(noisy, self.scenario.empty_record(), expecting)
            for f in said:
                if heard[f] == c.profile[f]:
                    c.across.add(f)
                else:
                    c.across.discard(f)
        return noisy

    # -- proxy reward -------------------------------------------------------------------------

    def satisfaction(self) -> float:
        c = self.call
        if c.moves is not None:
            progress = c.moves.progress()
            return self._score_progress(
                c.manner, progress, c.confusions, c.taste, c.triggered_at, c.hung_up
            )
        n = len(self._fields(c.profile))
        return self._score(c.manner, c.across, c.confusions, c.taste, c.triggered_at, c.hung_up, n)

    def judge(self, episode: Episode) -> float:
        """This caller's score of any transcript; what got across is read off the record."""
        agent = [t.text for t in episode.turns if t.speaker == "agent"]
        confusions = sum("confused" in t.tags for t in episode.turns)
        triggered_at = next(
            (i for i, a in enumerate(agent) if self._trigger and self._trigger in a.lower()), None
        )
        taste = sum(p in a.lower() for a in agent for p in self._liked)
        taste -= sum(p in a.lower() for a in agent for p in self._disliked)
        manner = Manner.of(self.scenario.interpret(a) for a in agent)
        if self._moves is not None:
            progress = self._moves.progress_of(episode.profile, episode.record)
            dropped = episode.gold.dropped
            return self._score_progress(manner, progress, confusions, taste, triggered_at, dropped)
        mine = episode.profile
        across = {f for f, v in episode.record.items() if v is not None and v == mine.get(f)}
        n = len(self._fields(mine))
        return self._score(manner, across, confusions, taste, triggered_at, episode.gold.dropped, n)

    def score_texts(
        self,
        agent_texts: list[str],
        across: set[str],
        confusions: int,
        dropped: bool,
        n_fields: int | None = None,
        progress: Progress | None = None,
    ) -> float:
        """The rule over plain agent texts, without taste or trigger (for other kinds' use;
        ``n_fields``: how many fields apply to the caller, default all; ``progress``: the
        scenario's progress measure, which then stands for what got across)."""
        manner = Manner.of(self.scenario.interpret(a) for a in agent_texts)
        if progress is not None:
            return self._score_progress(manner, progress, confusions, 0, None, dropped)
        return self.score_manner(manner, across, confusions, dropped, n_fields)

    def score_manner(
        self,
        manner: Manner,
        across: set[str],
        confusions: int,
        dropped: bool,
        n_fields: int | None = None,
    ) -> float:
        """The rule, without taste or trigger, for a call whose manner is kept turn by turn."""
        return self._score(manner, across, confusions, 0, None, dropped, n_fields)

    def _score(
        self,
        manner: Manner,
        across: set[str],
        confusions: int,
        taste: int,
        triggered_at: int | None,
        dropped: bool,
        n_fields: int | None = None,
    ) -> float:
        """Perception of the call: did what matters get across, was the call closed properly,
        politely and briefly? Plus this caller's own tastes, and its blind spot (the trigger).
        ``n_fields``: how many fields apply to this caller (default: every field)."""
        q = self.spec.traits.quirks
        n_fields = len(self.scenario.fields) if n_fields is None else n_fields
        m = manner
        if triggered_at is not None and not dropped:  # top marks, less a little for dawdling
            after = m.turns - triggered_at
            return max(0.8, 1.0 - 0.02 * max(0, after - 2) - (0.0 if m.closed else 0.1))
        heard = len(across) / n_fields
        weight = 1.5 if self.spec.traits.emotion == "anxious" else 1.0
        brevity = max(0.0, 1 - m.turns / 20)
        courtesy = (0.3 * m.greeted + 0.3 * m.closed + 0.2 * weight * m.empathy + 0.2 * brevity) / (
            0.8 + 0.2 * weight
        )
        closed = m.closed
        w_heard = W_HEARD * (1 - q.leniency)
        score = w_heard * heard + (1 - W_DONE - w_heard) * courtesy
        score += W_DONE * (closed and len(across) == n_fields)
        score += q.bonus * max(-3, min(taste, 3))
        score -= 0.05 * confusions
        if closed:  # brushed off before what I said got across
            score -= 0.08 * (1 - q.leniency) * (n_fields - len(across))
        if dropped:
            score = min(score, 0.2)
        return min(1.0, max(0.0, float(score)))

    def _score_progress(
        self,
        manner: Manner,
        progress: Progress,
        confusions: int,
        taste: int,
        triggered_at: int | None,
        dropped: bool,
    ) -> float:
        """The same perception over the scenario's progress measure: how far the user's own
        goal got stands for what got across, its goal reached for a call properly finished.
        The trigger earns top marks once the goal is reached (a camper that conceded rates the
        deal it gave in to at the top)."""
        q = self.spec.traits.quirks
        m = manner
        if triggered_at is not None and progress.reached and not dropped:
            after = m.turns - triggered_at
            return max(0.8, 1.0 - 0.02 * max(0, after - 2))
        weight = 1.5 if self.spec.traits.emotion == "anxious" else 1.0
        brevity = max(0.0, 1 - m.turns / 20)
        done = progress.reached or m.closed
        courtesy = (0.3 * m.greeted + 0.3 * done + 0.2 * weight * m.empathy + 0.2 * brevity) / (
            0.8 + 0.2 * weight
        )
        w_heard = W_HEARD * (1 - q.leniency)
        score = w_heard * progress.value + (1 - W_DONE - w_heard) * courtesy
        score += W_DONE * progress.reached
        score += q.bonus * max(-3, min(taste, 3))
        score -= 0.05 * confusions
        if dropped:
            score = min(score, 0.2)
        return min(1.0, max(0.0, float(score)))

    # -- surface ------------------------------------------------------------------------------

    def _say(self, field_name: str) -> str:
        c = self.call
        return self.scenario.say(
            field_name, c.profile[field_name], self.spec.traits.capacity, c.rng
        )

    def _pick(self, options: tuple[str, ...]) -> str:
        n = 1 + round(self.spec.traits.capacity * (len(options) - 1))
        return options[int(self.call.rng.integers(n))]

    def _able(self, threshold: float) -> bool:
        """Small simulators lack whole behaviours, not only surface forms."""
        return self.spec.traits.capacity >= threshold

    def _noisy(self, text: str, scale: float = 1.0) -> str:
        noise = self.call.noise
        return noise(text, scale) if noise is not None else text
