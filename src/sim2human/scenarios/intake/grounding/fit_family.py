"""A persona family fitted to real patients' behaviour: ``sim2human fit-family``.

The target is the ACI-Bench **train** split only, cut by encounter into a fit part and a
validation part (every third encounter); the held-out splits (valid + test, ``aci-heldout``)
are never read here. A candidate family is a point of the scaled trait box ``BOX``: each trait's
range is that point's value plus or minus ``width`` of the box (clipped to it). Its behaviour is
measured on the user turns of calls with the scripted reference agent (one fixed agent, so the
fit measures the simulator, not the calls), and scored by ``distance``: the gap between its
behaviour statistics (``metrics.fidelity``: words per turn, the turn-length W1, disfluencies,
hedges, the shares of turns that answer, ask back or wander) and the human part's, each over
the larger of ``FLOORS`` and the gap two halves of the human part show, squared and summed, plus
``AUC_WEIGHT`` times the lexical classifier's AUC above 0.5. The search is the project's
cross-entropy method (``samplers.cem``); the candidate kept is the one of the rounds' means
that scores best on the *validation* part (scored on calls of other member seeds).

Call length is measured and stored but not fitted: an ACI-Bench visit is a whole consultation
(history, examination, plan), an intake call a few questions, so its length is the task's.

With ``voice`` (``Lines``: a restyle cache, shipped or a file) every candidate is played as a
restyled family saying that cache's lines (``simulators.restyled``), so the objective sees the
words its members will say (``refitted-aci``: the traits refitted with ``retrieved-aci``'s
retrieved turns in the loop); everything else of the fit is the same.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np
from pydantic import BaseModel

from sim2human import seeding
from sim2human.agents.scripted import ScriptedAgent
from sim2human.corpora import aci_bench
from sim2human.metrics.embeddings import embed
from sim2human.metrics.fidelity import (
    act_shares,
    disfluency_rate,
    distinguishability_auc,
    hedge_rate,
    wasserstein_1d,
)
from sim2human.metrics.tokens import tokenize
from sim2human.rollout.conversation import MAX_TURNS
from sim2human.rollout.evaluate import evaluate
from sim2human.samplers.cem import CEM
from sim2human.scenarios.intake.grounding.fit_voice import Lines, as_restyled, voiced
from sim2human.scenarios.intake.scenario import IntakeScenario
from sim2human.simulators.base import Family, QuirkPool
from sim2human.types import Episode

BOX: Final[dict[str, tuple[float, float]]] = {
    "cooperativeness": (0.3, 1.0),
    "verbosity": (0.0, 1.0),
    "jargon_confusion": (0.0, 0.8),
    "tangent_rate": (0.0, 0.6),
    "silence_rate": (0.0, 0.3),
    "capacity": (0.0, 1.0),
    "disfluency": (0.0, 0.8),
}
"""The traits fitted and the box each is searched in (``disfluency``: the noise kind)."""
STATS: Final = ("mean_words", "length_w1", "disfluency", "hedge", "answer", "ask", "wander")
"""The statistics fitted (``call_turns`` is reported only: see the module docstring)."""
FLOORS: Final = np.array([1.0, 1.0, 1.0, 0.05, 0.05, 0.05, 0.05])
"""The smallest gap in each statistic that counts as one unit (a word, a disfluency per 100
words, five points of a share): fixed a priori, used where two human halves agree closer."""
AUC_WEIGHT: Final = 50.0
"""Units of distance per point of lexical AUC above 0.5 (0.7 costs 10: as much as ten units)."""


class Behaviour(BaseModel):
    """Behaviour statistics of a set of user turns (against a human reference for W1)."""

    n_turns: int
    mean_words: float
    length_w1: float
    disfluency: float
    hedge: float
    answer: float
    ask: float
    wander: float
    call_turns: float
    """User turns per call (per visit, for humans)."""

    def vector(self) -> np.ndarray:
        return np.array([getattr(self, k) for k in STATS], dtype=float)


@dataclass(frozen=True)
class HumanPart:
    """Patient turns of some train encounters, and turns per encounter."""

    encounters: tuple[str, ...]
    turns: tuple[str, ...]
    per_call: float


def train_parts(data: str | None = None) -> tuple[HumanPart, HumanPart]:
    """The train split's fit part (two encounters of every three) and validation part."""
    train = [t for t in aci_bench.split_of(aci_bench.load(data), "train") if t.patient_turns]
    parts: tuple[list[aci_bench.Transcript], list[aci_bench.Transcript]] = ([], [])
    for i, t in enumerate(train):
        parts[int(i % 3 == 2)].append(t)

    def part(ts: list[aci_bench.Transcript]) -> HumanPart:
        turns = tuple(aci_bench.detokenize(x) for t in ts for x in t.patient_turns)
        ids = tuple(t.encounter_id for t in ts)
        return HumanPart(encounters=ids, turns=turns, per_call=len(turns) / len(ts))

    return part(parts[0]), part(parts[1])


_SCENARIO = IntakeScenario()


def reads_value(text: str) -> bool:
    """Does the intake extractor read a field value in ``text`` (the fidelity report's test)?"""
    read = _SCENARIO.extract(text, _SCENARIO.empty_record(), None)
    return any(v is not None for v in read.values())


def behaviour(turns: Sequence[str], per_call: float, reference: Sequence[str]) -> Behaviour:
    texts = [t for t in turns if t.strip()]
    lengths = [len(tokenize(t)) for t in texts]
    return Behaviour(
        n_turns=len(texts),
        mean_words=float(np.mean(lengths)) if lengths else 0.0,
        length_w1=wasserstein_1d(lengths, [len(tokenize(t)) for t in reference]),
        disfluency=disfluency_rate(texts),
        hedge=hedge_rate(texts),
        **act_shares(texts, reads_value),
        call_turns=per_call,
    )


def family_at(x: np.ndarray, name: str, width: float, description: str = "") -> Family:
    """The family centred on point ``x`` of the scaled box, each range ``width`` each side."""
    ranges: dict[str, tuple[float, float]] = {}
    for (trait, (lo, hi)), v in zip(BOX.items(), x, strict=True):
        a, b = max(0.0, v - width), min(1.0, v + width)
        ranges[trait] = (round(lo + a * (hi - lo), 4), round(lo + b * (hi - lo), 4))
    disfluency = ranges.pop("disfluency")
    return Family.model_validate(
        {
            "name": name,
            "description": description,
            **ranges,
            "noise": {"disfluency": disfluency},
            "trigger_prob": 0.0,
        }
    )


def play_family(
    family: Family, members: int, per_member: int, seed: int, max_turns: int = MAX_TURNS
) -> list[Episode]:
    """Calls of the scripted reference agent with ``members`` draws of ``family``."""
    pool = QuirkPool.of(_SCENARIO)
    base = seeding.seed(seed, "member", family.name)
    specs = [family.sample(base + k, pool) for k in range(members)]
    return evaluate(
        ScriptedAgent(_SCENARIO),
        specs,
        _SCENARIO,
        split="fit",
        per_member=per_member,
        max_turns=max_turns,
    )


def user_turns(episodes: Sequence[Episode]) -> tuple[list[str], float]:
    turns = [t.text for e in episodes for t in e.turns if t.speaker == "user" and t.text.strip()]
    return turns, len(turns) / max(1, len(episodes))


@dataclass(frozen=True)
class Target:
    """What a candidate is scored against: one human part, and the scale of each statistic."""

    part: HumanPart
    stats: Behaviour
    scale: np.ndarray
    embedded: np.ndarray

    @classmethod
    def of(cls, part: HumanPart, cap: int, seed: int) -> Target:
        turns = _sample(part.turns, cap, seed)
        half_a, half_b = turns[::2], turns[1::2]
        a = behaviour(half_a, part.per_call, half_b).vector()
        b = behaviour(half_b, part.per_call, half_a).vector()
        scale = np.maximum(np.abs(a - b), FLOORS)
        matrix, _ = embed(turns, "lexical")
        return cls(part, behaviour(turns, part.per_call, turns), scale, np.nan_to_num(matrix))


def _sample(texts: Sequence[str], cap: int, seed: int) -> list[str]:
    texts = [t for t in texts if t.strip()]
    if len(texts) <= cap:
        return list(texts)
    rng = np.random.default_rng(seed)
    return [texts[i] for i in sorted(rng.choice(len(texts), cap, replace=False))]


class Score(BaseModel):
    distance: float
    stats_gap: float
    auc: float
    behaviour: Behaviour


def score(turns: Sequence[str], per_call: float, target: Target, cap: int, seed: int) -> Score:
    """``distance`` of these user turns from ``target`` (see the module docstring)."""
    turns = _sample(turns, cap, seed)
    b = behaviour(turns, per_call, target.part.turns)
    gap = float((((b.vector() - target.stats.vector()) / target.scale) ** 2).sum())
    auc = float("nan")
    if len(turns) >= 10:
        matrix, _ = embed(turns, "lexical")
        auc = distinguishability_auc(np.nan_to_num(matrix), target.embedded, seed=seed)
    auc_term = 0.0 if np.isnan(auc) else AUC_WEIGHT * max(0.0, auc - 0.5)
    return Score(distance=gap + auc_term, stats_gap=gap, auc=auc, behaviour=b)


class Round(BaseModel):
    round: int
    mean: list[float]
    fit: Score
    validation: Score


class FitResult(BaseModel):
    """Everything a fit did: settings, each round's mean on both parts, the kept round."""

    name: str
    seed: int
    rounds: int
    population: int
    members: int
    per_member: int
    width: float
    cap: int
    human_fit: Behaviour
    human_validation: Behaviour
    history: list[Round]
    kept: int
    family: dict[str, object]
    voice: str | None = None
    """The restyle cache its candidates said (``Lines.source``); None: the persona's lines."""


def fit(
    *,
    name: str = "fitted-aci",
    seed: int = 0,
    rounds: int = 8,
    population: int = 12,
    members: int = 6,
    per_member: int = 3,
    width: float = 0.1,
    cap: int = 300,
    data: str | None = None,
    progress: object = None,
    voice: Lines | None = None,
) -> FitResult:
    """Fit a family to the train split's fit part; keep the round mean best on validation
    (with ``voice``: each candidate saying that cache's lines)."""
    with voiced(name, voice):
        return _fit(name, seed, rounds, population, members, per_member, width, cap, data,
                    progress, voice)  # fmt: skip


def _fit(
    name: str,
    seed: int,
    rounds: int,
    population: int,
    members: int,
    per_member: int,
    width: float,
    cap: int,
    data: str | None,
    progress: object,
    voice: Lines | None,
) -> FitResult:
    fit_part, val_part = train_parts(data)
    fit_t, val_t = Target.of(fit_part, cap, seed), Target.of(val_part, cap, seed)
    rng = seeding.stream(seed, "fit-family")
    cem = CEM(rng.uniform(0.0, 1.0, (population, len(BOX))), elite_frac=0.25)

    def turns_of(x: np.ndarray, k: int) -> tuple[list[str], float]:
        return user_turns(
            play_family(_candidate(x, name, width, voice), members, per_member, seed + k)
        )

    def one_round(r: int) -> Round:
        points = cem.propose(rng, population)
        dist = np.array([score(*turns_of(p, 0), fit_t, cap, seed).distance for p in points])
        cem.fit(points, -dist)  # CEM moves toward the highest fitness: the smallest distance
        mean = cem.mean.copy()
        # the validation part is scored on fresh calls (other member seeds): no reuse of the fit's
        return Round(
            round=r,
            mean=[round(float(v), 4) for v in mean],
            fit=score(*turns_of(mean, 0), fit_t, cap, seed),
            validation=score(*turns_of(mean, 1), val_t, cap, seed),
        )

    history: list[Round] = []
    for r in range(rounds):
        history.append(one_round(r))
        if callable(progress):
            progress(history[-1])
    kept = min(range(len(history)), key=lambda i: history[i].validation.distance)
    family = _candidate(np.array(history[kept].mean), name, width, voice, _description(seed, voice))
    return FitResult(
        name=name,
        seed=seed,
        rounds=rounds,
        population=population,
        members=members,
        per_member=per_member,
        width=width,
        cap=cap,
        human_fit=fit_t.stats,
        human_validation=val_t.stats,
        history=history,
        kept=kept,
        family=family.model_dump(mode="json", exclude_defaults=True) | {"name": name},
        voice=None if voice is None else voice.source,
    )


def _candidate(
    x: np.ndarray, name: str, width: float, voice: Lines | None, description: str = ""
) -> Family:
    """The family at point ``x``: a persona family, or with ``voice`` a restyled one saying it."""
    family = family_at(x, name, width, description)
    return family if voice is None else as_restyled(family, voice)


def _description(seed: int, voice: Lines | None = None) -> str:
    if voice is None:
        return f"fitted to ACI-Bench train patients' behaviour (sim2human fit-family, seed {seed})"
    return (
        f"fitted to ACI-Bench train patients' behaviour saying {voice.source}'s lines "
        f"(sim2human fit-family --voice, seed {seed})"
    )
