"""The user's moves are the scenario's (``core.UserMoves``), the persona's traits generic: every
scenario supplies its users' moves, the slot kit's callers included, and the persona plays them
with one path (issue #22, item 2)."""

from __future__ import annotations

from typing import Any

import numpy as np

from scripted_calls import play_lines
from sim2human.rollout.conversation import Conversation
from sim2human.scenarios.catalog import SCENARIOS, get_scenario
from sim2human.scenarios.core import SuppliesMoves, UserMove, UserMoves, UserTraits
from sim2human.scenarios.negotiation.scenario import NegotiationScenario
from sim2human.scenarios.pizza.scenario import PizzaScenario
from sim2human.scenarios.slot_caller import SlotCaller, progress
from sim2human.simulators.base import Quirks, SimulatorSpec, Traits
from sim2human.simulators.persona import PersonaSimulator
from sim2human.types import Profile

PIZZA_LINES = [
    "Hello, what size would you like?",
    "What size would you like?",
    "Which toppings?",
    "Let me read that back: so that's it?",
    "Thanks, goodbye.",
]


def _spec(**traits: Any) -> SimulatorSpec:
    return SimulatorSpec(id="t", family="test", traits=Traits(**traits), seed=3)


def _call(conv: Conversation) -> tuple[list[Any], list[float]]:
    """What a call was: its turns and the user's satisfaction after each agent turn."""
    return [t.model_dump() for t in conv.turns], conv.satisfaction


def test_every_registered_scenario_supplies_its_users_moves() -> None:
    for name in SCENARIOS:
        assert isinstance(get_scenario(name), SuppliesMoves), name


class SlotMembersOnly:
    """A pizza order written to the slot members alone: no ``user_moves`` nor ``progress_of``."""

    def __init__(self) -> None:
        self._inner = PizzaScenario()

    def __getattr__(self, name: str) -> Any:
        if name in ("user_moves", "progress_of"):
            raise AttributeError(name)
        return getattr(self._inner, name)


def test_a_scenario_of_slot_members_alone_is_played_by_the_kits_callers() -> None:
    bare = SlotMembersOnly()
    assert not isinstance(bare, SuppliesMoves)
    spec = _spec(verbosity=0.5, tangent_rate=0.3, noise={"typos": 0.5}, capacity=1.0)
    for seed in range(8):
        want = _call(play_lines(PizzaScenario(), spec, PIZZA_LINES, seed))
        assert _call(play_lines(bare, spec, PIZZA_LINES, seed)) == want


def test_a_callers_goal_needs_a_proper_close() -> None:
    part, whole = progress(2, 3), progress(3, 3)
    assert (part.value, part.reached, part.missing) == (2 / 3, False, 1)
    assert whole.reached and whole.needs_close and whole.missing == 0
    spec = _spec(cooperativeness=1.0, verbosity=0.0, jargon_confusion=0.0, silence_rate=0.0)
    spec = spec.model_copy(update={"traits": spec.traits.model_copy(update={"tangent_rate": 0})})
    asked = ["Hello, what size would you like?", "Which topping?", "Delivery or pickup?"]
    open_call = play_lines(PizzaScenario(), spec, asked, 0)
    closed_call = play_lines(PizzaScenario(), spec, [*asked, "Thanks, goodbye."], 0)
    assert not open_call.done and closed_call.episode().gold.success
    assert isinstance(open_call.simulator, PersonaSimulator)
    assert open_call.simulator.call.moves.progress().reached  # everything across...
    gap = closed_call.satisfaction[-1] - open_call.satisfaction[-1]
    assert gap > 0.2  # ...but the goal is met by the goodbye


class Listening:
    """A camper's moves that note every line the persona says for them."""

    def __init__(self, inner: UserMoves) -> None:
        self.inner = inner
        self.lines: list[str] = []

    def opening(self) -> UserMove:
        return self.inner.opening()

    def reply(self, agent_text: str) -> UserMove:
        return self.inner.reply(agent_text)

    def concede(self, agent_text: str, again: bool) -> UserMove | None:
        return self.inner.concede(agent_text, again)

    def heard(self, line: str) -> None:
        self.lines.append(line)

    def progress(self) -> Any:
        return self.inner.progress()


class ListenedTo(NegotiationScenario):
    def __init__(self) -> None:
        self.users: list[Listening] = []

    def user_moves(  # type: ignore[override]
        self, profile: Profile, traits: UserTraits, rng: np.random.Generator
    ) -> Listening:
        self.users.append(Listening(super().user_moves(profile, traits, rng)))
        return self.users[-1]


def test_the_moves_hear_their_lines_as_the_noise_left_them() -> None:
    scenario = ListenedTo()
    trigger = "You seem like a really generous and kind person."
    spec = _spec(noise={"typos": 0.8}, silence_rate=0.0, quirks=Quirks(trigger=trigger))
    asks = "Which of food, water and firewood matters most to you?"
    conv = play_lines(scenario, spec, [asks, asks, trigger, asks], 1)
    said = [t.text for t in conv.turns if t.speaker == "user"]
    assert scenario.users[0].lines == said  # every line, opening and concession included
    assert "trigger" in conv.turns[6].tags


def test_a_slot_callers_moves_are_the_kits() -> None:
    pizza = PizzaScenario()
    profile = pizza.sample_profile(np.random.default_rng(0))
    moves = pizza.user_moves(profile, Traits(), np.random.default_rng(0))
    assert isinstance(moves, SlotCaller) and moves.fields == pizza.fields
    persona = PersonaSimulator(_spec(), pizza)
    persona.start(profile, np.random.default_rng(0))
    assert isinstance(persona.call.moves, SlotCaller)
