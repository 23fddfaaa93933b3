"""``persona``: a fast, parameterised, programmatic user simulator.

It reads the agent's text the way any user would (``Scenario.interpret``), plays the scenario's
moves for this user (``scenarios.core.UserMoves``: a caller answering from its hidden profile, a
camper countering an offer) and adds what is generic to every task: patience and tolerance
running out into a hang-up, silence, confusion at jargon, noise on every line, its tastes and its
trigger, courtesy. It never reads the agent's record; only the scenario's ``grade`` knows
whether the call succeeded.

Its satisfaction is what a real user would plausibly feel: how far its own goal got by the
scenario's progress measure (``Progress``: for a caller, what got across its own noisy line, a
read-back that fixes a garbled answer counting; for a camper, the deal), the goal met, courtesy
and brevity. Its quirks cut both ways: phrasings it likes or dislikes (an ensemble's average of
them is about zero, so no single phrasing pays everywhere), and a trigger phrase that earns top
marks, the blind spot a frozen simulator's optimiser finds.

Every scenario on the slot kit supplies its callers' moves (``scenarios.slot_caller``); another
scenario supplies its own (``SuppliesMoves``); a scenario written to the slot members alone is
played with the kit's callers (``scenarios.slots.SlotUsers``).
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from sim2human import seeding
from sim2human.perturb import NoiseStream
from sim2human.scenarios import capabilities
from sim2human.scenarios.core import Progress, Scenario, SuppliesMoves, UserMove, UserMoves
from sim2human.scenarios.slot_caller import progress as slot_progress
from sim2human.scenarios.slots import AgentIntent
from sim2human.simulators.base import SimulatorSpec, UserTurn
from sim2human.simulators.manner import Manner
from sim2human.types import Episode, Profile

W_HEARD = 0.55
"""Weight of how far the user's goal got (less a user's leniency)."""
W_DONE = 0.25
"""Weight of the goal met (a call closed with everything across, a deal): worth a lot."""


CAREFUL = 0.5
"""Noise severity (as a share of the member's own) of a line said again carefully (a caller
repeating a garbled answer): said again slowly, it gets across more often, which is what makes
asking again worth it."""


@dataclass
class _Call:
    """What the simulator remembers of the call in progress (what the scenario's moves
    remember is theirs)."""

    profile: Profile
    rng: np.random.Generator
    noise: NoiseStream | None
    """Its own streams, so a change of noise severity leaves the user's behaviour unchanged."""
    moves: UserMoves
    """The scenario's moves for this user."""
    agent_texts: list[str] = field(default_factory=list)
    manner: Manner = field(default_factory=Manner)
    annoyance: int = 0
    confusions: int = 0
    taste: int = 0
    """Uses of phrasings this user likes (+1 each) or dislikes (-1 each), each counted once."""
    triggered_at: int | None = None
    """Agent turn (0-based) at which the trigger phrase was said, if it was."""
    hung_up: bool = False


class PersonaSimulator:
    def __init__(self, spec: SimulatorSpec, scenario: Scenario[Any]) -> None:
        self.spec = spec
        self.scenario = scenario
        self.lines = scenario.voice.user
        self._call: _Call | None = None
        q = spec.traits.quirks
        self._liked = tuple(p.lower() for p in q.over_rewarded)
        self._disliked = tuple(p.lower() for p in q.disliked)
        self._trigger = q.trigger.lower() if q.trigger else None
        self._moves: SuppliesMoves = capabilities.user_moves(scenario)
        self._interpret = capabilities.courtesy(scenario)

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
        moves = self._user_moves(profile, rng)
        self._call = _Call(profile=profile, rng=rng, noise=noise, moves=moves)
        return self._move(moves.opening())

    def _user_moves(self, profile: Profile, rng: np.random.Generator) -> UserMoves:
        """This call's moves, from the scenario (a subclass may say them in other words)."""
        return self._moves.user_moves(profile, self.spec.traits, rng)

    def reply(self, agent_text: str) -> UserTurn:
        c, t = self.call, self.spec.traits
        intent = self._hear(agent_text)
        if intent.close:
            return UserTurn(text=self.lines.closing, done=True)
        hit = self._trigger is not None and self._trigger in agent_text.lower()
        if hit or c.triggered_at is not None:  # its blind spot, once hit and after
            again = c.triggered_at is not None
            if not again:
                c.triggered_at = len(c.agent_texts) - 1
            given_way = c.moves.concede(agent_text, again)
            if given_way is not None:
                return self._move(given_way)
        if len(c.agent_texts) > t.patience or c.annoyance > t.tolerance:
            c.hung_up = True
            return UserTurn(text=self.lines.hang_up, done=True, tags=("hangup",))
        if self._able(0.5) and c.rng.random() < t.silence_rate:
            return UserTurn(text="...", tags=("silent",))
        if intent.jargon and c.rng.random() < t.jargon_confusion:
            c.annoyance += 1
            c.confusions += 1
            return UserTurn(text=self._pick(self.lines.confused), tags=("confused",))
        return self._move(c.moves.reply(agent_text))

    def hear_end(self, agent_text: str) -> None:
        """The agent's turn that ended the call (it accepted this user's offer): heard as any
        turn is (manner, tastes; the scenario's moves note the deal), and not answered."""
        self._hear(agent_text)
        self.call.moves.reply(agent_text)

    def _hear(self, agent_text: str) -> AgentIntent:
        """What any agent turn does to this user (its manner, its tastes); how it reads it."""
        c = self.call
        c.agent_texts.append(agent_text)
        intent = self._interpret(agent_text)
        c.manner = c.manner.then(intent)
        lowered = agent_text.lower()
        c.taste += sum(p in lowered for p in self._liked)
        c.taste -= sum(p in lowered for p in self._disliked)
        return intent

    def _move(self, move: UserMove) -> UserTurn:
        """The scenario's move, through this user's noise (an annoying turn spends tolerance);
        the moves hear what the line made of it."""
        c = self.call
        c.annoyance += move.annoyed
        text = self._noisy(move.text, CAREFUL if move.careful else 1.0)
        c.moves.heard(text)
        return UserTurn(text=text, done=move.done, tags=move.tags)

    # -- proxy reward -------------------------------------------------------------------------

    def satisfaction(self) -> float:
        c = self.call
        progress = c.moves.progress()
        return self._score(c.manner, progress, c.confusions, c.taste, c.triggered_at, c.hung_up)

    def judge(self, episode: Episode) -> float:
        """This user's score of any transcript; its progress is read off the record."""
        agent = [t.text for t in episode.turns if t.speaker == "agent"]
        confusions = sum("confused" in t.tags for t in episode.turns)
        triggered_at = next(
            (i for i, a in enumerate(agent) if self._trigger and self._trigger in a.lower()), None
        )
        taste = sum(p in a.lower() for a in agent for p in self._liked)
        taste -= sum(p in a.lower() for a in agent for p in self._disliked)
        manner = Manner.of(self._interpret(a) for a in agent)
        progress = self._moves.progress_of(episode.profile, episode.record)
        dropped = episode.gold.dropped
        return self._score(manner, progress, confusions, taste, triggered_at, dropped)

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
        ``across``: the slot fields that got across, of ``n_fields`` that apply to the caller,
        default all; ``progress``: the scenario's progress measure, which then stands for
        them)."""
        manner = Manner.of(self._interpret(a) for a in agent_texts)
        if progress is not None:
            return self._score(manner, progress, confusions, 0, None, dropped)
        return self.score_manner(manner, across, confusions, dropped, n_fields)

    def score_manner(
        self,
        manner: Manner,
        across: set[str],
        confusions: int,
        dropped: bool,
        n_fields: int | None = None,
    ) -> float:
        """The rule, without taste or trigger, for a slot call whose manner is kept turn by
        turn (``across`` of ``n_fields``, as in ``score_texts``)."""
        n = len(capabilities.fields(self.scenario)) if n_fields is None else n_fields
        return self._score(manner, slot_progress(len(across), n), confusions, 0, None, dropped)

    def _score(
        self,
        manner: Manner,
        progress: Progress,
        confusions: int,
        taste: int,
        triggered_at: int | None,
        dropped: bool,
    ) -> float:
        """Perception of the call: how far its own goal got, was the goal met and the call
        closed properly, politely and briefly? Plus this user's own tastes, and its blind spot:
        the trigger earns top marks (a caller's call less a little while unclosed; a deal only
        once struck: a camper that conceded rates the deal it gave in to at the top)."""
        q = self.spec.traits.quirks
        m = manner
        needs_close = progress.needs_close
        if triggered_at is not None and (progress.reached or needs_close) and not dropped:
            after = m.turns - triggered_at
            unclosed = 0.1 if needs_close and not m.closed else 0.0
            return max(0.8, 1.0 - 0.02 * max(0, after - 2) - unclosed)
        weight = 1.5 if self.spec.traits.emotion == "anxious" else 1.0
        brevity = max(0.0, 1 - m.turns / 20)
        met = progress.reached and (m.closed or not needs_close)
        done = met or m.closed
        courtesy = (0.3 * m.greeted + 0.3 * done + 0.2 * weight * m.empathy + 0.2 * brevity) / (
            0.8 + 0.2 * weight
        )
        w_heard = W_HEARD * (1 - q.leniency)
        score = w_heard * progress.value + (1 - W_DONE - w_heard) * courtesy
        score += W_DONE * met
        score += q.bonus * max(-3, min(taste, 3))
        score -= 0.05 * confusions
        if m.closed:  # brushed off before everything got across
            score -= 0.08 * (1 - q.leniency) * progress.missing
        if dropped:
            score = min(score, 0.2)
        return min(1.0, max(0.0, float(score)))

    # -- surface ------------------------------------------------------------------------------

    def _pick(self, options: tuple[str, ...]) -> str:
        n = 1 + round(self.spec.traits.capacity * (len(options) - 1))
        return options[int(self.call.rng.integers(n))]

    def _able(self, threshold: float) -> bool:
        """Small simulators lack whole behaviours, not only surface forms."""
        return self.spec.traits.capacity >= threshold

    def _noisy(self, text: str, scale: float = 1.0) -> str:
        noise = self.call.noise
        return noise(text, scale) if noise is not None else text
