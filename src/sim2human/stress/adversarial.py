"""Adversarial search: the cheapest perturbation mix that breaks an agent (the red team).

"Breaks" means gold success below ``threshold`` times the agent's clean success on the same
members and episode seeds; "cheapest" means the lowest total severity (the sum over
perturbations). The search is a cross-entropy method over mix *directions* (a softmax of
Gaussian logits, so a direction says which perturbations a mix leans on) with a bisection on
each direction's total severity, pruned by the best total found so far: a direction that does not
break the agent at that total cannot beat it and costs one evaluation. The best mix is then
re-played on fresh episode seeds, so the report does not rest on the search's lucky draws.

Success is a noisy estimate (a few dozen episodes per mix), so "breaks" is a test, not a point
estimate: an evaluation plays chunks of episodes until a one-sided Wilson bound decides
(``SearchConfig.z``), and an undecided mix counts as holding. Chunked evaluation spends episodes
where the verdict is close, which is what successive halving does for configurations.

Why by hand: CEM plus bisection is thirty lines, while the off-the-shelf optimisers (nevergrad,
optuna) minimise one noisy objective and would need the break constraint folded into a penalty,
which makes "cheapest mix that breaks it" a tuning question instead of the search's definition.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from sim2human.agents.base import Agent
from sim2human.errors import UsageError
from sim2human.llm.runtime import LLMRuntime
from sim2human.rollout.evaluate import episode_seed
from sim2human.rollout.play import play
from sim2human.scenarios.core import AnyScenario
from sim2human.simulators.base import SimulatorSpec
from sim2human.stress.sweep import check_perturbations, mix_jobs
from sim2human.types import Episode

MIN_CHUNKS = 2
"""A break needs at least this many chunks: one small chunk of bad luck is not a break."""
MIN_SPREAD = 0.3
"""Floor on the CEM spread of direction logits, so the search keeps exploring."""

Status = Literal["broken", "unconfirmed", "unbreakable", "nothing-to-break", "untestable"]
"""``unconfirmed``: breaking mixes were found but none held on fresh seeds; ``untestable``: the
clean success is so low that even zero successes in ``max_chunks`` could not show a drop."""


@dataclass(frozen=True)
class SearchConfig:
    threshold: float = 0.5
    """Break when gold success is below threshold x clean success."""
    iterations: int = 2
    population: int = 4
    elite: int = 2
    bisect_steps: int = 3
    chunk_episodes: int = 12
    """Episodes in one chunk of an evaluation (spread evenly over the members, at least one
    each), so a search on one frozen simulator plays as many episodes as one on twelve."""
    max_chunks: int = 4
    """An evaluation plays chunks until the break test decides, at most this many."""
    confirm_episodes: int = 48
    confirm_tries: int = 3
    """Breaking mixes re-played on fresh seeds, cheapest first, until one confirms."""
    z: float = 1.645
    """One-sided Wilson bound (95%): a mix breaks the agent only when the upper bound of its
    success is below the target, and holds when the lower bound is at or above it."""
    seed: int = 0
    perturbations: tuple[str, ...] | None = None
    members: Literal["heldout", "train"] = "heldout"
    """Which members a study's search runs on: the held-out ensemble, or what each agent was
    trained on (a frozen condition's one simulator; the scripted agent gets the train split)."""

    def __post_init__(self) -> None:
        if not 0.0 < self.threshold <= 1.0:
            raise UsageError(f"search threshold must be in (0, 1], got {self.threshold}")
        for name in (
            "iterations",
            "population",
            "elite",
            "chunk_episodes",
            "max_chunks",
            "confirm_episodes",
            "confirm_tries",
        ):
            if getattr(self, name) < 1:
                raise UsageError(f"search {name} must be at least 1, got {getattr(self, name)}")
        if self.bisect_steps < 0:
            raise UsageError(f"search bisect_steps must be >= 0, got {self.bisect_steps}")
        check_perturbations(self.perturbations)
        if self.members not in ("heldout", "train"):
            raise UsageError(f"search members must be 'heldout' or 'train', got {self.members!r}")

    def max_episodes(self, n_members: int) -> int:
        """An upper bound on the episodes one search plays (for progress bars)."""
        evals = 2 + self.iterations * self.population * (1 + self.bisect_steps)
        chunk = n_members * self.per_member(n_members)
        confirm = n_members * -(-self.confirm_episodes // n_members)
        return evals * self.max_chunks * chunk + confirm * self.confirm_tries

    def per_member(self, n_members: int) -> int:
        """Episodes per member in one chunk."""
        return -(-self.chunk_episodes // max(1, n_members))


def wilson(successes: int, n: int, z: float) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion (sound at 0 and n successes)."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, float(centre - half)), min(1.0, float(centre + half))


def newcombe(k1: int, n1: int, k2: int, n2: int, z: float = 1.96) -> tuple[float, float, float]:
    """The second proportion minus the first, ``k2/n2 - k1/n1``, with Newcombe's hybrid score
    interval (his method 10: each proportion's Wilson interval, combined; sound at 0 and n)."""
    p1, p2 = k1 / max(1, n1), k2 / max(1, n2)
    (l1, u1), (l2, u2) = wilson(k1, n1, z), wilson(k2, n2, z)
    d = p2 - p1
    return d, d - float(np.hypot(p2 - l2, u1 - p1)), d + float(np.hypot(u2 - p2, p1 - l1))


@dataclass(frozen=True)
class Probe:
    """One evaluated mix: its success over the episodes played, and the break test's verdict
    (against the clean success on the same seeds, which may differ from the overall target)."""

    mix: dict[str, float]
    total: float
    success: float
    n: int
    broke: bool


@dataclass
class SearchResult:
    status: Status
    clean: float
    target: float
    mix: dict[str, float] | None = None
    total: float | None = None
    success: float | None = None
    confirm: dict[str, Any] | None = None
    """Gold success of the best mix on fresh seeds: mean, ci, n, and whether it breaks."""
    probes: list[Probe] = field(default_factory=list)
    episodes: int = 0
    failing: list[Episode] = field(default_factory=list)


def fill(direction: np.ndarray, total: float) -> np.ndarray:
    """Severities along ``direction`` (non-negative, summing to 1) that sum to ``total``, each
    capped at 1: what one perturbation cannot take is shared among the others."""
    d = np.asarray(direction, dtype=float)
    total = min(float(total), float(d.size))
    mix = np.zeros_like(d)
    free = np.ones(d.size, dtype=bool)
    left = total
    for _ in range(d.size):
        weight = d[free].sum()
        if left <= 1e-12 or weight <= 0:
            break
        mix[free] += left * d[free] / weight
        over = mix > 1.0
        left = float((mix[over] - 1.0).sum())
        mix[over] = 1.0
        free &= ~over
    out: np.ndarray = np.minimum(mix, 1.0)
    return out


class _Evaluator:
    """Plays mixes on every member, chunk by chunk until the break test decides; caches
    verdicts. Every mix plays the same episode seeds (common random numbers)."""

    def __init__(
        self,
        agent: Agent,
        members: Sequence[SimulatorSpec],
        scenario: AnyScenario,
        names: tuple[str, ...],
        cfg: SearchConfig,
        on_episode: Callable[[Episode], None] | None,
        max_turns: int,
        llm: LLMRuntime | None = None,
    ) -> None:
        self.agent, self.members, self.scenario = agent, members, scenario
        self.max_turns, self.llm = max_turns, llm
        self.names, self.cfg, self.on_episode = names, cfg, on_episode
        self.per_member = cfg.per_member(len(members))
        self.cache: dict[tuple[float, ...], Probe] = {}
        self.clean_chunks: list[float] = []
        self.probes: list[Probe] = []
        self.episodes = 0

    def mix(self, severities: np.ndarray) -> dict[str, float]:
        return {n: round(float(s), 3) for n, s in zip(self.names, severities, strict=True) if s}

    def play(
        self, mix: Mapping[str, float], per_member: int, start: int, stream: str = "evaluation"
    ) -> list[Episode]:
        jobs = mix_jobs(self.members, mix, per_member, "adversarial", "search", start, stream)
        episodes = play(
            self.agent,
            jobs,
            self.scenario,
            max_turns=self.max_turns,
            on_episode=self.on_episode,
            llm=self.llm,
        )
        self.episodes += len(episodes)
        return episodes

    def clean(self) -> float:
        """Clean success on every chunk's seeds (no early stop: it sets the target); remembers
        it chunk by chunk, so a break test that stops early compares like with like."""
        n = self.per_member * self.cfg.max_chunks
        eps = self.play({}, n, 0)
        chunk_of = {episode_seed(k): k // self.per_member for k in range(n)}
        self.clean_chunks = [
            float(np.mean([e.gold.success for e in eps if chunk_of[e.seed] == chunk]))
            for chunk in range(self.cfg.max_chunks)
        ]
        return float(np.mean([e.gold.success for e in eps]))

    def breaks(self, severities: np.ndarray, threshold: float) -> bool:
        """Does this mix push success below ``threshold`` x the clean success on the same
        episode seeds? Plays chunks until a one-sided Wilson bound decides (at least
        ``MIN_CHUNKS`` before a break); undecided counts as holding."""
        mix = self.mix(severities)
        key = tuple(mix.get(n, 0.0) for n in self.names)
        if key not in self.cache:
            wins = n = 0
            broke = False
            for chunk in range(self.cfg.max_chunks):
                eps = self.play(mix, self.per_member, chunk * self.per_member)
                wins += sum(e.gold.success for e in eps)
                n += len(eps)
                target = threshold * float(np.mean(self.clean_chunks[: chunk + 1]))
                lo, hi = wilson(wins, n, self.cfg.z)
                if lo >= target or (hi < target and chunk + 1 >= MIN_CHUNKS):
                    broke = hi < target
                    break
            probe = Probe(mix, round(sum(mix.values()), 3), wins / max(1, n), n, broke)
            self.cache[key] = probe
            self.probes.append(probe)
        return self.cache[key].broke


def search(
    agent: Agent,
    members: Sequence[SimulatorSpec],
    scenario: AnyScenario,
    cfg: SearchConfig = SearchConfig(),
    *,
    max_turns: int,
    on_episode: Callable[[Episode], None] | None = None,
    llm: LLMRuntime | None = None,
) -> SearchResult:
    """Find the cheapest mix that breaks ``agent`` on ``members`` (see the module docstring;
    ``llm``: the endpoints an agent behind one asks through)."""
    names = check_perturbations(cfg.perturbations)
    ev = _Evaluator(agent, members, scenario, names, cfg, on_episode, max_turns, llm)
    clean = ev.clean()
    target = cfg.threshold * clean
    full = np.ones(len(names))
    if clean == 0.0:
        return _result(ev, "nothing-to-break", clean, target)
    most = len(members) * ev.per_member * cfg.max_chunks
    if wilson(0, most, cfg.z)[1] >= target:
        return _result(ev, "untestable", clean, target)
    if not ev.breaks(full, cfg.threshold):
        return _result(ev, "unbreakable", clean, target)
    best_total = float(len(names))
    rng = np.random.default_rng(cfg.seed)
    mu, sd = np.zeros(len(names)), np.ones(len(names))
    for _ in range(cfg.iterations):
        logits = mu + sd * rng.standard_normal((cfg.population, len(names)))
        costs = []
        for z in logits:
            d = np.exp(z - z.max())
            d /= d.sum()
            hi, lo = best_total, 0.0
            if not ev.breaks(fill(d, hi), cfg.threshold):
                costs.append(np.inf)
                continue
            for _ in range(cfg.bisect_steps):
                mid = (lo + hi) / 2
                if ev.breaks(fill(d, mid), cfg.threshold):
                    hi = mid
                else:
                    lo = mid
            costs.append(hi)
            best_total = min(best_total, hi)
        order = np.argsort(costs)[: cfg.elite]
        elites = logits[[i for i in order if np.isfinite(costs[i])]]
        if len(elites):
            mu, sd = elites.mean(axis=0), np.maximum(elites.std(axis=0), MIN_SPREAD)
    return _confirm(ev, clean, target)


def _confirm(ev: _Evaluator, clean: float, target: float) -> SearchResult:
    """Re-play the cheapest breaking mixes on fresh seeds; the first that still breaks wins."""
    candidates = sorted((p for p in ev.probes if p.broke), key=lambda p: p.total)
    result = _result(ev, "unconfirmed", clean, target)
    for found in candidates[: ev.cfg.confirm_tries]:
        per = -(-ev.cfg.confirm_episodes // len(ev.members))
        eps = ev.play(found.mix, per, 0, "confirmation")
        wins = sum(e.gold.success for e in eps)
        lo, hi = wilson(wins, len(eps), ev.cfg.z)
        breaks = bool(hi < target)
        if result.mix is None or breaks:
            result.mix, result.total, result.success = found.mix, found.total, found.success
            result.confirm = {
                "mean": wins / len(eps),
                "ci": [lo, hi],
                "n": len(eps),
                "breaks": breaks,
                "level": f"one-sided Wilson, z={ev.cfg.z:g}",
            }
            result.failing = [e for e in eps if not e.gold.success][:3]
        if breaks:
            result.status = "broken"
            break
    result.episodes = ev.episodes
    return result


def _result(ev: _Evaluator, status: Status, clean: float, target: float) -> SearchResult:
    return SearchResult(status, clean, target, probes=ev.probes, episodes=ev.episodes)


def result_json(r: SearchResult) -> dict[str, Any]:
    """The search as stress.json stores it, failing transcripts included (as text)."""
    return {
        "status": r.status,
        "clean": r.clean,
        "target": r.target,
        "mix": r.mix,
        "total_severity": r.total,
        "success": r.success,
        "confirm": r.confirm,
        "episodes": r.episodes,
        "probes": [p.__dict__ for p in r.probes],
        "failing": [
            {
                "simulator": e.simulator_id,
                "termination": e.termination.value,
                "fields_wrong": [f for f, ok in e.gold.fields.items() if not ok],
                "turns": [{"speaker": t.speaker, "text": t.text} for t in e.turns],
            }
            for e in r.failing
        ],
    }
