"""How diverse are the simulators a run trained and tested on?

Each simulator recorded in the run directory talks to the same scripted agent on the same
evaluation profiles, so differences in its user turns are the simulator's, not the agent's (a
collapsed agent that says one phrase would make every simulator look repetitive). Every member
contributes the same number of turns, so pooled ensemble scores weight members equally.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt

from sim2human.agents.scripted import ScriptedAgent
from sim2human.metrics.diversity import DiversitySummary, diversity_summary, ensemble_diversity
from sim2human.metrics.embeddings import embed
from sim2human.rollout.evaluate import evaluate
from sim2human.scenarios.base import Scenario
from sim2human.simulators.base import SimulatorSpec
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


def user_turns(
    specs: Sequence[SimulatorSpec],
    scenario: Scenario,
    per_member: int = TURNS_PER_MEMBER,
    *,
    max_turns: int,
) -> dict[str, list[str]]:
    """``per_member`` user turns of each simulator, talking to the scripted agent."""
    agent = ScriptedAgent(scenario)
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
    scenario: Scenario,
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
            rows.append(DiversityRow(name=sid, kind="frozen", group=group,
                                     summary=diversity_summary(t, embed_fn=cache)))  # fmt: skip
        elif texts:
            for name, summary in ensemble_diversity(texts, embed_fn=cache).items():
                kind = "ensemble" if name == "ensemble" else "member"
                rows.append(DiversityRow(name=group if kind == "ensemble" else name, kind=kind,
                                         group=group, summary=summary))  # fmt: skip
    return rows
