"""ACI-Bench as a replay corpus: doctor-patient visits, the intake scenario's real patients.

The doctor's turns are the agent's (a dictation command, "hey dragon ...", is an aside, as is a
guardian's turn); the patient's are the member's words; the card is ``replay_card.derive_card``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import lru_cache, partial
from typing import Final

from sim2human.corpora import aci_bench
from sim2human.errors import UsageError
from sim2human.scenarios.core import AnyScenario
from sim2human.scenarios.intake.replay_card import derive_card
from sim2human.scenarios.intake.scenario import IntakeScenario
from sim2human.simulators.replay_corpus import (
    Card,
    Corpus,
    CorpusFamily,
    Member,
    Speaker,
    build_member,
)

MIN_PATIENT_TURNS: Final = 5
"""Encounters where the patient says less than this (a guardian speaks instead) are not members."""
_COMMAND = re.compile(r"^(hey|okay) dragon\b")


@lru_cache(maxsize=4)
def encounter_ids(splits: tuple[str, ...]) -> tuple[str, ...]:
    found = tuple(
        t.encounter_id
        for t in aci_bench.load()
        if t.split in splits and len(t.patient_turns) >= MIN_PATIENT_TURNS
    )
    if not found:
        raise UsageError(f"ACI-Bench corpus: no encounter in split(s) {', '.join(splits)}")
    return found


def wrong_task(scenario: object) -> str | None:
    """Why ACI-Bench's visits are not ``scenario``'s task (they are intake's), or None."""
    if not isinstance(scenario, IntakeScenario):
        return "replay members play the intake scenario only (ACI-Bench's visits)"
    return None


def unplayable(scenario: object) -> str | None:
    """Why ACI-Bench members cannot play ``scenario`` (its visits are intake's), or None."""
    return wrong_task(scenario) or aci_bench.missing()


def human_turns(data: str | None) -> list[tuple[str, tuple[str, ...]]]:
    """The held-out visits' (valid + test) patient turns, detokenised, from ``data``."""
    held = aci_bench.split_of(aci_bench.load(data), "valid", "test")
    return [
        (t.encounter_id, tuple(aci_bench.detokenize(x) for x in t.patient_turns))
        for t in held
        if t.patient_turns
    ]


def member(encounter_id: str, scenario: AnyScenario) -> Member:
    if not isinstance(scenario, IntakeScenario):
        raise UsageError(
            f"replay member {encounter_id!r}: ACI-Bench members play the intake scenario only"
        )
    return _member(encounter_id, scenario)


@lru_cache(maxsize=512)
def _member(encounter_id: str, scenario: IntakeScenario) -> Member:
    by_id = {t.encounter_id: t for t in aci_bench.load()}
    if encounter_id not in by_id:
        raise UsageError(
            f"replay member: encounter {encounter_id!r} is not in the ACI-Bench corpus"
        )
    t = by_id[encounter_id]
    dialogue: list[tuple[Speaker, str]] = [
        (_speaker(turn), aci_bench.detokenize(turn.text)) for turn in t.turns
    ]
    return build_member(dialogue, scenario, partial(_card, t, scenario))


def _speaker(turn: aci_bench.Turn) -> Speaker:
    if turn.speaker == "doctor":
        return "aside" if _COMMAND.match(turn.text) else "agent"
    return "user" if turn.speaker == "patient" else "aside"


def _card(
    t: aci_bench.Transcript, scenario: IntakeScenario, answers: Mapping[str, Sequence[str]]
) -> Card:
    return derive_card(t, scenario, answers)


ACI_BENCH: Final = Corpus(
    name="aci-bench",
    families=(
        CorpusFamily("aci-train", ("train",), "real patients' words: ACI-Bench train split"),
        CorpusFamily(
            "aci-heldout", ("valid", "test"), "real patients' words: ACI-Bench valid + test splits"
        ),
    ),
    ids=encounter_ids,
    member=member,
    unplayable=unplayable,
    missing=aci_bench.missing,
    title="held-out ACI-Bench patient turns (valid + test visits)",
    wrong_task=wrong_task,
    human_turns=human_turns,
)
