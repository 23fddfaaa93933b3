"""A slot-filling caller's moves (``core.UserMoves``): the users of every scenario on the slot
kit (intake, the pizza order, scenario files such as ``support``), whoever plays them.

What a caller does with an agent turn: it answers the fields asked (more willingly each time one
is asked again; a field that does not apply to it gets a brush-off and annoys it, and so does a
question it already answered), checks a read-back (fields read back right got across; the
first one read back wrong is corrected, said again carefully, as is an answer repeated because
it got garbled), now and then volunteers one more field (``verbosity``) or wanders off mid-answer
(``tangent_rate``), and fills an empty turn with small talk. Its blind spot (``concede``: the
persona's trigger) reels off every field at once; after that it only repeats a canned line.

Its progress is what got across: the share of its fields whose value its own noisy line states
right (the scenario's reading of the line as it came out, ``heard``), or the agent read back
right. Its goal needs a proper close too (``Progress.needs_close``): everything across, and the
agent says goodbye.

The persona around it keeps what is generic (patience, tolerance, silence, confusion at jargon,
noise, tastes, courtesy, hanging up) and draws from the same random stream between its moves.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from sim2human.scenarios.core import Progress, UserMove, UserTraits
from sim2human.scenarios.voice import Voice
from sim2human.types import Profile, Record, Value


class Intent(Protocol):
    """What a caller reads of an agent turn (``slots.AgentIntent`` is one)."""

    @property
    def asks(self) -> tuple[str, ...]: ...

    @property
    def confirm(self) -> bool: ...

    @property
    def clarify(self) -> bool: ...


class SlotSpeaker(Protocol):
    """The slot members a caller reads its scenario with (``slots.SlotScenario`` has them)."""

    @property
    def voice(self) -> Voice: ...

    def empty_record(self) -> Record: ...

    def extract(self, user_text: str, record: Record, expecting: str | None) -> Record: ...

    def interpret(self, agent_text: str) -> Intent: ...

    def say(self, field: str, value: Value, capacity: float, rng: np.random.Generator) -> str: ...


def progress(across: int, fields: int) -> Progress:
    """A caller's progress: ``across`` of its ``fields`` got across (met only once closed)."""
    return Progress(across / fields, across == fields, needs_close=True, missing=fields - across)


class SlotCaller:
    """One caller in one call (see the module docstring). ``fields``: those that apply to
    ``profile``, in the scenario's order."""

    def __init__(
        self,
        scenario: SlotSpeaker,
        profile: Profile,
        fields: tuple[str, ...],
        traits: UserTraits,
        rng: np.random.Generator,
    ) -> None:
        self.scenario = scenario
        self.lines = scenario.voice.user
        self.profile = profile
        self.fields = fields
        self.traits = traits
        self.rng = rng
        self.told: set[str] = set()
        """Fields the caller has said (whether or not they got across the line)."""
        self.across: set[str] = set()
        """Fields whose value got across: the caller's own (noisy) line states it correctly,
        or the agent read it back right. What a caller would feel was understood."""
        self.asked: dict[str, int] = {}
        self.pending: str | None = None
        """The field asked last and not answered yet (a clarify asks it again)."""
        self._said: list[str] = []
        self._expecting: str | None = None
        """The fields the last move states, and the field it answers: what ``heard`` reads."""

    def opening(self) -> UserMove:
        text = self.lines.opening
        said: list[str] = []
        first = self.lines.opening_field
        if (
            self.rng.random() < self.traits.verbosity
            and first is not None
            and first in self.profile
        ):
            said.append(first)
            text += " " + self._say(first)
        return self._move(text, said, None)

    def reply(self, agent_text: str) -> UserMove:
        intent = self.scenario.interpret(agent_text)
        parts, said, tags, annoyed = self._answer(intent, agent_text)
        if self.traits.capacity >= 0.4 and self.rng.random() < self.traits.tangent_rate:
            at = int(self.rng.integers(len(parts) + 1))
            parts.insert(at, self._pick(self.lines.tangents))
            tags.append("tangent")
        careful = "repeat-garbled" in tags or "corrected" in tags
        expecting = intent.asks[0] if intent.asks else self.pending
        return self._move(" ".join(parts), said, expecting, tuple(tags), annoyed, careful)

    def concede(self, agent_text: str, again: bool) -> UserMove | None:
        """Everything at once, in the plainest words (and from then on a canned line)."""
        if again:
            return self._move(self.lines.canned, [], None, ("canned",))
        fields = list(self.fields)
        dump = " ".join(self.scenario.say(f, self.profile[f], 0.0, self.rng) for f in fields)
        return self._move(self.lines.trigger + dump, fields, None, ("trigger",))

    def heard(self, line: str) -> None:
        """Notes which of the fields the last move stated got across ``line`` (the scenario's
        own reading of it states the caller's true value)."""
        said, self._said = self._said, []
        if not said:
            return
        self.told.update(said)
        heard = self.scenario.extract(line, self.scenario.empty_record(), self._expecting)
        for f in said:
            if heard[f] == self.profile[f]:
                self.across.add(f)
            else:
                self.across.discard(f)

    def progress(self) -> Progress:
        return progress(len(self.across), len(self.fields))

    def _move(
        self,
        text: str,
        said: list[str],
        expecting: str | None,
        tags: tuple[str, ...] = (),
        annoyed: int = 0,
        careful: bool = False,
    ) -> UserMove:
        self._said, self._expecting = said, expecting
        return UserMove(text, tags, annoyed=annoyed, careful=careful)

    def _answer(
        self, intent: Intent, agent_text: str
    ) -> tuple[list[str], list[str], list[str], int]:
        """The reply's sentences, the fields they state, tags describing it, and how many
        times the turn annoyed the caller."""
        asks = list(intent.asks) or ([self.pending] if (intent.clarify and self.pending) else [])
        parts: list[str] = []
        said: list[str] = []
        tags: list[str] = []
        annoyed = 0
        if intent.confirm:
            parts.extend(self._check_readback(agent_text, said, tags))
        for f in asks:
            self.asked[f] = self.asked.get(f, 0) + 1
            self.pending = f
            if f not in self.profile:  # a question that does not apply to this caller
                annoyed += 1
                self.pending = None
                parts.append(self._pick(self.lines.evasive))
                tags.append("not-applicable")
                continue
            if f in self.told and f not in self.across:
                tags.append("repeat-garbled")  # fair to ask again: it did not get across
            elif f in self.told and self.asked[f] > 1 and not intent.clarify:
                annoyed += 1
                tags.append("repeat")
            willing = 1 - (1 - self.traits.cooperativeness) ** self.asked[f]
            if self.rng.random() < willing:
                parts.append(self._say(f))
                said.append(f)
                self.pending = None
            else:
                parts.append(self._pick(self.lines.evasive))
                tags.append("evasive")
        untold = [f for f in self.fields if f not in self.told and f not in asks]
        if untold and asks and self.rng.random() < self.traits.verbosity:
            f = untold[int(self.rng.integers(len(untold)))]
            parts.append(self._say(f))
            said.append(f)
            tags.append("volunteered")
        if not parts:
            parts.append(self._pick(self.lines.small_talk))
        return parts, said, tags, annoyed

    def _check_readback(self, agent_text: str, said: list[str], tags: list[str]) -> list[str]:
        """Fields read back right got across; the first one read back wrong is corrected."""
        heard = self.scenario.extract(agent_text, self.scenario.empty_record(), None)
        mine = self.profile
        wrong = [f for f, v in heard.items() if v is not None and f in mine and v != mine[f]]
        self.across.update(f for f, v in heard.items() if v is not None and v == mine.get(f))
        if not wrong:
            return [self.lines.read_back_right]
        self.across.discard(wrong[0])
        said.append(wrong[0])
        tags.append("corrected")
        return [self.lines.read_back_wrong, self._say(wrong[0])]

    def _say(self, field: str) -> str:
        return self.scenario.say(field, self.profile[field], self.traits.capacity, self.rng)

    def _pick(self, options: tuple[str, ...]) -> str:
        """One of the first few ``options``: a caller of more words has more of them."""
        n = 1 + round(self.traits.capacity * (len(options) - 1))
        return options[int(self.rng.integers(n))]
