"""The seam between the ``replay`` kind and a corpus: a corpus is one ``Corpus`` row (its name,
the families it declares, its ids, a member by id, and whether it can play a scenario);
``build_member`` makes any dialogue playable.

A corpus's row lives with the scenario its people play (``scenarios/intake/replay.py`` for
ACI-Bench, ``scenarios/support/replay.py`` for MultiWOZ, ``scenarios/negotiation/replay.py`` for
CaSiNo), and ``replay_families.CORPORA`` registers it by name. Those modules build simulators,
so they sit at this package's layer although they live in a scenario's folder
(``tests/test_layers.py``); this module and ``base`` import nothing that lists the corpora, so a
scenario's replay module can be imported first.

A dialogue reaches ``build_member`` as its turns, each tagged ``agent`` (asks the user something,
read with the scenario's ``interpret``), ``user`` (the real words a member says) or ``aside``
(neither: a dictation command, a guardian, another domain's part of the call); and a card
function giving the hidden profile from the user's answers. So a corpus module plus a card
function is all a new corpus needs (intake's, support's); a corpus whose users negotiate rather
than answer brings its own simulator and card instead (negotiation's ``ReplayCamper``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Literal

from sim2human.scenarios.core import AnyScenario
from sim2human.scenarios.slots import SlotScenario
from sim2human.simulators.base import Simulator, SimulatorSpec
from sim2human.types import Profile

Speaker = Literal["agent", "user", "aside"]
Source = Literal["from-metadata", "from-note", "from-transcript", "sampled", "from-goal"]
"""Where a card's value came from (a corpus's metadata, a note, the transcript, its goal, or
drawn as the scenario draws any profile)."""
_THANKS: Final = re.compile(r"\bthank", re.IGNORECASE)


@dataclass(frozen=True)
class Card:
    """A replayed user's hidden profile, in the scenario's terms, and where each value came from."""

    encounter_id: str
    values: Profile
    sources: dict[str, Source]


@dataclass(frozen=True)
class Member:
    """One dialogue made playable: its card, and its user's turns by what was asked."""

    card: Card
    turns: tuple[str, ...]
    """The user's turns, in call order."""
    answers: dict[str, tuple[int, ...]]
    """Field -> indices of turns that answered an agent's question about it."""
    says_card: frozenset[tuple[str, int]]
    """(field, turn index) pairs of ``answers`` whose extraction gives the card's value."""
    says_none: frozenset[tuple[str, int]]
    """(field, turn index) pairs of ``answers`` the extractor reads no value for that field from."""
    opening: int
    closing: int | None


@dataclass(frozen=True)
class CorpusFamily:
    """A replay family a corpus declares: some of its splits, played as members of ``name``."""

    name: str
    splits: tuple[str, ...]
    description: str


@dataclass(frozen=True)
class Corpus:
    """What the replay kind asks of a corpus: one row, in the module of the scenario its people
    play (``scenarios/intake/replay.py``), registered by name in ``replay_families.CORPORA``."""

    name: str
    """Its name in a study and a run directory (``aci-bench``)."""
    families: tuple[CorpusFamily, ...]
    """The replay families it declares (``aci-train``, ``aci-heldout``), each some splits."""
    ids: Callable[[tuple[str, ...]], tuple[str, ...]]
    """The playable dialogue ids of some splits, in a fixed order (member ``seed`` picks one)."""
    unplayable: Callable[[AnyScenario], str | None]
    """Why its members cannot play a scenario here (wrong task, corpus not found), or None."""
    missing: Callable[[], str | None]
    """Why the corpus is not found, or None."""
    title: str
    """Who speaks in its held-out dialogues, in words ("ACI-Bench patients (valid + test)")."""
    wrong_task: Callable[[AnyScenario], str | None]
    """Why its dialogues are not ``scenario``'s task (whether or not the corpus is found), or
    None: then it is that scenario's human corpus (fidelity's reference)."""
    human_turns: Callable[[str | None], Sequence[tuple[str, tuple[str, ...]]]]
    """(dialogue id, its user's turns) of the held-out dialogues, read from a folder (None: the
    default place); the human reference that fidelity compares simulated users with."""
    member: Callable[[str, SlotScenario], Member] | None = None
    """The dialogue of an id, made playable on a scenario by ``replay.ReplaySimulator`` (the
    slot-filling replay: answers indexed by the field asked); a UsageError if it cannot be."""
    play: Callable[[SimulatorSpec, AnyScenario], Simulator] | None = None
    """A simulator of its own for a member (a corpus whose users do not answer field questions,
    such as CaSiNo's campers), used instead of ``member``."""
    card: Callable[[str, AnyScenario], Profile] | None = None
    """The hidden profile of a dialogue id, where the corpus has ``play`` instead of ``member``."""


Card_of = Callable[[Mapping[str, Sequence[str]]], Card]
"""The card of a dialogue, given its user's answers to each field's questions (in call order)."""


def build_member(
    dialogue: Sequence[tuple[Speaker, str]], scenario: SlotScenario, card_of: Card_of
) -> Member:
    """``dialogue`` made playable: user turns indexed by the fields the agent's turn before them
    asked (``aside`` turns change nothing), the card, and which answers say the card's value."""
    turns: list[str] = []
    answers: dict[str, list[int]] = {}
    asked: tuple[str, ...] = ()
    for speaker, text in dialogue:
        if speaker == "agent":
            asked = scenario.interpret(text).asks
        elif speaker == "user":
            k = len(turns)
            turns.append(text)
            for f in asked:
                answers.setdefault(f, []).append(k)
            asked = ()
    card = card_of({f: [turns[k] for k in ks] for f, ks in answers.items()})
    heard = {
        (f, k): scenario.extract(turns[k], scenario.empty_record(), f)[f]
        for f, ks in answers.items()
        for k in ks
    }
    says = {fk for fk, v in heard.items() if v is not None and v == card.values.get(fk[0])}
    silent = {fk for fk, v in heard.items() if v is None}
    closing = next((k for k in reversed(range(len(turns))) if _THANKS.search(turns[k])), None)
    return Member(
        card,
        tuple(turns),
        {f: tuple(v) for f, v in answers.items()},
        frozenset(says),
        frozenset(silent),
        0,
        closing,
    )
