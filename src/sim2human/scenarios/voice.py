"""A scenario's words for others: what its users say besides field values, how an LLM is told to
play one of them, what gives such a player away, and the deployed agent's system prompt.

Simulator kinds and agents are scenario-neutral; they take every line, label and prompt from
``Scenario.voice``. A scenario with no ``role_play`` cannot have ``llm`` users, one with no
``agent`` has no default LLM agent prompt (a user passes their own).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property

from sim2human.types import Value

PromptTemplate = Callable[[str, str, str], str]
"""``(name, manner, facts) -> system prompt`` for an LLM playing the user called ``name``."""


@dataclass(frozen=True)
class UserLines:
    """What a programmatic user says besides field values (the ``persona`` kind; the ``llm``
    kind's closing and hang-up lines too)."""

    opening: str
    """The first line of the call, before any field."""
    opening_field: str | None
    """The field a forthcoming user adds to the opening line (None: none)."""
    closing: str
    """The reply to an agent's close."""
    hang_up: str
    """Out of patience: the last line before hanging up."""
    confused: tuple[str, ...]
    evasive: tuple[str, ...]
    small_talk: tuple[str, ...]
    tangents: tuple[str, ...]
    read_back_right: str
    read_back_wrong: str
    """Said before the right value when the agent reads a field back wrong."""
    trigger: str
    """Said before every field at once, when the agent hits the user's trigger phrase."""
    canned: str
    """Every reply after the trigger."""


@dataclass(frozen=True)
class MannerLines:
    """Sentences of an LLM user's persona prompt, chosen by its traits (``llm_prompts.manner``)."""

    brief: str
    chatty: str
    anxious: str
    irritated: str
    guarded: str
    jargon: str
    tangents: str
    one_at_a_time: str


@dataclass(frozen=True)
class RoleGuard:
    """What gives away an LLM that drifted out of the user's role (``simulators.llm_guard``).

    ``agent_lines``, ``narration`` and ``leaks`` are regular expressions (case-insensitive) over
    a reply: lines only the agent would say, stage directions, and words of the prompt's own
    instructions. The labels are speaker names a reply may start with.
    """

    agent_labels: tuple[str, ...]
    user_labels: tuple[str, ...]
    agent_lines: str
    narration: str
    leaks: str

    @cached_property
    def any_label(self) -> str:
        return "(?:" + "|".join((*self.agent_labels, *self.user_labels)) + ")"

    @cached_property
    def own_label(self) -> re.Pattern[str]:
        """The user's own speaker label (``Patient:``, ``Mary:``); the agent's is not repaired."""
        return re.compile(r"^\s*(?:" + "|".join(self.user_labels) + r"|[A-Z][a-z]+)\s*:\s*")

    @cached_property
    def agent_label(self) -> re.Pattern[str]:
        return re.compile(r"^\s*(?:" + "|".join(self.agent_labels) + r")\s*:", re.I)

    @cached_property
    def later_line(self) -> re.Pattern[str]:
        """A second speaker's line (or a stage direction) after the reply."""
        return re.compile(rf"\n+\s*(?:{self.any_label}|\(|\*)", re.IGNORECASE)

    @cached_property
    def spoke_as_agent(self) -> re.Pattern[str]:
        labels = "|".join(self.agent_labels)
        return re.compile(rf"^\s*(?:{labels})\s*:|{self.agent_lines}", re.IGNORECASE)

    @cached_property
    def narrated(self) -> re.Pattern[str]:
        return re.compile(rf"\*[^*]{{2,}}\*|{self.narration}|^\s*\(", re.IGNORECASE)

    @cached_property
    def leaked(self) -> re.Pattern[str]:
        generic = r"\brole-?play\b|\bas an ai\b|\blanguage model\b|\brelevant facts\b"
        return re.compile(rf"{generic}|{self.leaks}", re.IGNORECASE)


@dataclass(frozen=True)
class PromptWords:
    """A scenario's words in its LLM users' four prompt styles (``standard_prompts``): the
    styles' shape is written once there, each scenario gives only what differs. A user is
    told who they are (``who``, after "You are NAME, "), whom they talk to (``other``), what
    the facts block is called (``known``, ``details``), and how the card, the story and the
    rules introduce them (``character``, ``story``, ``role``)."""

    who: str
    """The plain style: "You are NAME, <who>" ("a patient phoning a clinic. A nurse asks ...")."""
    other: str
    """Who the user talks to, in lower case ("nurse", "other camper")."""
    known: str
    """The plain style's heading of the facts ("What you know about yourself")."""
    character: str
    """The card style: "Character: NAME, <character>"."""
    story: str
    """The story style: "NAME <story>" ("has not been feeling well and calls the clinic...")."""
    details: str
    """The story and rules styles' heading of the facts: "NAME's <details>", "Your <details>"."""
    role: tuple[str, str]
    """The rules style: "Role-play <before>NAME<after>"."""
    is_plain: str | None = None
    """The plain style: "You are <is_plain>, not the <other>" (None: the user's name)."""
    is_rules: str | None = None
    """The rules style: "You are <is_rules>, never the <other>" (None: the user's name)."""
    first_person: bool = True
    """The plain style says "Speak in the first person."."""
    keep: str = ""
    """A sentence after the manner: what the user does not volunteer (" Do not mention ...")."""


def standard_prompts(words: PromptWords) -> dict[str, PromptTemplate]:
    """The four prompt styles (``simulators.llm_prompts.PROMPT_STYLES``) in ``words``: the same
    user told in four shapes, so held-out LLM members can differ from training ones in prompt."""
    w = words
    speak = "Speak in the first person. " if w.first_person else ""
    their = w.keep.replace("your", "their").replace("you are", "they are")

    def plain(name: str, manner: str, facts: str) -> str:
        return (
            f"You are {name}, {w.who} You are {w.is_plain or name}, not the {w.other}. "
            f"{speak}{manner}{w.keep}\n{w.known}:\n{facts}"
        )

    def card(name: str, manner: str, facts: str) -> str:
        return (
            f"Character: {name}, {w.character}\nManner: {manner}{w.keep}\nFacts:\n{facts}\n"
            f"Write only {name}'s next reply to the {w.other}."
        )

    def story(name: str, manner: str, facts: str) -> str:
        told = manner.replace("You ", f"{name} ").replace("you ", "they ")
        return (
            f"{name} {w.story} {told}{their}\n{name}'s {w.details}:\n{facts}\n"
            f"Reply with exactly what {name} says, nothing else."
        )

    def rules(name: str, manner: str, facts: str) -> str:
        before, after = w.role
        return (
            f"Role-play {before}{name}{after}\nRules: 1) You are {w.is_rules or name}, never the "
            f"{w.other}. 2) Say only your own words. 3) {manner}{w.keep}\nYour {w.details}:\n"
            f"{facts}"
        )

    return {"plain": plain, "card": card, "story": story, "rules": rules}


@dataclass(frozen=True)
class RolePlay:
    """How an LLM is told to play a user of the scenario (the ``llm`` kind), and to judge a call."""

    names: tuple[str, ...]
    """First names a member is given (drawn by its seed)."""
    labels: Mapping[str, str]
    """Field -> how the persona prompt names it."""
    fact: Callable[[str, Value], str]
    """One profile value in plain words the scenario's extractor reads back."""
    manner: MannerLines
    prompts: Mapping[str, PromptTemplate]
    """Prompt style -> template; every style in ``simulators.llm_prompts.PROMPT_STYLES``."""
    agent_name: str
    """How the agent's lines are labelled in the prompts (``Nurse``)."""
    opening_cue: str
    """The agent's first words, to which the user's opening line answers."""
    guard: RoleGuard
    judge_system: str
    judge_call: str
    """The judge's question about a whole call: a format string of ``name`` and ``call``."""
    judge_turn: str
    """... about one exchange: a format string of ``name``, ``agent`` and ``reply``."""


@dataclass(frozen=True)
class AgentVoice:
    """The deployed LLM agent's default system prompt, and the speaker labels that a chat model
    may write before its own turn (dropped) or for the user after it (cut)."""

    system_prompt: str
    own_labels: tuple[str, ...]
    user_labels: tuple[str, ...]

    @cached_property
    def own_label(self) -> re.Pattern[str]:
        return re.compile(r"^\s*(?:" + "|".join(self.own_labels) + r")\s*:\s*", re.IGNORECASE)

    @cached_property
    def next_speaker(self) -> re.Pattern[str]:
        return re.compile(r"\n+\s*(?:" + "|".join(self.user_labels) + r")\s*:", re.IGNORECASE)


@dataclass(frozen=True)
class CardWords:
    """How the call page shows a person the hidden profile they play (their card) and asks them
    to confirm their own details after the call."""

    labels: Mapping[str, str]
    """Field -> its label for a person ("Date of birth"); a field not here gets its name."""
    show: Callable[[str, Value], str]
    """One value as a person reads it ("3 days ago", "2 May 1980"); the extractor must read
    it back, since a confirmed card is read with it."""
    intro: str = ""
    """Who the person plays and why they call, shown above the fields (none: no line)."""
    role: str = "caller"
    """Whom a person plays ("Play a patient from a card")."""
    heading: str = "Talk to a phone assistant"
    """The consent page's heading."""
    setting: str = "as if you were phoning a company"
    """Completes "You will have a short text conversation with an automated assistant, ..."."""
    place: str = "the assistant"
    """Whom the person is on the phone with ("On the phone with the clinic")."""
    private: str = "real personal details"
    """What a person should not type unless answering as themselves."""


def plain_value(value: Value) -> str:
    """Any value in plain words, for a scenario that gives no ``CardWords``."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, tuple):
        return ", ".join(value) if value else "none"
    return str(value)


@dataclass(frozen=True)
class Voice:
    """Every word of a scenario that a simulator kind or an agent speaks or reads for."""

    user: UserLines
    role_play: RolePlay | None = None
    agent: AgentVoice | None = None
    card: CardWords | None = None
