"""Extra perturbation noise on a simulator member: domain randomisation and stress mixes.

A member keeps its own ``traits.noise``; an extra mix is layered on top as independent sources
(``1 - (1 - own) * (1 - extra)``), so an extra severity of 0 leaves the member exactly as it was,
an extra severity of 1 is full severity, and the effective severity grows with either one. Only
how the user expresses the profile changes; the profile, and so gold, never does.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from sim2human.errors import UsageError
from sim2human.perturb import validate_mix
from sim2human.simulators.base import SimulatorSpec
from sim2human.types import ordered_range

Range = tuple[float, float]
Ranges = Mapping[str, Range]
"""Perturbation name -> (low, high) severity range, drawn uniformly per episode."""


def layer(own: float, extra: float) -> float:
    """Two independent noise sources of the same kind, as one severity."""
    return 1.0 - (1.0 - own) * (1.0 - extra)


def with_noise(spec: SimulatorSpec, mix: Mapping[str, float]) -> SimulatorSpec:
    """``spec`` with ``mix`` layered onto its noise (the same spec when the mix is all zeros)."""
    extra = {k: v for k, v in validate_mix(mix).items() if v > 0.0}
    if not extra:
        return spec
    noise = dict(spec.traits.noise)
    for name, severity in extra.items():
        noise[name] = layer(noise.get(name, 0.0), severity)
    traits = spec.traits.model_copy(update={"noise": dict(sorted(noise.items()))})
    return spec.model_copy(update={"traits": traits})


def validate_ranges(ranges: Mapping[str, object], where: str = "perturb") -> dict[str, Range]:
    """Check ``name -> [low, high]`` severity ranges; ``UsageError`` names the bad entry."""
    out: dict[str, Range] = {}
    for name, value in ranges.items():
        if not (isinstance(value, list | tuple) and len(value) == 2):
            raise UsageError(f"{where}.{name}: a severity range must be [low, high], got {value!r}")
        lo, hi = validate_mix({name: value[0]})[name], validate_mix({name: value[1]})[name]
        if lo > hi:
            raise UsageError(f"{where}.{name}: low end {lo} is above high end {hi}")
        out[name] = ordered_range((lo, hi))
    return out


def draw_mix(ranges: Ranges, rng: np.random.Generator) -> dict[str, float]:
    """One severity per perturbation, uniform in its range, drawn in sorted name order."""
    return {name: float(rng.uniform(*ranges[name])) for name in sorted(ranges)}
