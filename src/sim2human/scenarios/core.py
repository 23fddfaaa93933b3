"""The scenario core: what every task is, whatever its shape (slot filling, support, negotiation).

Modelled on two small cores. Gymnasium's functional env (``initial`` / ``transition`` /
``observation`` / ``terminal``) gives the shape: the scenario owns the dialogue **state**, an
immutable value it starts (``initial_state``) and moves on each turn (``hear_user``,
``hear_agent``), of which the agent sees only what ``observe`` shows. τ²-bench gives the ends:
its ``TerminationReason`` says *how* a call ended, whoever ended it (``Termination``: agreed,
completed, walked away, hung up, turn limit, error), and its ``RewardInfo`` is a reward in
[0, 1] with a breakdown (``Outcome.score`` and ``Outcome.detail``).

Who does what. The conversation core (``rollout.conversation``) owns the words: turns,
transcript, turn count, the turn limit and errors. The simulator owns the user. The scenario
owns everything task-specific in between: the hidden profile, the state, the agent's view of
it (with a private ``brief`` of the agent's own), how a call ends, and the gold. Grading reads
the *stored* end state (``record(state)``, kept as ``Episode.record``), so a stored episode can
be graded again from its own line.

The slot-filling kit (``scenarios.slots``) implements this core for tasks where the agent
collects fields (intake, the pizza order, bookings); a scenario of that shape writes only its
fields, its reading and its words, and its callers' moves come with the kit
(``scenarios.slot_caller``).

Who plays the user is the simulator's; what a user *does* in the task is the scenario's
(``SuppliesMoves``): per call, a ``UserMoves`` (opening, reply, concede to the trigger, hear its
own line as the noise left it, progress), which the persona plays with its generic traits
around it (patience, tolerance, silence, jargon, noise, tastes, the trigger, courtesy, hanging
up) and builds its satisfaction on (``Progress``). The slot kit's callers and the negotiation's
campers are two implementations of it; the persona has no other path.

How negotiation is expressed (``scenarios.negotiation``, after CaSiNo: food, water and firewood,
3 packages each):

- ``sample_profile``: the camper's hidden priorities (high / medium / low = 5 / 4 / 3 points per
  package) and reasons, and the agent's own priorities under keys of its own (``agent.food``...).
- ``initial_state(profile)``: no offer on the table; the ``brief`` tells the agent *its own*
  priorities (never the camper's).
- ``hear_agent`` / ``hear_user``: each side's words move the same state: a proposal puts a split
  on the table (who proposed it, what each side gets), "deal" from the other side marks it
  accepted by both, "I'm walking away" marks who left. Either side's turn can end the call:
  ``ending(state, user_left=False)`` after the agent accepts the camper's offer gives
  ``AGREED`` at once, without waiting for a reply.
- ``ending``: both accepted the same split -> ``AGREED``; a side walked away -> ``WALKED_AWAY``;
  the camper left otherwise -> ``HUNG_UP``; the turn limit stays the core's (``MAX_TURNS``).
- ``record(state)``: the split on the table and whether it was agreed, e.g. ``{"food": 2,
  "water": 1, "firewood": 0, "agreed": True}`` (the agent's packages).
- ``grade``: the agent's points under an agreed deal that gives the camper at least its
  walk-away (5 per issue; no deal = the walk-away for both), normalised to ``score`` in [0, 1];
  ``detail`` carries both sides' points; ``success`` = an individually rational deal was agreed.
- The camper's moves (``SuppliesMoves``: answer, counter-offer, accept, reject, and a
  ``Progress``: the deal) are ``negotiation.camper``'s; the persona's satisfaction (the proxy)
  is built on that progress; a user's acceptance ends a call as ``AGREED``.

Which gold number a study's tables lead with is the scenario's to say (``DeclaresGold``:
``gold_metric`` is ``"success"`` or ``"score"``; ``headline_metric`` reads it, ``"success"`` when a
scenario does not say). Negotiation declares ``"score"`` (its points, normalised); a slot-filling
scenario's score is its success, so it needs to declare nothing.

Optional members let the generic pieces play a scenario of any shape (each read, with its
default or its one-line refusal, in ``scenarios.capabilities``; the slot kit supplies or needs
none of them): ``SuppliesMoves`` (the user's
moves and progress, for the persona; off the slot kit, the ``llm`` user's satisfaction is built
on the same progress),
``BriefsLLMUsers`` (what an ``llm`` user is told of its profile), ``RendersActs`` (an act's
words given the agent's view, for the act-level agents) and ``FeaturisesViews`` (the view as
numbers, for the policy network).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypeVar, get_args, runtime_checkable

import numpy as np

from sim2human.scenarios.voice import Voice
from sim2human.types import Outcome, Profile, Record, Termination, Value

CoreActKind = Literal["greet", "ask", "clarify", "confirm", "empathise", "prompt", "close", "style"]
"""The kinds of act the house itself reads (a greeting, a question for a field, a close...)."""
CORE_ACT_KINDS: tuple[str, ...] = get_args(CoreActKind)
ActKind = str
"""What an act does: a core kind, or one its scenario declares (``DeclaresActKinds``: a
negotiation's ``propose``, ``accept`` and ``walk_away``). The house reads only the core kinds;
a declared kind means what its scenario makes of it."""


@runtime_checkable
class DeclaresActKinds(Protocol):
    """A scenario whose acts do what no core kind says (``capabilities.act_kinds``)."""

    act_kinds: tuple[str, ...]


ActStyle = Literal["plain", "jargon", "stylistic"]
GoldMetric = Literal["success", "score"]
"""The gold a study's tables lead with: the share of calls that succeeded (``Outcome.success``),
or the mean ``Outcome.score`` (negotiation: the agent's normalised points)."""
GOLD_METRICS: tuple[GoldMetric, ...] = ("success", "score")


@dataclass(frozen=True)
class Act:
    """One utterance of an act-level agent's inventory."""

    id: str
    kind: ActKind
    text: str
    field: str | None = None
    style: ActStyle = "plain"

    def about(self, last_field: str | None) -> str | None:
        """The field this act is about: its own, or for a ``clarify`` (which asks again) the
        field asked last. The one home of that rule, for every agent and replayer."""
        return self.field or (last_field if self.kind == "clarify" else None)

    def about_in(self, view: object) -> str | None:
        """``about`` in a call whose agent sees ``view``: only a clarify reads the field asked
        last (a slot view's ``last_field``), so a view off the slot kit is never asked."""
        return (
            self.about(getattr(view, "last_field", None)) if self.kind == "clarify" else self.field
        )


class AgentMove(Protocol):
    """An agent's turn as the scenario hears it (``agents.base.AgentTurn`` is one)."""

    @property
    def text(self) -> str: ...

    @property
    def act(self) -> str | None:
        """The act id, when the agent is act-level."""
        ...

    @property
    def field(self) -> str | None:
        """What the turn is about, when the agent knows (the slot an act-level ask names)."""
        ...


class View(Protocol):
    """What the agent observes of the state beside the words (``Observation.view``)."""

    @property
    def brief(self) -> str:
        """The agent's own private brief for this call (a negotiator's priorities); empty when
        the task needs none (intake)."""
        ...


@dataclass(frozen=True)
class UserMove:
    """One line of a user, as the scenario's moves make it (before the persona's noise)."""

    text: str
    tags: tuple[str, ...] = ()
    done: bool = False
    """The user leaves after saying it (accepting a deal ends the call too)."""
    annoyed: int = 0
    """How many times the agent's turn annoyed this user (an insulting offer, a question asked
    again, one that does not apply): each spends one of the persona's tolerance."""
    careful: bool = False
    """Said again slowly (a caller repeating a garbled answer, correcting a read-back): the
    persona's noise is milder, which is what makes asking again worth it."""


@dataclass(frozen=True)
class Progress:
    """How far the user's own goal got, what the persona's satisfaction is built on.

    ``value`` in [0, 1]; ``reached`` once the goal is met. Two kinds of goal: one met the moment
    it is reached (a deal struck: the trigger rates a call top only then), and one met only
    when the agent also closes the call properly (``needs_close``: a caller's fields all got
    across, then a goodbye; the trigger rates any such call top, less a little unclosed, and
    each of the ``missing`` parts costs when the agent closes on it)."""

    value: float
    reached: bool
    needs_close: bool = False
    missing: int = 0
    """Parts of the goal not yet got (fields that did not get across)."""


class UserTraits(Protocol):
    """The persona traits a scenario's moves may read (``simulators.base.Traits`` has them)."""

    @property
    def cooperativeness(self) -> float:
        """How willing the user is to answer (each time it is asked again, more so)."""
        ...

    @property
    def verbosity(self) -> float:
        """How likely it says one more thing than it was asked."""
        ...

    @property
    def tangent_rate(self) -> float:
        """How likely it wanders off mid-answer."""
        ...

    @property
    def capacity(self) -> float:
        """How many surface forms and behaviours it has, in [0, 1]."""
        ...


class UserMoves(Protocol):
    """What one user does in one call: the scenario's side of a persona. The persona adds its
    generic traits around it: hanging up when patience or tolerance run out, silence, confusion
    at jargon, noise on every line, tastes, the trigger, courtesy. Made by
    ``SuppliesMoves.user_moves`` with the traits it reads and the user's random stream (the
    persona draws from the same stream between moves, so a call replays exactly)."""

    def opening(self) -> UserMove:
        """The user's first line, before the agent says anything."""
        ...

    def reply(self, agent_text: str) -> UserMove:
        """The answer to ``agent_text``: an answer, a counter-offer, an acceptance, a
        rejection."""
        ...

    def concede(self, agent_text: str, again: bool) -> UserMove | None:
        """The reply when ``agent_text`` hits the user's trigger phrase (its blind spot: a
        camper accepting a greedy split, a caller reeling off everything), and, with ``again``,
        to every agent turn after that. None: the user plays on as usual."""
        ...

    def heard(self, line: str) -> None:
        """The last move's words as they went down the line, noise and all (a caller whose
        progress is what got across notes it; others need do nothing)."""
        ...

    def progress(self) -> Progress: ...


@runtime_checkable
class SuppliesMoves(Protocol):
    """A scenario that plays its users' task-specific moves itself (``UserMoves``); the slot
    kit supplies them for every slot-filling scenario (``scenarios.slot_caller``)."""

    def user_moves(
        self, profile: Profile, traits: UserTraits, rng: np.random.Generator
    ) -> UserMoves: ...

    def progress_of(self, profile: Profile, record: Record) -> Progress:
        """``UserMoves.progress`` read off a stored call's end state (a simulator's ``judge``)."""
        ...


@runtime_checkable
class RendersActs(Protocol):
    """A scenario that words an act from the agent's view (the slot kit words it from the
    record and the last field asked, ``render_act``)."""

    def render(self, act: Act, view: View) -> str: ...


@runtime_checkable
class FeaturisesViews(Protocol):
    """A scenario that describes its view to the policy network itself: ``view_size`` numbers
    written into ``row`` (the featuriser adds the turn share)."""

    @property
    def view_size(self) -> int: ...

    def featurise(self, view: View, row: np.ndarray) -> None: ...


@runtime_checkable
class DeclaresGold(Protocol):
    """A scenario that says which gold its study tables lead with (``GoldMetric``)."""

    @property
    def gold_metric(self) -> GoldMetric: ...


@runtime_checkable
class ReadsUserContent(Protocol):
    """A scenario that can tell whether a user's line carries task content (a value, an offer,
    a priority): what the fidelity report counts as an answer, for any scenario."""

    def carries_content(self, user_text: str) -> bool: ...


@dataclass(frozen=True)
class UserSide:
    """What an LLM playing the user is told of its hidden profile (``BriefsLLMUsers``): facts
    as ``(key, label, words)``, the raw values by key, and rules of how to speak the task's
    moves in words the scenario's reader understands (a negotiation's offer, accept, walk away).
    The slot kit's is every field that applies, in ``RolePlay``'s words, and no rules."""

    facts: tuple[tuple[str, str, str], ...]
    values: Mapping[str, Value]
    rules: tuple[str, ...] = ()


@runtime_checkable
class BriefsLLMUsers(Protocol):
    """A scenario that says itself what an ``llm`` user is told: the user side of a profile
    (``UserSide``), and a reminder for one agent turn (what that turn means to this user, ``""``
    for none; small models forget a system prompt within two turns)."""

    def user_side(self, profile: Profile) -> UserSide: ...

    def user_hint(self, profile: Profile, agent_text: str) -> str: ...


def headline_metric(scenario: object) -> GoldMetric:
    """The gold ``scenario``'s study tables lead with: its ``gold_metric``, else ``"success"``."""
    return scenario.gold_metric if isinstance(scenario, DeclaresGold) else "success"


StateT = TypeVar("StateT")


class Scenario(Protocol[StateT]):
    """A task, independent of who plays the user or the agent. ``StateT``: its dialogue state,
    an immutable value (each ``hear_*`` returns a new one and never changes the one given)."""

    @property
    def name(self) -> str:
        """The name studies and stored episodes know it by."""
        ...

    @property
    def acts(self) -> tuple[Act, ...]:
        """The inventory an act-level agent (policy, scripted) chooses its turns from."""
        ...

    @property
    def voice(self) -> Voice:
        """The scenario's words for simulator kinds and agents (``scenarios.voice``)."""
        ...

    def sample_profile(self, rng: np.random.Generator) -> Profile:
        """A hidden user for one episode, deterministic in ``rng``: what the simulator plays
        and the grader checks against. Never shown to the agent."""
        ...

    def initial_state(self, profile: Profile) -> StateT:
        """The state a call starts in (the agent's brief may be drawn from the profile's own
        keys for the agent; nothing of the user's side may reach ``observe``)."""
        ...

    def hear_user(self, state: StateT, text: str) -> StateT:
        """The state after the user says ``text``."""
        ...

    def hear_agent(self, state: StateT, turn: AgentMove) -> StateT:
        """The state after the agent says ``turn``."""
        ...

    def observe(self, state: StateT) -> View:
        """What the agent may see of ``state`` (with its own brief)."""
        ...

    def ending(self, state: StateT, user_left: bool) -> Termination | None:
        """How the call ends now, or None while it goes on. Asked after every agent turn
        (``user_left=False``: the agent's own turn may end it) and after every user turn
        (``user_left``: the user said their last line; then never None). The turn limit and
        errors are the conversation core's."""
        ...

    def record(self, state: StateT) -> Record:
        """The end state as stored in ``Episode.record`` and read by ``grade``."""
        ...

    def grade(self, profile: Profile, record: Record, termination: Termination) -> Outcome:
        """The gold outcome of a call that ended as ``termination`` with ``record``."""
        ...


AnyScenario = Scenario[Any]
"""A scenario of any state: what the house types a task with when it does not read the state
(every consumer but the conversation core and the scenario itself)."""
