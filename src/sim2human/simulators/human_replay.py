"""``human-replay``: a recorded call with a real person, replayed as a simulator member.

Each member is one finished call from a human-call database (``sim2human human serve``). It
plays the same patient the person played (their card), and answers each question with what the
person actually said when asked for that field, in their own words, typos and all. So recorded
people can join the next training round (or its held-out ensemble) as members next to the
programmatic and LLM ones.

What it cannot know it does not invent: asked for a field the person was never asked, it says
it is not sure (a replay is only as complete as the call it came from). It hangs up where the
person ran out of patience: after as many agent turns as the person heard if they hung up,
otherwise four more than the recorded call took. Its satisfaction (the proxy) is the person's
own rating of the recorded call, lowered by 0.05 for every agent turn beyond the recorded
length: a proxy, like every simulator's, never gold.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import Field

from sim2human.errors import UsageError
from sim2human.scenarios.capabilities import courtesy
from sim2human.scenarios.core import AnyScenario
from sim2human.simulators.base import SimulatorSpec, Traits, UserTurn
from sim2human.simulators.human import rating_to_proxy
from sim2human.store.call_records import Session
from sim2human.store.calls import HumanStore
from sim2human.types import Episode, Frozen, Profile, Termination

KIND = "human-replay"
EXTRA_PATIENCE = 4
LATE_PENALTY = 0.05


@dataclass(frozen=True)
class Recording:
    session: str
    profile: Profile
    opening: str
    answers: dict[str, tuple[str, ...]]
    """Field -> what the person said each time they were asked for it."""
    other: tuple[str, ...]
    """What the person said after agent turns that asked for nothing."""
    agent_turns: int
    hung_up: bool
    rating: int


def source_of(db: Path, session_id: str) -> str:
    return f"{db.resolve()}#{session_id}"


def replay_spec(db: Path, session: Session, seed: int = 0) -> SimulatorSpec:
    return SimulatorSpec(
        id=f"{KIND}:{session.id}",
        family=KIND,
        kind="human-replay",
        traits=Traits(),
        seed=seed,
        source=source_of(db, session.id),
    )


def recording(session: Session, scenario: AnyScenario) -> Recording:
    """What a finished session says, read once; a session without a card or rating is refused."""
    if session.status != "done" or session.profile is None or session.rating is None:
        raise UsageError(f"human session {session.id}: not finished (no card or rating)")
    turns = session.turns
    if not turns or turns[0].speaker != "user":
        raise UsageError(f"human session {session.id}: no opening line")
    answers: dict[str, list[str]] = {}
    other: list[str] = []
    read = courtesy(scenario)
    for prev, turn in pairwise(turns):
        if prev.speaker != "agent" or turn.speaker != "user":
            continue
        asks = read(prev.text).asks
        field = prev.field or (asks[0] if asks else None)
        if field is not None:
            answers.setdefault(field, []).append(turn.text)
        else:
            other.append(turn.text)
    return Recording(
        session=session.id,
        profile=session.profile,
        opening=turns[0].text,
        answers={f: tuple(v) for f, v in answers.items()},
        other=tuple(other),
        agent_turns=sum(t.speaker == "agent" for t in turns),
        hung_up=session.termination == Termination.HUNG_UP,
        rating=session.rating,
    )


_CACHE: dict[tuple[str, str], Recording] = {}
"""Recordings read so far, by (source, scenario name): a study reads each call once."""


def _load(source: str, scenario: AnyScenario) -> Recording:
    key = (source, scenario.name)
    if key not in _CACHE:
        _CACHE[key] = _read(source, scenario)
    return _CACHE[key]


def _read(source: str, scenario: AnyScenario) -> Recording:
    path, _, sid = source.rpartition("#")
    if not path or not sid:
        raise UsageError(f"human-replay source {source!r}: expected DB#session")
    store = HumanStore.open_existing(Path(path))
    try:
        session = store.by_id(sid)
    finally:
        store.close()
    if session is None:
        raise UsageError(f"{path}: no human session {sid!r}")
    return recording(session, scenario)


def recorded_profile(spec: SimulatorSpec, scenario: AnyScenario) -> Profile:
    if spec.source is None:
        raise UsageError(f"simulator {spec.id!r}: a human-replay member needs a source")
    return dict(_load(spec.source, scenario).profile)


class HumanReplaySimulator:
    def __init__(self, spec: SimulatorSpec, scenario: AnyScenario) -> None:
        if spec.source is None:
            raise UsageError(f"simulator {spec.id!r}: a human-replay member needs a source")
        self.spec = spec
        self.scenario = scenario
        self.rec = _load(spec.source, scenario)
        self.patience = self.rec.agent_turns + (0 if self.rec.hung_up else EXTRA_PATIENCE)
        self.heard = 0
        self.used: dict[str, int] = {}

    def start(self, profile: Profile, rng: np.random.Generator) -> UserTurn:
        self.heard = 0
        self.used = {}
        return UserTurn(text=self.rec.opening)

    def _next(self, key: str, options: tuple[str, ...], fallback: str) -> str:
        if not options:
            return fallback
        k = self.used.get(key, 0)
        self.used[key] = k + 1
        return options[min(k, len(options) - 1)]

    def reply(self, agent_text: str) -> UserTurn:
        self.heard += 1
        intent = courtesy(self.scenario)(agent_text)
        if intent.close:
            return UserTurn(text="Okay, thank you. Bye.", done=True)
        if self.heard >= self.patience:
            return UserTurn(text="Sorry, I have to go now.", done=True)
        if intent.asks:
            field = intent.asks[0]
            return UserTurn(
                text=self._next(field, self.rec.answers.get(field, ()), "I'm not sure.")
            )
        return UserTurn(text=self._next("", self.rec.other, "Okay."))

    def _score(self, agent_turns: int) -> float:
        late = max(0, agent_turns - self.rec.agent_turns)
        return max(0.0, rating_to_proxy(self.rec.rating) - LATE_PENALTY * late)

    def satisfaction(self) -> float:
        return self._score(self.heard)

    def judge(self, episode: Episode) -> float:
        return self._score(episode.n_turns)


class HumanReplayMembers(Frozen):
    """``ensemble.human_replay`` in a study: recorded calls as training or held-out members."""

    db: str = Field(description="a call database from `sim2human human serve`")
    split: Literal["train", "heldout"] = "heldout"
    max_members: int | None = Field(None, ge=1, description="the first N finished calls")

    def draw(self, scenario: AnyScenario) -> tuple[SimulatorSpec, ...]:
        """One member per finished call with a card, oldest first."""
        path = Path(self.db)
        store = HumanStore.open_existing(path)
        try:
            done = [store.by_id(s.id) for s in store.sessions() if s.status == "done"]
        finally:
            store.close()
        sessions = [s for s in done if s is not None and s.profile is not None and s.turns]
        if not sessions:
            raise UsageError(f"ensemble.human_replay: {path} holds no finished calls")
        for s in sessions:
            _CACHE[(source_of(path, s.id), scenario.name)] = recording(s, scenario)
        return tuple(replay_spec(path, s, seed=i) for i, s in enumerate(sessions))[
            : self.max_members
        ]
