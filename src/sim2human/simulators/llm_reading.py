"""How an ``llm`` member follows its own call: the reminder each agent turn carries, what its
replies did, and its satisfaction by the persona rule (``judge: persona``).

Two readings, chosen by what the scenario supplies (a slot scenario supplies moves and progress
too, but its reading is the slot one):

- ``CoreReading``, for a scenario off the slot kit with its own progress measure
  (``core.SuppliesMoves``): the member keeps the scenario's state as the conversation does
  (``initial_state``, ``hear_agent`` with the agent's words, ``hear_user`` with its own line as
  spoken, noise and all), and its
  satisfaction is the persona's rule over the scenario's progress (``progress_of`` the state's
  record), as for a persona of that scenario. A reply the state reads as ending the call (a
  camper's "Deal, I accept") ends it. The core has no confusion signal, so none is counted.
- ``SlotReading``, for the slot kit: what got across, field by field, through the scenario's
  extractor over the reply (the reading every slot scenario's LLM users have always had).

``unsupported`` says why a scenario cannot have ``llm`` users at all, for the study's loader.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sim2human.scenarios.capabilities import SLOT_MEMBERS, is_slot_kit, need_slot_kit
from sim2human.scenarios.catalog import get_scenario
from sim2human.scenarios.core import AnyScenario, BriefsLLMUsers, SuppliesMoves
from sim2human.scenarios.slots import SlotScenario, applicable_fields, corrects, keep_answers
from sim2human.scenarios.voice import RolePlay
from sim2human.simulators.llm_prompts import slot_hint
from sim2human.simulators.persona import PersonaSimulator
from sim2human.types import Profile, Record


def refuse_llm_users(name: str) -> None:
    """A ValueError (for a study's loader) when the scenario ``name`` cannot have llm users."""
    if (why := unsupported(get_scenario(name))) is not None:
        raise ValueError(f"scenario {name!r} cannot have llm users: {why}")


def unsupported(scenario: object) -> str | None:
    """Why ``scenario`` cannot have ``llm`` users (None: it can)."""
    voice = getattr(scenario, "voice", None)
    if voice is None or voice.role_play is None:
        return "it has no voice for llm users (voice.role_play)"
    if isinstance(scenario, SuppliesMoves) and not is_slot_kit(scenario):
        if not isinstance(scenario, BriefsLLMUsers):
            return "it does not say what they are told (user_side and user_hint)"
        if not hasattr(scenario, "interpret"):
            return "it does not read the agent's courtesy (interpret)"
        return None
    missing = [m for m in SLOT_MEMBERS if not hasattr(scenario, m)]
    if missing:
        return (
            f"it is not on the slot kit (no {', '.join(missing)}) and has no progress measure "
            "(user_moves and progress_of)"
        )
    return None


@dataclass(frozen=True)
class _Said:
    """An agent's words as a user hears them (no act, no field: only the text)."""

    text: str
    act: str | None = None
    field: str | None = None


@dataclass
class SlotReading:
    """The slot kit's reading (see the module docstring)."""

    scenario: SlotScenario
    rp: RolePlay
    profile: Profile
    heard: Record = field(init=False)
    answered: frozenset[str] = frozenset()
    confusions: int = 0
    read_back: bool = False
    """The agent's last turn read the record back (the caller may then correct any answer)."""

    def __post_init__(self) -> None:
        self.heard = self.scenario.empty_record()

    def hint(self, agent_text: str, asks: tuple[str, ...]) -> str:
        return slot_hint(self.rp, asks, self.profile)

    def hear_agent(self, agent_text: str) -> None:
        self.read_back = self.scenario.interpret(agent_text).confirm

    def hear_user(self, said: str, spoken: str, asks: tuple[str, ...]) -> tuple[str, ...]:
        """Reads ``said`` (the reply before line noise) as the answer to the turn's first ask."""
        before, asking = self.heard, (asks[0] if asks else None)
        heard = self.scenario.extract(said, before, asking)
        self.heard, self.answered = keep_answers(
            before,
            heard,
            self.answered,
            asking,
            asked_now=bool(asks) or self.read_back,
            correcting=corrects(said),
        )
        if self.scenario.signals(said, before, self.heard).confused:
            self.confusions += 1
            return ("confused",)
        return ()

    def ended(self) -> bool:
        return False

    def score(self, rule: PersonaSimulator, agent_texts: list[str], hung_up: bool) -> float:
        p = self.profile
        across = {f for f, v in self.heard.items() if v is not None and v == p.get(f)}
        n = len(applicable_fields(self.scenario, p))
        return rule.score_texts(agent_texts, across, self.confusions, hung_up, n)


@dataclass
class CoreReading:
    """The scenario core's reading (see the module docstring)."""

    scenario: AnyScenario
    profile: Profile
    state: object = field(init=False)

    def __post_init__(self) -> None:
        self.state = self.scenario.initial_state(self.profile)

    def _core(self) -> SuppliesMoves:
        assert isinstance(self.scenario, SuppliesMoves)
        return self.scenario

    def hint(self, agent_text: str, asks: tuple[str, ...]) -> str:
        assert isinstance(self.scenario, BriefsLLMUsers)
        return self.scenario.user_hint(self.profile, agent_text)

    def hear_agent(self, agent_text: str) -> None:
        self.state = self.scenario.hear_agent(self.state, _Said(agent_text))

    def hear_user(self, said: str, spoken: str, asks: tuple[str, ...]) -> tuple[str, ...]:
        """Hears ``spoken`` (the line as the agent hears it), as the conversation does."""
        self.state = self.scenario.hear_user(self.state, spoken)
        return ()

    def ended(self) -> bool:
        return self.scenario.ending(self.state, user_left=False) is not None

    def score(self, rule: PersonaSimulator, agent_texts: list[str], hung_up: bool) -> float:
        record = self.scenario.record(self.state)
        progress = self._core().progress_of(self.profile, record)
        return rule.score_texts(agent_texts, set(), 0, hung_up, progress=progress)


Reading = SlotReading | CoreReading


def reading(scenario: AnyScenario, rp: RolePlay, profile: Profile) -> Reading:
    """The reading ``scenario`` gives its ``llm`` users (see the module docstring)."""
    if isinstance(scenario, SuppliesMoves) and not is_slot_kit(scenario):
        return CoreReading(scenario, profile)
    return SlotReading(need_slot_kit(scenario, "an llm user's reading"), rp, profile)
