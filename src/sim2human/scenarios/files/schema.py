"""The schema of a scenario file (``schema_version: 1``): a slot-filling task written as data.

These models check each key on its own (types, bounds, unknown keys); what refers to something
elsewhere in the file (a gold field, a profile value, a quirk's act, a vocabulary file) is
checked by ``scenarios.files.checks``, which knows the key paths to name. The guide
``docs/guides/scenario-files.md`` explains every key.
"""

from __future__ import annotations

from datetime import date
from typing import Annotated, Literal

from pydantic import AliasChoices, Discriminator, Field

from sim2human.scenarios.core import ActStyle, CoreActKind, GoldMetric
from sim2human.types import FrozenConfig

SCHEMA_VERSION = 1
FIELD_KINDS = ("category", "number", "date", "yesno", "list")
Text = Annotated[str, Field(min_length=1, max_length=2000)]
Lines = Annotated[tuple[Text, ...], Field(min_length=1, max_length=200)]
Id = Annotated[str, Field(min_length=1, max_length=100, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")]
Name = Annotated[str, Field(min_length=1, max_length=100, pattern=r"^[a-z][a-z0-9_]*$")]
"""A field's name: lower case, digits and underscores (it is a key of every profile)."""
Bound = Annotated[int, Field(ge=-(10**9), le=10**9)]
"""A number field's values stay well inside what numpy draws (int64)."""
Vocabulary = tuple[Text, ...] | Text
"""Inline items (``canonical|alias|...``), or a vocabulary file's path relative to the YAML."""


class Ask(FrozenConfig):
    """How an agent asks for a field: plain wordings (the first is the reference agent's) and
    jargon ones (a caller may not understand them)."""

    plain: Lines
    jargon: tuple[Text, ...] = ()


When = dict[Name, Text | tuple[Text, ...]]
"""A field's condition: category field -> the value (or values) under which it applies."""


class FieldBase(FrozenConfig):
    when: When | None = None
    """The field applies only to profiles whose named category fields hold one of these values
    (``{domain: hotel}``, ``{domain: [restaurant, hotel]}``): a profile row holds exactly the
    fields that apply to it, gold grades only those, and the agent sees which still apply
    (``scenarios.files.when``). Default: it applies to every profile."""
    label: Text | None = None
    """How prompts and read-backs name the field (default: its name, with spaces)."""
    ask: Ask
    cues: Lines
    """Words in an agent's turn that ask for this field (every ``ask`` wording must hold one)."""
    say: Lines
    """How a caller says a value: templates with ``{v}``, most common first."""


class Markers(FrozenConfig):
    """Words around a value that say it is this field's (``scenarios.files.markers``): for two
    fields sharing a vocabulary, as a departure and a destination station."""

    before: tuple[Text, ...] = ()
    """Words said just before the value ("to", "arriving in"); "the" may stand between."""
    after: tuple[Text, ...] = ()
    """Words said just after it ("is my destination")."""


class CategoryField(FieldBase):
    kind: Literal["category"]
    vocabulary: Vocabulary
    markers: Markers | None = None
    """With markers, a value counts for this field where a marker says so, or, unmarked, where
    the turn answers this field (it was just asked); every ``say`` wording carries a marker.
    Default: a value counts wherever it is said."""
    aliases: dict[Text, Text] = Field(default_factory=dict)
    """More names callers use: alias -> canonical item."""
    weights: dict[Text, Annotated[float, Field(ge=0)]] | None = None
    """Sampled profiles draw items in these proportions (default: uniformly)."""


class NumberField(FieldBase):
    kind: Literal["number"]
    range: tuple[Bound, Bound]
    """Whole numbers from low to high, both included."""
    unit: Text | None = None
    """A number followed by this word (or its plural) is this field's, asked for or not."""
    more_units: tuple[Text, ...] = ()
    """Other words that make a number this field's wherever said ("tickets", "seats" for a
    party size); read only, the caller says ``unit``."""
    aliases: dict[Text, Bound] = Field(default_factory=dict)
    """Words callers use for a value: phrase -> number ("a dozen": 12, "just me": 1)."""
    weights: dict[Bound, Annotated[float, Field(ge=0)]] | None = None


class DateField(FieldBase):
    kind: Literal["date"]
    range: tuple[date, date]
    """Earliest and latest date (ISO ``YYYY-MM-DD``), both included."""


class YesNoField(FieldBase):
    kind: Literal["yesno"]
    say: Lines = ("{v}.",)
    said_yes: Lines
    """How a caller says yes (also how it is heard unasked: keep the field's words in them)."""
    said_no: Lines
    p_yes: float = Field(0.5, ge=0, le=1)
    """Sampled profiles: the share of yes."""


class ListField(FieldBase):
    kind: Literal["list"]
    vocabulary: Vocabulary
    aliases: dict[Text, Text] = Field(default_factory=dict)
    size: tuple[Annotated[int, Field(ge=0, le=20)], Annotated[int, Field(ge=0, le=20)]] = (0, 2)
    """Fewest and most items a caller has."""
    none: Lines
    """How a caller says they have none ("No allergies, none.")."""


FieldSpec = Annotated[
    CategoryField | NumberField | DateField | YesNoField | ListField, Discriminator("kind")
]


class ActSpec(FrozenConfig):
    """One act of the inventory besides the asks (which come from the fields)."""

    id: Id
    kind: CoreActKind
    text: Text
    """May use ``{readback}`` (the record read back) and ``{last_question}``."""
    style: ActStyle = "plain"


class Cues(FrozenConfig):
    """How a user (and the scenario) reads an agent's turn besides the fields it asks."""

    greet: Lines
    """A turn that starts with one of these greets."""
    close: Lines
    confirm: Lines
    """A read-back: the caller checks it rather than answering a question."""
    empathy: tuple[Text, ...] = ()
    clarify: tuple[Text, ...] = ("sorry,",)
    """A turn that starts with one of these re-asks the last question more simply."""
    jargon: tuple[Text, ...] = ()
    """Words a caller may not understand (every jargon ask wording's words count too)."""
    confused: Lines = ("what do you mean", "don't understand")
    """What a confused caller says (the agent's signal to clarify)."""


class UserSide(FrozenConfig):
    """What the simulated user is told about themselves, never the grader (τ²-bench's shape)."""

    persona: Text
    """Who the caller is, in a sentence ("a busy parent")."""
    reason: Text
    """Why they call."""
    knows: tuple[Name, ...] | None = None
    """The fields the caller knows (default: all)."""
    withholds: tuple[Name, ...] = ()
    """Fields the caller does not volunteer: only said when asked."""
    names: Lines = ("Alex", "Sam", "Maria", "Chen", "Priya", "Jordan", "Fatima", "Luca")


class Profiles(FrozenConfig):
    """Hidden profiles listed as rows (a corpus's goals); without ``rows`` they are sampled
    from each field's own distribution."""

    rows: Annotated[tuple[dict[str, object], ...], Field(min_length=1, max_length=100_000)]


class Gold(FrozenConfig):
    """The gold rule: these fields recorded right and (``closed``) the agent closed the call."""

    fields: tuple[Name, ...] | None = None
    """Default: every field."""
    closed: bool = True
    headline: GoldMetric = "success"
    """What the study tables lead with: ``success`` (share of calls graded a success) or
    ``score`` (mean ``Outcome.score``; for this rule the same number: a call scores 1 or 0)."""


class Persona(FrozenConfig):
    """A programmatic caller's words besides field values."""

    opening: Text
    opening_field: Name | None = None
    """A forthcoming caller says this field's value in the opening line too."""
    closing: Text
    hang_up: Text
    confusions: Lines
    evasions: Lines
    small_talk: Lines
    tangents: Lines
    read_back_right: Text = "Yes, that's right."
    read_back_wrong: Text = "No, that's not right."
    trigger: Text = "Oh, perfect! Here's everything: "
    canned: Text = "Yes, yes, that's all fine, thanks!"


class Quirks(FrozenConfig):
    """Act ids whose wording members have a taste for (``tastes``: liked or disliked, even
    odds) or are triggered by: a frozen member keeps one of these as its exploitable blind
    spot. Held-out families draw from a half disjoint from the training members' unless
    ``shared`` (``simulators.base.QuirkPool.held_apart``)."""

    tastes: tuple[Id, ...] = Field((), validation_alias=AliasChoices("tastes", "liked"))
    """Read under its old name ``liked`` too (it always drew dislikes as well)."""
    triggers: Annotated[tuple[Id, ...], Field(min_length=1)]
    shared: bool = False
    """Held-out families draw from the same acts as the training ones, on purpose (a held-out
    member may then hold a frozen agent's very trigger); the study report says so."""


class AgentSide(FrozenConfig):
    """The deployed agent: what its lines are labelled, and an LLM agent's system prompt."""

    name: str = Field("Agent", min_length=1, max_length=40, pattern=r"^[A-Za-z][A-Za-z .'-]*$")
    system_prompt: Text | None = None
    """Default: one written from the fields' labels."""


Role = Literal["greet", "clarify", "repeat", "prompt", "confirm", "close"]
"""What the reference agent says besides asks (``agents.scripted.ROLES``)."""
ROLE_KINDS: dict[str, str] = {"repeat": "clarify"}
"""The act kind a role takes where it is not the role's own name."""


class ScenarioFile(FrozenConfig):
    schema_version: int
    name: Id
    description: Text = ""
    fields: Annotated[dict[Name, FieldSpec], Field(min_length=1, max_length=100)]
    acts: Annotated[tuple[ActSpec, ...], Field(min_length=1, max_length=1000)]
    cues: Cues
    user: UserSide
    profiles: Profiles | None = None
    gold: Gold = Gold()
    persona: Persona
    quirks: Quirks
    agent: AgentSide = AgentSide()
    reference: dict[Role, Id] = Field(default_factory=dict)
    """The reference agent's act for a role, where the first act of its kind is not the one
    (``repeat``: the clarification said after silence; default the last clarify act)."""
