"""How diverse are the simulators a run trained and tested on?

Each simulator recorded in the run directory talks to the same scripted agent on the same
evaluation profiles, so differences in its user turns are the simulator's, not the agent's (a
collapsed agent that says one phrase would make every simulator look repetitive). Every member
contributes the same number of turns, so pooled ensemble scores weight members equally.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import numpy.typing as npt

from sim2human.agents.scripted import reference_agent
from sim2human.errors import ModelUnavailableError, UsageError
from sim2human.metrics.diversity import DiversitySummary, diversity_summary, ensemble_diversity
from sim2human.metrics.embeddings import embed
from sim2human.rollout.evaluate import evaluate
from sim2human.scenarios.core import AnyScenario
from sim2human.simulators.base import SimulatorSpec
from sim2human.simulators.kinds import is_programmatic
from sim2human.types import Frozen

TURNS_PER_MEMBER = 40


class DiversityRow(Frozen):
    name: str
    kind: str
    """``member``, ``ensemble`` (members pooled) or ``frozen`` (a condition's single simulator)."""
    group: str
    summary: DiversitySummary


class _Cached:
    """Embeds each distinct text once, whichever summary asks for it."""

    def __init__(self) -> None:
        self.vectors: dict[str, npt.NDArray[np.float64]] = {}
        self.name = ""

    def add(self, texts: Sequence[str]) -> None:
        new = sorted(set(texts) - self.vectors.keys())
        if new:
            matrix, self.name = embed(new)
            self.vectors.update(zip(new, matrix, strict=True))

    def __call__(self, texts: Sequence[str]) -> tuple[npt.NDArray[np.float64], str]:
        return np.stack([self.vectors[t] for t in texts]), self.name


class StoredDiversity(Frozen):
    rows: list[DiversityRow]
    note: str = ""


def diversity_groups(
    runs: Iterable[tuple[str, Sequence[SimulatorSpec], Sequence[SimulatorSpec]]],
) -> dict[str, Sequence[SimulatorSpec]]:
    """Training ensemble(s), each frozen simulator, and the held-out ensemble, from each
    condition's ``(name, trained_on, heldout)`` members; a repeated group is listed once."""
    groups: dict[str, Sequence[SimulatorSpec]] = {}
    heldout: dict[str, SimulatorSpec] = {}
    for name, trained_on, held in runs:
        heldout.update({s.id: s for s in held})
        seen = {s.id for g in groups.values() for s in g}
        if len(trained_on) == 1 and trained_on[0].id not in seen:
            groups[f"frozen ({name})"] = list(trained_on)
        elif trained_on:
            ids = tuple(s.id for s in trained_on)
            if all(tuple(s.id for s in g) != ids for g in groups.values()):
                groups[f"training ensemble ({name})"] = list(trained_on)
    if heldout:
        groups["held-out ensemble"] = list(heldout.values())
    return groups


def measure_groups(
    groups: Mapping[str, Sequence[SimulatorSpec]], scenario: AnyScenario, max_turns: int
) -> StoredDiversity:
    """Diversity of the persona members of ``groups`` (measuring an LLM member would need its
    endpoint), or no rows and a note saying why not."""
    persona = {
        name: p
        for name, members in groups.items()
        if (p := [s for s in members if is_programmatic(s)])
    }
    if not persona:
        return StoredDiversity(
            rows=[], note="No persona simulators recorded: diversity not measured."
        )
    try:
        return StoredDiversity(rows=simulator_diversity(persona, scenario, max_turns=max_turns))
    except (UsageError, ModelUnavailableError) as err:
        return StoredDiversity(rows=[], note=f"Diversity not measured: {err}")


def user_turns(
    specs: Sequence[SimulatorSpec],
    scenario: AnyScenario,
    per_member: int = TURNS_PER_MEMBER,
    *,
    max_turns: int,
) -> dict[str, list[str]]:
    """``per_member`` user turns of each simulator, talking to the scripted agent."""
    agent = reference_agent(scenario)
    out: dict[str, list[str]] = {}
    for spec in specs:
        texts: list[str] = []
        episodes = 4
        while len(texts) < per_member and episodes <= 64:
            eps = evaluate(
                agent, [spec], scenario, split="train", per_member=episodes, max_turns=max_turns
            )
            texts = [t.text for e in eps for t in e.turns if t.speaker == "user"]
            episodes *= 2
        out[spec.id] = texts[:per_member]
    return out


def simulator_diversity(
    groups: Mapping[str, Sequence[SimulatorSpec]],
    scenario: AnyScenario,
    per_member: int = TURNS_PER_MEMBER,
    *,
    max_turns: int,
) -> list[DiversityRow]:
    """``groups``: name -> members. A group of several members is an ensemble (each member and
    the pool are reported); a group of one is a frozen simulator."""
    specs = {s.id: s for members in groups.values() for s in members}
    turns = user_turns(list(specs.values()), scenario, per_member, max_turns=max_turns)
    cache = _Cached()
    cache.add([t for texts in turns.values() for t in texts])
    rows: list[DiversityRow] = []
    for group, members in groups.items():
        texts = {s.id: turns[s.id] for s in members if turns[s.id]}
        if len(texts) == 1:
            ((sid, t),) = texts.items()
            rows.append(
                DiversityRow(
                    name=sid,
                    kind="frozen",
                    group=group,
                    summary=diversity_summary(t, embed_fn=cache),
                )
            )
        elif texts:
            for name, summary in ensemble_diversity(texts, embed_fn=cache).items():
                kind = "ensemble" if name == "ensemble" else "member"
                rows.append(
                    DiversityRow(
                        name=group if kind == "ensemble" else name,
                        kind=kind,
                        group=group,
                        summary=summary,
                    )
                )
    return rows
