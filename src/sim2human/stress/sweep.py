"""Stress tests: gold success of an agent as each perturbation's severity grows, and robustness.

For one agent and a set of members (normally the held-out ensemble), every perturbation is swept
over a severity grid; the stress mix is layered onto each member's own noise
(``simulators.noise.with_noise``), so severity 0 is the members exactly as they are. Every point
plays the same episode seeds (the same hidden profiles, as in ``evaluate``), so the points of a
curve are paired and the clean point is shared by all curves.

Robustness of one perturbation is the area under its gold-success curve divided by the grid's
span (the mean success over severities, trapezoid rule), normalised by the clean success: 1 means
the perturbation costs nothing, 0 that any amount of it breaks every call. Overall robustness is
the mean over perturbations. Both are ratios, so their CIs come from a paired two-level bootstrap
(training seeds, then episode units within a seed, the scheme of ``metrics.outcomes``), which
``cluster_bootstrap`` cannot give because it bootstraps means of per-episode values only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from sim2human.agents.base import Agent
from sim2human.errors import UsageError
from sim2human.llm.runtime import LLMRuntime
from sim2human.metrics.outcomes import cluster_bootstrap
from sim2human.perturb import PERTURBATIONS, validate_mix
from sim2human.rollout.conversation import Job
from sim2human.rollout.evaluate import episode_seed
from sim2human.rollout.play import play
from sim2human.scenarios.core import AnyScenario
from sim2human.simulators.base import SimulatorSpec
from sim2human.simulators.noise import with_noise
from sim2human.types import Episode

DEFAULT_GRID = (0.0, 0.25, 0.5, 0.75, 1.0)
DEFAULT_PER_MEMBER = 3
"""Episodes per member and point where neither the command nor the study says otherwise."""
CLEAN = "clean"


def check_grid(grid: Sequence[object]) -> tuple[float, ...]:
    """Sorted, de-duplicated severities, always starting at 0 (the clean reference)."""
    if len(grid) == 0:
        raise UsageError("the severity grid is empty: give at least one severity in [0, 1]")
    checked = {0.0}
    for s in grid:
        if isinstance(s, bool) or not isinstance(s, int | float):
            raise UsageError(f"severity grid: {s!r} is not a number in [0, 1]")
        if not 0.0 <= float(s) <= 1.0:
            raise UsageError(f"severity grid: {s!r} is outside [0, 1]")
        checked.add(float(s))
    return tuple(sorted(checked))


def check_perturbations(names: Sequence[str] | None) -> tuple[str, ...]:
    """Known perturbation names in canonical order (all of them when ``names`` is None)."""
    if names is None:
        return tuple(PERTURBATIONS)
    if not names:
        raise UsageError("no perturbations to stress: name at least one")
    return tuple(validate_mix(dict.fromkeys(names, 0.0)))


@dataclass(frozen=True)
class StressPlan:
    """What to sweep: perturbations, a severity grid (starting at 0) and episodes per member."""

    perturbations: tuple[str, ...]
    grid: tuple[float, ...]
    per_member: int
    per_family: tuple[tuple[str, int], ...] | None = None
    """Episodes per member and point for some families, overriding ``per_member``; None: the
    study's own ``eval.per_family``, resolved where the study is read (``weighed_as``). One call
    per visit of 137 real patients weighs them as the study did; three would make them eleven in
    twelve of the units and triple the sweep's cost."""

    @classmethod
    def make(
        cls,
        perturbations: Sequence[str] | None,
        grid: Sequence[object],
        per_member: int,
        per_family: Mapping[str, int] | None = None,
    ) -> StressPlan:
        """``per_family`` None: the study's own counts (``weighed_as``); ``{}``: ``per_member``
        for every member."""
        counts = {"every member": per_member, **(per_family or {})}
        for what, n in counts.items():
            if n < 1:
                raise UsageError(f"episodes per member must be at least 1, got {n} ({what})")
        own = None if per_family is None else tuple(sorted(per_family.items()))
        return cls(check_perturbations(perturbations), check_grid(grid), per_member, own)

    def weighed_as(self, study: Mapping[str, int]) -> StressPlan:
        """This plan with the study's ``eval.per_family`` counts, unless it has its own."""
        if self.per_family is not None:
            return self
        return replace(self, per_family=tuple(sorted(study.items())))

    def points(self) -> list[tuple[str, Mapping[str, float]]]:
        """(key, mix) for the clean point and every perturbation at every severity above 0."""
        out: list[tuple[str, Mapping[str, float]]] = [(CLEAN, {})]
        for name in self.perturbations:
            out += [(point_key(name, s), {name: s}) for s in self.grid if s > 0]
        return out

    def episodes_of(self, spec: SimulatorSpec) -> int:
        """Episodes per point of one member: its family's own count, else ``per_member``."""
        return dict(self.per_family or ()).get(spec.family, self.per_member)

    def n_episodes(self, members: Sequence[SimulatorSpec]) -> int:
        """Episodes the sweep plays on ``members``."""
        return len(self.points()) * sum(self.episodes_of(s) for s in members)


def point_key(name: str, severity: float) -> str:
    return f"{name}@{severity:g}"


def mix_jobs(
    members: Sequence[SimulatorSpec],
    mix: Mapping[str, float],
    per_member: int,
    label: str,
    phase: str,
    start: int = 0,
    stream: str = "evaluation",
) -> list[Job]:
    """One job per (member, episode) with ``mix`` layered on; seeds as in ``evaluate`` (episode
    seeds ``start``, ``start + 1`` ... of ``stream``)."""
    return [
        Job(with_noise(spec, mix), episode_seed(start + k, stream), "heldout", label, phase)
        for spec in members
        for k in range(per_member)
    ]


def unit_index(members: Sequence[SimulatorSpec], plan: StressPlan) -> dict[tuple[str, int], int]:
    """(member id, episode seed) -> position of that unit in every success vector: member by
    member, each member's episode seeds in order."""
    units = [(spec.id, episode_seed(k)) for spec in members for k in range(plan.episodes_of(spec))]
    return {unit: i for i, unit in enumerate(units)}


def sweep(
    agent: Agent,
    members: Sequence[SimulatorSpec],
    scenario: AnyScenario,
    plan: StressPlan,
    *,
    max_turns: int,
    label: str = "",
    on_episode: Callable[[Episode], None] | None = None,
    llm: LLMRuntime | None = None,
) -> dict[str, list[float]]:
    """Gold success (0/1) per unit for every point of ``plan``: ``{key: [success per unit]}``
    (``llm``: the endpoints an agent behind one asks through).

    All points are played in one batched ``play`` (episodes of different points share forward
    passes); units are ordered member by member, episode seed by episode seed."""
    jobs = [
        job
        for key, mix in plan.points()
        for spec in members
        for job in mix_jobs([spec], mix, plan.episodes_of(spec), label, f"stress/{key}")
    ]
    index = unit_index(members, plan)
    n_units = len(index)
    out = {key: [float("nan")] * n_units for key, _ in plan.points()}
    for e in play(agent, jobs, scenario, max_turns=max_turns, on_episode=on_episode, llm=llm):
        out[e.phase.removeprefix("stress/")][index[(e.simulator_id, e.seed)]] = float(
            e.gold.success
        )
    return out


# --- robustness ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Curves:
    """One agent's sweep results, seed by seed: ``success[key]`` has shape (seeds, units)."""

    plan: StressPlan
    seeds: tuple[int, ...]
    success: dict[str, np.ndarray]

    @classmethod
    def from_sweeps(
        cls, plan: StressPlan, sweeps: Mapping[int, Mapping[str, Sequence[float]]]
    ) -> Curves:
        seeds = tuple(sorted(sweeps))
        keys = [k for k, _ in plan.points()]
        return cls(plan, seeds, {k: np.asarray([sweeps[s][k] for s in seeds]) for k in keys})

    def tensor(self) -> np.ndarray:
        """Success as (perturbations, seeds, units, grid), the clean column shared."""
        p = self.plan
        cols = [
            [self.success[CLEAN if s == 0 else point_key(name, s)] for s in p.grid]
            for name in p.perturbations
        ]
        return np.moveaxis(np.asarray(cols, dtype=float), 1, -1)


def robustness_of(means: np.ndarray, grid: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    """(normalised AUC, absolute AUC) per perturbation from mean success ``(P, G)``.

    The normalised score is NaN where the clean success is 0 (nothing to lose)."""
    g = np.asarray(grid, dtype=float)
    span = g[-1] - g[0]
    if span > 0:
        auc = np.sum((means[:, 1:] + means[:, :-1]) / 2 * np.diff(g), axis=-1) / span
    else:
        auc = means[:, 0].copy()
    clean = means[:, 0]
    with np.errstate(divide="ignore", invalid="ignore"):
        norm = np.where(clean > 0, auc / np.where(clean > 0, clean, 1.0), np.nan)
    return norm, auc


def _estimate(point: float, samples: np.ndarray, level: float = 0.95) -> dict[str, Any]:
    """``{"mean", "ci"}``; None where undefined (a clean success of 0 leaves nothing to lose)."""
    if not np.isfinite(point):
        return {"mean": None, "ci": [None, None]}
    ok = samples[np.isfinite(samples)]
    if ok.size == 0:
        return {"mean": point, "ci": [None, None]}
    lo, hi = np.quantile(ok, [(1 - level) / 2, 1 - (1 - level) / 2])
    return {"mean": point, "ci": [float(lo), float(hi)]}


def summarise_curves(curves: Curves, *, n_boot: int = 1000, seed: int = 0) -> dict[str, Any]:
    """stress.json's entry for one agent: overall and per-perturbation robustness with CIs,
    absolute AUCs, the clean success and every curve point (mean, CI, n)."""
    plan = curves.plan
    x = curves.tensor()  # (P, S, U, G)
    n_seeds, n_units = x.shape[1], x.shape[2]
    norm, auc = robustness_of(x.mean(axis=(1, 2)), plan.grid)
    rng = np.random.default_rng(seed)
    boot_norm = np.empty((n_boot, len(plan.perturbations)))
    boot_auc = np.empty_like(boot_norm)
    for b in range(n_boot):
        s: np.ndarray = rng.integers(n_seeds, size=(n_seeds, 1))
        u: np.ndarray = rng.integers(n_units, size=(n_seeds, n_units))
        means = x[:, s, u, :].mean(axis=(1, 2))
        boot_norm[b], boot_auc[b] = robustness_of(means, plan.grid)
    with np.errstate(invalid="ignore"):
        overall_boot = boot_norm.mean(axis=1)
    clusters = np.repeat(curves.seeds, n_units)
    clean = cluster_bootstrap(
        curves.success[CLEAN].ravel().tolist(), clusters.tolist(), n_boot=n_boot, seed=seed
    )
    curve_points: dict[str, list[dict[str, Any]]] = {}
    for i, name in enumerate(plan.perturbations):
        curve_points[name] = []
        for j, sev in enumerate(plan.grid):
            est = cluster_bootstrap(
                x[i, :, :, j].ravel().tolist(), clusters.tolist(), n_boot=n_boot, seed=seed
            )
            curve_points[name].append({"severity": sev, **est.stored()})
    return {
        "seeds": list(curves.seeds),
        "n_units": int(n_seeds * n_units),
        "clean": clean.stored(),
        "overall": _estimate(float(np.mean(norm)), overall_boot),
        "per_perturbation": {
            name: _estimate(float(norm[i]), boot_norm[:, i])
            for i, name in enumerate(plan.perturbations)
        },
        "overall_auc": _estimate(float(np.mean(auc)), boot_auc.mean(axis=1)),
        "auc": {
            name: _estimate(float(auc[i]), boot_auc[:, i])
            for i, name in enumerate(plan.perturbations)
        },
        "curves": curve_points,
    }
