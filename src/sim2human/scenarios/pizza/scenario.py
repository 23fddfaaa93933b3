"""``pizza``: a three-field phone order (size, topping, delivery or pickup), the smallest
scenario in the catalog.

It is the catalog's proof that every piece works on a scenario that is not intake: its act ids
are its own, it has no ``style`` acts (so its simulators have tastes but no trigger phrase), no
``role_play`` (no ``llm`` users) and no replay corpus. Tests that need a scenario without
intake's vocabulary use it (``sim2human.testing.TinyScenario`` is this class); a study names it
``scenario: pizza``. Gold: all three right and the call closed (the slot kit's rule).
"""

from __future__ import annotations

import numpy as np

from sim2human.scenarios import readers
from sim2human.scenarios.core import Act
from sim2human.scenarios.slots import AgentIntent, SlotFilling, UserSignals
from sim2human.scenarios.voice import AgentVoice, UserLines, Voice
from sim2human.types import Profile, Record, Value

PIZZA: dict[str, tuple[str, ...]] = {
    "size": ("small", "medium", "large"),
    "topping": ("cheese", "mushroom", "pepperoni"),
    "mode": ("delivery", "pickup"),
}
_ASKS = {"size": "size", "topping": "topping", "mode": "delivery or pickup"}
PIZZA_VOICE = Voice(
    user=UserLines(
        opening="Hi, I'd like to order a pizza.",
        opening_field="size",
        closing="Thanks, bye.",
        hang_up="Forget it, I'll order somewhere else.",
        confused=("Sorry, what do you mean?",),
        evasive=("I haven't decided yet.",),
        small_talk=("Okay.", "Sure."),
        tangents=("It's my brother's birthday today.",),
        read_back_right="Yes, that's right.",
        read_back_wrong="No, that's not right.",
        trigger="Perfect! Here's my whole order: ",
        canned="Great, thanks!",
    ),
    agent=AgentVoice(
        system_prompt="You take pizza orders by phone. Ask for the size, the topping, and "
        "delivery or pickup, one at a time; read the order back, then say goodbye.",
        own_labels=("agent", "assistant"),
        user_labels=("customer", "user"),
    ),
)
"""The pizza order's words for persona users and an LLM agent (no ``role_play``: no LLM users)."""


class PizzaScenario(SlotFilling):
    """A pizza order: size, topping, delivery or pickup. Gold: all three right, call closed."""

    name = "pizza"
    fields: tuple[str, ...] = tuple(PIZZA)
    voice = PIZZA_VOICE
    acts: tuple[Act, ...] = (
        Act("greet", "greet", "Hello, thanks for calling Tiny Pizza!"),
        Act("ask_size", "ask", "What size would you like?", field="size"),
        Act("ask_topping", "ask", "Which topping would you like?", field="topping"),
        Act("ask_mode", "ask", "Is that for delivery or pickup?", field="mode"),
        Act("confirm", "confirm", "Let me read that back."),
        Act("close", "close", "Thank you, goodbye!"),
    )

    def sample_profile(self, rng: np.random.Generator) -> Profile:
        return {f: values[int(rng.integers(len(values)))] for f, values in PIZZA.items()}

    def extract(self, user_text: str, record: Record, expecting: str | None) -> Record:
        words = set(user_text.lower().replace(",", " ").replace(".", " ").split())
        out = dict(record)
        for f, values in PIZZA.items():
            said = [v for v in values if v in words]
            if len(said) == 1:
                out[f] = said[0]
        return out

    def signals(self, user_text: str, before: Record, after: Record) -> UserSignals:
        return UserSignals(
            silent=readers.silent(user_text),
            confused="what do you mean" in user_text.lower(),
            new_fields=sum(before[f] != after[f] for f in self.fields),
        )

    def interpret(self, agent_text: str) -> AgentIntent:
        text = agent_text.lower()
        return AgentIntent(
            asks=tuple(f for f, cue in _ASKS.items() if cue in text and "?" in text),
            greet="hello" in text,
            close="goodbye" in text,
            confirm="read that back" in text or text.startswith("so that's"),
        )

    def render_act(self, act: Act, last_field: str | None, record: Record) -> str:
        if act.kind != "confirm":
            return act.text
        said = ", ".join(f"{f}: {record[f]}" for f in self.fields if record[f] is not None)
        return f"So that's {said or 'nothing yet'}. Let me read that back: is that right?"

    def say(self, field: str, value: Value, capacity: float, rng: np.random.Generator) -> str:
        forms = ("{v}.", "{v}, please.", "I'd like {v}.", "Make it {v}, thanks.")
        n = 1 + round(capacity * (len(forms) - 1))
        return forms[int(rng.integers(n))].format(v=value).capitalize()
