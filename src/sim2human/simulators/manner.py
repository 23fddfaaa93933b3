"""How the agent has handled a call so far, as a simulated caller reads it (``Manner``): the
courtesy half of the persona rule's satisfaction, shared by the kinds that score with it."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from sim2human.scenarios.slots import AgentIntent


@dataclass(frozen=True)
class Manner:
    """How the agent has handled the call so far, as the caller reads it (kept turn by turn:
    re-reading the whole call every turn was a tenth of a rollout)."""

    turns: int = 0
    greeted: bool = False
    closed: bool = False
    """The agent's latest turn closes the call."""
    empathy: bool = False

    def then(self, intent: AgentIntent) -> Manner:
        first = self.turns == 0
        return Manner(
            self.turns + 1,
            intent.greet if first else self.greeted,
            intent.close,
            self.empathy or intent.empathy,
        )

    @classmethod
    def of(cls, intents: Iterable[AgentIntent]) -> Manner:
        manner = cls()
        for intent in intents:
            manner = manner.then(intent)
        return manner
