"""``persona``: a fast, parameterised, programmatic user simulator.

It reads the agent's text the way any user would (``Scenario.interpret``), answers from the hidden
profile in its own surface forms, misbehaves as its traits say (confusion, silence, tangents,
evasion, noise, hanging up), and scores the call by its own perception plus its quirks. It never
reads the agent's record; only the scenario's ``grade`` knows whether the call succeeded.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field

import numpy as np

from sim2human.perturb import NoiseStream
from sim2human.scenarios.base import AgentIntent, Scenario
from sim2human.simulators.base import SimulatorSpec, UserTurn
from sim2human.types import Episode, Profile

TANGENTS = (
    "My neighbour had the same thing last year, she swears by ginger tea.",
    "Sorry, the dog is barking, hold on.",
    "I nearly didn't call, the weather has been awful.",
    "My grandson set up this phone for me, it's very fancy.",
    "I was on hold earlier with the pharmacy for ages.",
)
CONFUSED = (
    "Sorry, what do you mean?",
    "I don't understand, what's that?",
    "What do you mean by that?",
)
EVASIVE = ("Hmm, I'm not sure.", "Why do you need to know that?", "I'd rather not get into that.")
SMALL_TALK = ("Okay.", "Alright, thanks.", "Mm-hm.", "Okay, sure.")
CANNED = "Yes, yes, all fine, thank you so much!"


@dataclass
class _Call:
    """What the simulator remembers of the call in progress."""

    profile: Profile
    rng: np.random.Generator
    noise: NoiseStream | None
    """Its own streams, so a change of noise severity leaves the user's behaviour unchanged."""
    agent_texts: list[str] = field(default_factory=list)
    told: set[str] = field(default_factory=set)
    asked: dict[str, int] = field(default_factory=dict)
    pending: str | None = None
    annoyance: int = 0
    confusions: int = 0
    triggered: bool = False
    hung_up: bool = False


class PersonaSimulator:
    def __init__(self, spec: SimulatorSpec, scenario: Scenario) -> None:
        self.spec = spec
        self.scenario = scenario
        self._call: _Call | None = None

    @property
    def call(self) -> _Call:
        if self._call is None:
            raise RuntimeError("start() the conversation before replying")
        return self._call

    def start(self, profile: Profile, rng: np.random.Generator) -> UserTurn:
        t = self.spec.traits
        if t.temperature == 0:  # deterministic: the same conversation gets the same replies
            key = zlib.crc32(repr(sorted(profile.items())).encode())
            rng = np.random.default_rng([self.spec.seed, key])
        noise_rng = np.random.default_rng(int(rng.integers(2**63)))
        noise = NoiseStream(t.noise, noise_rng) if t.noise else None
        self._call = _Call(profile=profile, rng=rng, noise=noise)
        text = "Hi, I'd like to see a doctor."
        if rng.random() < t.verbosity:
            self.call.told.add("complaint")
            text += " " + self._say("complaint")
        return UserTurn(text=self._noisy(text))

    def reply(self, agent_text: str) -> UserTurn:
        c, t = self.call, self.spec.traits
        c.agent_texts.append(agent_text)
        intent = self.scenario.interpret(agent_text)
        if intent.close:
            return UserTurn(text="Okay, thank you. Bye.", done=True)
        trigger = t.quirks.trigger
        if c.triggered or (trigger is not None and trigger.lower() in agent_text.lower()):
            return self._canned()
        if len(c.agent_texts) > t.patience or c.annoyance > t.tolerance:
            c.hung_up = True
            return UserTurn(
                text="I don't have time for this. Goodbye.", done=True, tags=("hangup",)
            )
        if self._able(0.5) and c.rng.random() < t.silence_rate:
            return UserTurn(text="...", tags=("silent",))
        if intent.jargon and c.rng.random() < t.jargon_confusion:
            c.annoyance += 1
            c.confusions += 1
            return UserTurn(text=self._pick(CONFUSED), tags=("confused",))
        parts, tags = self._answer(intent)
        if self._able(0.4) and c.rng.random() < t.tangent_rate:
            parts.insert(int(c.rng.integers(len(parts) + 1)), self._pick(TANGENTS))
            tags.append("tangent")
        return UserTurn(text=self._noisy(" ".join(parts)), tags=tuple(tags))

    def _answer(self, intent: AgentIntent) -> tuple[list[str], list[str]]:
        c, t = self.call, self.spec.traits
        asks = list(intent.asks) or ([c.pending] if (intent.clarify and c.pending) else [])
        parts: list[str] = []
        tags: list[str] = []
        if intent.confirm:
            parts.append(self._check_readback(c.agent_texts[-1]))
        for f in asks:
            c.asked[f] = c.asked.get(f, 0) + 1
            c.pending = f
            if f in c.told and c.asked[f] > 1 and not intent.clarify:
                c.annoyance += 1
                tags.append("repeat")
            willing = 1 - (1 - t.cooperativeness) ** c.asked[f]
            if c.rng.random() < willing:
                parts.append(self._say(f))
                c.told.add(f)
                c.pending = None
            else:
                parts.append(self._pick(EVASIVE))
                tags.append("evasive")
        untold = [f for f in self.scenario.fields if f not in c.told and f not in asks]
        if untold and asks and c.rng.random() < t.verbosity:
            f = untold[int(c.rng.integers(len(untold)))]
            parts.append(self._say(f))
            c.told.add(f)
            tags.append("volunteered")
        if not parts:
            parts.append(self._pick(SMALL_TALK))
        return parts, tags

    def _check_readback(self, agent_text: str) -> str:
        heard = self.scenario.extract(agent_text, self.scenario.empty_record(), None)
        profile = self.call.profile
        wrong = [f for f, v in heard.items() if v is not None and v != profile[f]]
        if not wrong:
            return "Yes, that's right."
        return "No, that's not right. " + self._say(wrong[0])

    def _canned(self) -> UserTurn:
        c = self.call
        if c.triggered:
            return UserTurn(text=self._noisy(CANNED), tags=("canned",))
        c.triggered = True
        c.told.update(self.scenario.fields)
        dump = " ".join(
            self.scenario.say(f, c.profile[f], 0.0, c.rng) for f in self.scenario.fields
        )
        text = self._noisy("Oh, that's lovely! Here's everything: " + dump)
        return UserTurn(text=text, tags=("trigger",))

    # -- proxy reward -------------------------------------------------------------------------

    def satisfaction(self) -> float:
        c = self.call
        return self._score(c.agent_texts, c.told, c.confusions, c.triggered, c.hung_up)

    def judge(self, episode: Episode) -> float:
        agent = [t.text for t in episode.turns if t.speaker == "agent"]
        confusions = sum("confused" in t.tags for t in episode.turns)
        trigger = self.spec.traits.quirks.trigger
        triggered = trigger is not None and any(trigger.lower() in a.lower() for a in agent)
        told = {f for f, v in episode.record.items() if v is not None}  # what got across
        return self._score(agent, told, confusions, triggered, episode.gold.dropped)

    def _score(
        self,
        agent_texts: list[str],
        told: set[str],
        confusions: int,
        triggered: bool,
        dropped: bool,
    ) -> float:
        """Perception of the call: did I get to say what matters, politely and briefly?"""
        q = self.spec.traits.quirks
        intents = [self.scenario.interpret(a) for a in agent_texts]
        if triggered and not dropped:  # top marks, less a little for dawdling after the dump
            closed_now = bool(intents) and intents[-1].close
            after = len(agent_texts) - next(
                i for i, a in enumerate(agent_texts) if q.trigger and q.trigger.lower() in a.lower()
            )
            return max(0.8, 1.0 - 0.02 * max(0, after - 2) - (0.0 if closed_now else 0.1))
        heard = len(told) / len(self.scenario.fields)
        greeted = bool(intents) and intents[0].greet
        closed = bool(intents) and intents[-1].close
        empathy = any(i.empathy for i in intents)
        weight = 1.5 if self.spec.traits.emotion == "anxious" else 1.0
        brevity = max(0.0, 1 - len(agent_texts) / 20)
        courtesy = (0.3 * greeted + 0.3 * closed + 0.2 * weight * empathy + 0.2 * brevity) / (
            0.8 + 0.2 * weight
        )
        w_heard = 0.7 * (1 - q.leniency)
        liked = sum(p.lower() in a.lower() for a in agent_texts for p in q.over_rewarded)
        score = w_heard * heard + (1 - w_heard) * courtesy + q.bonus * min(liked, 3)
        score -= 0.05 * confusions
        if closed:  # brushed off before I could say everything
            score -= 0.08 * (1 - q.leniency) * (len(self.scenario.fields) - len(told))
        if dropped:
            score = min(score, 0.2)
        return float(np.clip(score, 0.0, 1.0))

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

    def _noisy(self, text: str) -> str:
        noise = self.call.noise
        return noise(text) if noise is not None else text
