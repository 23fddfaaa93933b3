"""The trait space ``evolve`` searches: a box of plausible users, mutation, and solvability.

Plausibility has two parts. The box bounds each trait to what a real caller could be (never
one who refuses to ever answer: cooperativeness stays >= 0.4, patience >= 12). And a candidate
must be solvable, as PAIRED requires: the scripted reference agent has to succeed with it at least
``min_solvable`` of the time. The box is fixed a priori and holds only the kinds of traits the
training families have (typos, disfluency; calm or anxious callers): no held-out family is looked
at, so no evolved member is tuned toward the held-out test.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from sim2human.simulators.base import Emotion, QuirkPool, Quirks, SimulatorSpec, Traits

BOX: dict[str, tuple[float, float]] = {
    "cooperativeness": (0.4, 1.0),
    "verbosity": (0.0, 0.8),
    "patience": (12, 28),
    "tolerance": (2, 8),
    "jargon_confusion": (0.0, 0.6),
    "tangent_rate": (0.0, 0.45),
    "silence_rate": (0.0, 0.2),
    "capacity": (0.3, 1.0),
    "noise.typos": (0.0, 0.4),
    "noise.disfluency": (0.0, 0.5),
}
DIMS = tuple(BOX)
INTEGER = ("patience", "tolerance")
EMOTIONS: tuple[Emotion, ...] = ("calm", "anxious")

Solvability = Callable[[SimulatorSpec, int, float, int], tuple[bool, int, int]]
"""(member, episodes, min success rate, seed) -> (solvable?, successes, episodes played); built
by ``rollout.solvability.solvability`` and handed to ``evolve``."""


def to_vector(traits: Traits) -> np.ndarray:
    """Traits -> [0, 1]^d, each dimension scaled by its box."""
    out = []
    for d in DIMS:
        lo, hi = BOX[d]
        raw = traits.noise.get(d[6:], 0.0) if d.startswith("noise.") else getattr(traits, d)
        out.append((float(raw) - lo) / (hi - lo))
    return np.asarray(np.clip(np.asarray(out), 0.0, 1.0))


def from_vector(v: np.ndarray, emotion: Emotion, quirks: Quirks) -> Traits:
    """[0, 1]^d -> Traits inside the box (values outside [0, 1] are clipped)."""
    v = np.clip(v, 0.0, 1.0)
    values: dict[str, float] = {}
    noise: dict[str, float] = {}
    for d, x in zip(DIMS, v, strict=True):
        lo, hi = BOX[d]
        raw = lo + float(x) * (hi - lo)
        if d.startswith("noise."):
            if raw > 0.01:
                noise[d[6:]] = round(raw, 4)
        else:
            values[d] = round(raw) if d in INTEGER else round(raw, 4)
    return Traits(**values, emotion=emotion, noise=noise, quirks=quirks)


def fresh_quirks(rng: np.random.Generator, pool: QuirkPool) -> Quirks:
    """A new quirk draw with the training families' quirk distribution."""
    tastes = [str(p) for p in rng.permutation(pool.liked)][: int(rng.integers(1, 3))]
    likes = rng.random(len(tastes)) < 0.5
    triggers = [t for t in pool.triggers if t not in tastes]
    trigger = str(rng.choice(triggers)) if triggers and rng.random() < 0.15 else None
    return Quirks(
        over_rewarded=tuple(p for p, like in zip(tastes, likes, strict=True) if like),
        disliked=tuple(p for p, like in zip(tastes, likes, strict=True) if not like),
        bonus=float(rng.uniform(0.05, 0.15)),
        trigger=trigger,
        leniency=float(rng.uniform(0.0, 0.3)),
    )


def mutate(traits: Traits, rng: np.random.Generator, pool: QuirkPool, scale: float) -> Traits:
    """Gaussian steps in the scaled box, a fresh quirk draw; emotion flips with p = 0.2."""
    v = to_vector(traits) + rng.normal(0.0, scale, len(DIMS))
    emotion = traits.emotion if traits.emotion in EMOTIONS else "calm"
    if rng.random() < 0.2:
        emotion = EMOTIONS[int(rng.integers(len(EMOTIONS)))]
    return from_vector(v, emotion, fresh_quirks(rng, pool))


def vectors(specs: Sequence[SimulatorSpec]) -> np.ndarray:
    return np.stack([to_vector(s.traits) for s in specs])
