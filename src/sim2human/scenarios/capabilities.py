"""The optional capabilities of a scenario, each read in one place with its default.

A scenario must have only the core's members (``scenarios.core.Scenario``). What a consumer
needs beyond them is a capability the scenario may declare; every consumer asks here rather
than probing the scenario itself, so a task of a new shape (a sealed-bid sale, a call router)
named as ``module:Name`` plays everywhere with the core alone, and a capability it lacks is
either a neutral default or one line naming the scenario and what it lacks (``Lacks``):

| capability | declared by | default off the slot kit |
|---|---|---|
| slot filling (fields, extract...) | ``slots.SlotScenario`` | ``slot_kit``: None, or refused |
| the users' moves | ``core.SuppliesMoves`` | refused: the persona has nothing to play |
| courtesy read off an agent turn | ``interpret`` -> ``slots.AgentIntent`` | nothing read |
| an act's words | ``core.RendersActs`` | the act's own text |
| the view as numbers | ``core.FeaturisesViews`` | ``ViewNumbers``: a dataclass view's fields |
| which gold leads | ``core.DeclaresGold`` | ``"success"`` (``core.headline_metric``) |
| task content in a user's line | ``core.ReadsUserContent`` | refused by the fidelity report |
| what an ``llm`` user is told | ``core.BriefsLLMUsers`` | refused: no ``llm`` users |
| act kinds past the core's | ``core.DeclaresActKinds`` | ``core.CORE_ACT_KINDS`` alone |
| its own quirk phrasings | ``quirk_pool``, ``quirks_shared`` | drawn from its acts; apart |

The reference agent's capabilities (``reference_plan``, ``reference_agent``, ``reference_act``)
are the agents' (``agents.scripted.reference_agent``), with the same refusal.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, TypeGuard

import numpy as np

from sim2human.errors import UsageError
from sim2human.scenarios.core import (
    CORE_ACT_KINDS,
    Act,
    DeclaresActKinds,
    FeaturisesViews,
    RendersActs,
    Scenario,
    SuppliesMoves,
    View,
)
from sim2human.scenarios.slots import AgentIntent, SlotScenario, SlotState, SlotUsers

CORE_MEMBERS = (
    "acts",
    "voice",
    "sample_profile",
    "initial_state",
    "hear_user",
    "hear_agent",
    "observe",
    "ending",
    "record",
    "grade",
)
"""What every scenario has (``core.Scenario``'s members; its ``name`` is whatever refers to it)."""
SLOT_MEMBERS = ("fields", "empty_record", "extract", "signals", "interpret", "render_act", "say")
"""What makes a scenario a slot-filling one (``slots.SlotScenario``'s members past the core)."""

NEUTRAL = AgentIntent()
"""How an agent turn reads to a scenario that reads no courtesy: neither greeting, nor closing,
nor empathy (the persona's manner stays where it started)."""


class Lacks(UsageError):
    """A consumer needs a capability the scenario does not declare: one line, exit 2."""

    def __init__(self, scenario: object, what: str, how: str) -> None:
        name = getattr(scenario, "name", type(scenario).__name__)
        super().__init__(f"scenario {name!r} has no {what}: {how}")


def is_slot_kit(scenario: object) -> TypeGuard[SlotScenario]:
    """Whether ``scenario`` is a slot-filling one: the one probe of the kit's members."""
    return all(hasattr(scenario, m) for m in SLOT_MEMBERS)


def slot_kit(scenario: object) -> SlotScenario | None:
    """``scenario`` as a slot-filling one, or None for a task of another shape."""
    return scenario if is_slot_kit(scenario) else None


def declared_quirks(scenario: object) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """The phrasings ``scenario`` says its users may over-reward and be triggered by
    (``quirk_pool``: liked, triggers, as a scenario file's ``quirks`` do), or None: drawn from
    its acts."""
    declared = getattr(scenario, "quirk_pool", None)
    if declared is None:
        return None
    liked, triggers = declared
    return tuple(liked), tuple(triggers)


def quirks_shared(scenario: object) -> bool:
    """Whether held-out families draw from the training members' quirk pool on purpose
    (``quirks_shared``); by default the two pools are disjoint."""
    return bool(getattr(scenario, "quirks_shared", False))


def need_slot_kit(scenario: object, what: str) -> SlotScenario:
    """``scenario`` as a slot-filling one, for ``what`` (a replayed visit read by the
    scenario's reader, a restyled caller...); else one line naming the scenario and what it
    lacks."""
    if is_slot_kit(scenario):
        return scenario
    raise Lacks(scenario, "slot-filling members", f"{what} needs {', '.join(SLOT_MEMBERS)}")


def fields(scenario: object) -> tuple[str, ...]:
    """The slots ``scenario`` fills; none for a task of another shape."""
    kit = slot_kit(scenario)
    return kit.fields if kit is not None else ()


def courtesy(scenario: object) -> Callable[[str], AgentIntent]:
    """How ``scenario`` reads an agent turn (greeting, closing, empathy, jargon): its
    ``interpret``, else ``NEUTRAL`` for every turn."""
    interpret = getattr(scenario, "interpret", None)
    if callable(interpret):
        return interpret  # type: ignore[no-any-return]
    return lambda _text: NEUTRAL


def user_moves(scenario: object) -> SuppliesMoves:
    """Who makes ``scenario``'s users' moves: the scenario itself, or the slot kit's callers."""
    if _supplies_moves(scenario):
        return scenario
    if is_slot_kit(scenario):
        return SlotUsers(scenario)
    raise Lacks(
        scenario,
        "users' moves",
        "give it user_moves(profile, traits, rng) and progress_of(profile, record) "
        "(sim2human.scenarios.core.SuppliesMoves)",
    )


def act_wording(scenario: object) -> Callable[[Act, View], str]:
    """An act's words in a call whose agent sees a view: the scenario's ``render``, the slot
    kit's ``render_act`` from the record and the field asked last, else the act's own text.
    Made once per agent (a runtime protocol ``isinstance`` per turn was ~5% of a rollout)."""
    if isinstance(scenario, RendersActs):
        return scenario.render
    kit = slot_kit(scenario)
    if kit is None:
        return lambda act, _view: act.text

    def slot_words(act: Act, view: View) -> str:
        if not isinstance(view, SlotState):
            raise TypeError(f"scenario {kit.name!r} words no act for a {type(view).__name__}")
        return kit.render_act(act, view.last_field, view.record)

    return slot_words


def say_act(scenario: object, act: Act, view: View) -> str:
    """The words of ``act`` in a call whose agent sees ``view`` (``act_wording``, made for one
    turn: an agent that speaks many keeps ``act_wording``'s function instead)."""
    return act_wording(scenario)(act, view)


def view_numbers(scenario: Scenario[Any]) -> FeaturisesViews | None:
    """``scenario``'s view as numbers for the policy network: its own ``featurise``; None for a
    slot-filling one without (the kit's featuriser is the agents', ``agents.features``); else
    ``ViewNumbers`` over the view it shows at the start of a call."""
    if isinstance(scenario, FeaturisesViews):
        return scenario
    if is_slot_kit(scenario):
        return None
    try:
        profile = scenario.sample_profile(np.random.default_rng(0))
        start = scenario.observe(scenario.initial_state(profile))
    except Exception as err:  # the user's code: one line, not a traceback
        raise Lacks(scenario, "view to describe", f"its first view failed: {err}") from None
    if not dataclasses.is_dataclass(start):
        raise Lacks(
            scenario,
            "featuriser for the policy network",
            f"its view is a {type(start).__name__}, not a dataclass: give it view_size and "
            "featurise(view, row) (sim2human.scenarios.core.FeaturisesViews)",
        )
    return ViewNumbers(tuple(f.name for f in dataclasses.fields(start) if f.name != "brief"))


@dataclasses.dataclass(frozen=True)
class ViewNumbers:
    """The default featuriser of a dataclass view: per field (the private brief aside) whether
    it is set (not None, not empty) and its value when a number or a bool, squashed into (-1, 1)
    as ``x / (1 + |x|)``. A scenario that knows better declares ``FeaturisesViews``."""

    names: tuple[str, ...]

    @property
    def view_size(self) -> int:
        return 2 * len(self.names)

    def featurise(self, view: View, row: np.ndarray) -> None:
        for k, name in enumerate(self.names):
            value = getattr(view, name, None)
            row[2 * k] = value is not None and value != () and value != ""
            if isinstance(value, bool):
                row[2 * k + 1] = value
            elif isinstance(value, int | float):
                row[2 * k + 1] = value / (1 + abs(value))


def act_kinds(scenario: object) -> tuple[str, ...]:
    """The kinds ``scenario``'s acts may have: the core's, then those it declares."""
    declared = scenario.act_kinds if isinstance(scenario, DeclaresActKinds) else ()
    return (*CORE_ACT_KINDS, *(k for k in declared if k not in CORE_ACT_KINDS))


def _supplies_moves(scenario: object) -> TypeGuard[SuppliesMoves]:
    """``isinstance(scenario, SuppliesMoves)``, as ``typing`` checks a runtime protocol of
    methods, without its cost (Python 3.11 works out the protocol's members again on every
    check, and every simulator of every call asks)."""
    return all(getattr(scenario, m, None) is not None for m in ("user_moves", "progress_of"))
