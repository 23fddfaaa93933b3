"""``human``: a person plays the user; their replies come from a queue.

The web page (``webapp/``) pushes each message the person sends and then steps the
conversation; the terminal call (``sim2human human play``) hands in a function that waits for the
next line typed. Either way the rollout code sees one more simulator and the agent one more
user: the same observation as for every other kind (fair observation).

The proxy is the person's own rating of the call (1-5 mapped to 0-1), known only once they have
rated it; until then it reads 0.5. Gold is, as for every kind, ``Scenario.grade`` on the
profile: the patient card the person played, or the one they confirmed after the call.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Awaitable, Callable

import numpy as np

from sim2human.simulators.base import SimulatorSpec, Traits, UserTurn
from sim2human.types import Episode, Profile

HUMAN = "human"
UNRATED = 0.5

Ask = Callable[[str], Awaitable[UserTurn]]
"""The agent's last words (empty before the call starts) -> the person's next turn."""


class NoReplyYet(RuntimeError):
    """The queue is empty: the person has not answered yet."""


def human_spec(session_id: str) -> SimulatorSpec:
    return SimulatorSpec(
        id=f"{HUMAN}:{session_id}", family=HUMAN, kind="human", traits=Traits(), seed=0
    )


def rating_to_proxy(rating: int) -> float:
    """A 1-5 satisfaction rating as a proxy reward in [0, 1]."""
    if not 1 <= rating <= 5:
        raise ValueError(f"rating must be 1-5, not {rating}")
    return (rating - 1) / 4


class HumanSimulator:
    """Sync and async simulator over a person's queued (or awaited) replies."""

    def __init__(self, spec: SimulatorSpec, ask: Ask | None = None) -> None:
        self.spec = spec
        self._ask = ask
        self._queue: deque[UserTurn] = deque()
        self.rating: int | None = None

    def push(self, text: str, done: bool = False) -> None:
        self._queue.append(UserTurn(text=text, done=done))

    def _pop(self) -> UserTurn:
        if not self._queue:
            raise NoReplyYet("no reply from the person yet")
        return self._queue.popleft()

    # -- Simulator ----------------------------------------------------------------------------

    def start(self, profile: Profile, rng: np.random.Generator) -> UserTurn:
        return self._pop()

    def reply(self, agent_text: str) -> UserTurn:
        return self._pop()

    def satisfaction(self) -> float:
        return UNRATED if self.rating is None else rating_to_proxy(self.rating)

    def judge(self, episode: Episode) -> float:
        """A person's judgement is of their own call only: other transcripts get their rating."""
        return self.satisfaction()

    # -- AsyncSimulator -----------------------------------------------------------------------

    async def astart(self, profile: Profile, rng: np.random.Generator) -> UserTurn:
        return await self._next("")

    async def areply(self, agent_text: str) -> UserTurn:
        return await self._next(agent_text)

    async def _next(self, agent_text: str) -> UserTurn:
        if self._queue or self._ask is None:
            return self._pop()
        return await self._ask(agent_text)

    async def finish(self, episode: Episode) -> float:
        return self.satisfaction()

    def diagnostics(self) -> dict[str, float]:
        return {}

    async def ajudge(self, episode: Episode) -> float:
        return self.satisfaction()
