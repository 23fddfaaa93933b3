"""Seeded, composable perturbations of a user's turn text, each with a severity in [0, 1].

Used for domain randomisation while training and for stress tests afterwards::

    rng = np.random.default_rng(7)
    perturb("I've had chest pain for 3 days.", "typos", 0.5, rng)
    compose(text, PRESETS["noisy-line"], rng)

Contract, for every perturbation (``tests/perturb/test_perturb.py`` checks each point):

- severity 0 returns the text unchanged, exactly; severity outside [0, 1] is a ``UsageError``;
- the same generator state gives the same output;
- the measured effect grows on average with severity (character error rate for ``typos``,
  ``asr`` and ``disfluency``, dropped share for ``silence``, rate of replaced or extended turns
  for the others);
- no field value is invented: a perturbation may garble or drop a number, date, medicine or
  yes/no that was said (``fifteen`` -> ``fifty`` is what recognisers do), but never produce one
  from ordinary words, and inserted sentences carry none.

``compose`` applies a mix in the fixed order of ``PERTURBATIONS`` (what is said, then how it is
said, then the channel): misunderstanding, tangents, codeswitch, disfluency, silence, asr, typos.
Each perturbation in a mix gets its own child generator, drawn for every name in that order
whether or not it is in the mix, so adding ``typos`` to a mix does not change what ``asr`` does.

Libraries: none beyond numpy. Unknown-name suggestions use the standard library's ``difflib``;
the ASR confusions are a small table (see ``asr.py`` for why not ``jellyfish``). Word tables are
inline because they are small; they would move to a data file if they grew.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from sim2human.errors import UsageError

from .asr import asr
from .discourse import codeswitch, misunderstanding, tangents
from .noise import disfluency, silence, typos

__all__ = [
    "PERTURBATIONS",
    "PRESETS",
    "NoiseStream",
    "Perturbation",
    "compose",
    "perturb",
    "validate_mix",
]


def _check_severity(name: str, severity: object) -> float:
    if isinstance(severity, int | float | np.integer | np.floating) and not isinstance(
        severity, bool
    ):
        value = float(severity)
        if math.isfinite(value) and 0.0 <= value <= 1.0:
            return value
    raise UsageError(
        f"severity for perturbation {name!r} must be a number in [0, 1], got {severity!r}"
    )


@dataclass(frozen=True)
class Perturbation:
    """A named text transform; ``fn(text, severity, rng)`` is only called for severity > 0."""

    name: str
    description: str
    fn: Callable[[str, float, np.random.Generator], str]

    def __call__(self, text: str, severity: float, rng: np.random.Generator) -> str:
        s = _check_severity(self.name, severity)
        return text if s == 0.0 else self.fn(text, s, rng)


def _table(*items: Perturbation) -> Mapping[str, Perturbation]:
    return MappingProxyType({p.name: p for p in items})


PERTURBATIONS: Mapping[str, Perturbation] = _table(
    Perturbation(
        "misunderstanding",
        "answers a different question: the turn becomes an off-target reply w.p. severity",
        misunderstanding,
    ),
    Perturbation(
        "tangents",
        "adds off-topic story sentences before or after the answer",
        tangents,
    ),
    Perturbation(
        "codeswitch",
        "switches common words to Spanish (my chest -> mi pecho)",
        codeswitch,
    ),
    Perturbation(
        "disfluency",
        "inserts fillers (um, uh, like), repeated words and self-corrections (I mean)",
        disfluency,
    ),
    Perturbation(
        "silence",
        "trails off part way through the answer, or at high severity says nothing at all",
        silence,
    ),
    Perturbation(
        "asr",
        "speech-recogniser confusions: homophones, swallowed endings, misheard numbers and dates",
        asr,
    ),
    Perturbation(
        "typos",
        "keyboard slips: neighbour keys, dropped, doubled and transposed letters",
        typos,
    ),
)
"""Every perturbation by name, in the canonical order ``compose`` applies them."""

PRESETS: Mapping[str, Mapping[str, float]] = MappingProxyType(
    {
        name: MappingProxyType(mix)
        for name, mix in {
            "clean": {},
            "noisy-line": {"asr": 0.6, "typos": 0.3, "silence": 0.2, "disfluency": 0.3},
            "hurried-typist": {"typos": 0.6, "silence": 0.2},
            "rambling": {"tangents": 0.6, "disfluency": 0.5},
            "confused": {"misunderstanding": 0.4, "tangents": 0.3, "disfluency": 0.4},
            "bilingual": {"codeswitch": 0.5, "asr": 0.3},
            "adversarial": dict.fromkeys(PERTURBATIONS, 0.7),
        }.items()
    }
)
"""Named mixes for stress tests and domain randomisation; ``clean`` is the identity."""


def _lookup(name: str) -> Perturbation:
    try:
        return PERTURBATIONS[name]
    except (KeyError, TypeError):
        hint = difflib.get_close_matches(str(name), PERTURBATIONS, n=1)
        known = ", ".join(PERTURBATIONS)
        suggest = f"; did you mean {hint[0]!r}?" if hint else ""
        raise UsageError(f"unknown perturbation {name!r} (known: {known}){suggest}") from None


def perturb(text: str, name: str, severity: float, rng: np.random.Generator) -> str:
    """Apply one perturbation by name."""
    return _lookup(name)(text, severity, rng)


def validate_mix(mix: Mapping[str, float]) -> dict[str, float]:
    """Check a mix (name -> severity); return it as floats in canonical order.

    Raises ``UsageError`` naming the first unknown perturbation or out-of-range severity."""
    if not isinstance(mix, Mapping):
        raise UsageError(f"a perturbation mix must be a mapping of name -> severity, got {mix!r}")
    checked = {_lookup(name).name: _check_severity(name, sev) for name, sev in mix.items()}
    return {name: checked[name] for name in PERTURBATIONS if name in checked}


def compose(text: str, mix: Mapping[str, float], rng: np.random.Generator) -> str:
    """Apply every perturbation in ``mix`` in canonical order (see the module docstring)."""
    checked = validate_mix(mix)
    seeds = rng.integers(0, 2**63 - 1, size=len(PERTURBATIONS))
    for seed, (name, p) in zip(seeds, PERTURBATIONS.items(), strict=True):
        if checked.get(name, 0.0) > 0.0:
            text = p(text, checked[name], np.random.default_rng(int(seed)))
    return text


class NoiseStream:
    """``compose`` for a whole conversation: one generator per perturbation, made once.

    The same independence as ``compose`` (each perturbation draws from its own stream), without
    seeding new generators on every turn, which is most of the cost of a noisy simulated user.
    """

    def __init__(self, mix: Mapping[str, float], rng: np.random.Generator) -> None:
        self.mix = {n: s for n, s in validate_mix(mix).items() if s > 0.0}
        seeds = rng.integers(0, 2**63 - 1, size=len(PERTURBATIONS))
        self.rngs = {
            name: np.random.default_rng(int(seed))
            for seed, name in zip(seeds, PERTURBATIONS, strict=True)
            if name in self.mix
        }

    def __call__(self, text: str, scale: float = 1.0) -> str:
        """``text`` through every perturbation, severities multiplied by ``scale`` (a caller
        repeating themselves slowly and carefully is a softer version of the same line)."""
        for name, severity in self.mix.items():  # validated once, in __init__
            if severity * scale > 0.0:
                text = PERTURBATIONS[name].fn(text, min(1.0, severity * scale), self.rngs[name])
        return text
