"""``evolve``: an ensemble that changes while the agent trains on it.

Every ``every_updates`` trainer updates each member with enough recent episodes is scored on
- exploitation: how far its own satisfaction sits above what a panel of k other members says
  about the same transcripts (ensemble judging; with ``oracle_gold``: its proxy-gold gap), plus
  ``narrowing_weight`` x how much its proxy rose while the agent's behaviour with it narrowed
  (act entropy fell), both relative to the population's median (learning lifts them all);
- difficulty: 1 - the panel's mean score (with ``oracle_gold``: 1 - gold success).
A member is exploited when that sum exceeds ``exploit_threshold`` and its gap is above the
median. Then it retires the most exploited member (or, with a full population and nothing
exploited, the most mastered one), spawns members near the agent's failures (mutations of the
hardest member) and from a cross-entropy search over the trait box that proposes members the
agent fails with, each kept only if plausible (``traits``). Retired members become frozen
snapshots, sampled with a bounded total share, as fictitious co-play keeps frozen partners. Every
change is an event with its reason, which the study logs and the report draws as a timeline.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from pydantic import Field, model_validator

from sim2human import seeding
from sim2human.errors import UsageError
from sim2human.population.panel import JudgePanel
from sim2human.samplers.cem import CEM
from sim2human.samplers.feedback import BatchInfo
from sim2human.samplers.trait_box import (
    EMOTIONS,
    Solvability,
    fresh_quirks,
    from_vector,
    mutate,
    to_vector,
    vectors,
)
from sim2human.scenarios.core import AnyScenario
from sim2human.simulators.base import QuirkPool, SimulatorSpec
from sim2human.types import Episode, FrozenConfig

EVOLVED_FAMILY = "evolved"
HISTORY = 256
"""The cross-entropy search refits to the latest this many (traits, difficulty) observations."""


class EvolveArgs(FrozenConfig):
    """Bounded so that a round stays affordable: a round may cost up to ``spawn_per_round x
    tries x solvable_episodes`` solvability episodes and every episode ``judges`` judgements."""

    every_updates: int = Field(
        10, ge=1, le=1_000_000, description="trainer updates between rounds (<= 10^6)"
    )
    window: int = Field(
        64, ge=4, le=100_000, description="recent episodes per member behind its scores (<= 10^5)"
    )
    min_episodes: int = Field(
        12, ge=2, le=100_000, description="episodes before a member is scored (<= 10^5)"
    )
    judges: int = Field(2, ge=1, le=100, description="k: panel members judging each episode")
    exploit_threshold: float = Field(0.15, ge=0.0, le=1.0, description="own - panel score gap")
    narrowing_weight: float = Field(0.25, ge=0.0, le=100.0, description="(<= 100)")
    mastered_threshold: float = Field(0.2, ge=0.0, le=1.0, description="difficulty below this")
    max_members: int = Field(16, ge=2, le=1_000, description="active members at most (<= 1000)")
    min_members: int = Field(6, ge=2, le=1_000, description="active members at least")
    spawn_per_round: int = Field(2, ge=0, le=100, description="(<= 100)")
    retire_per_round: int = Field(1, ge=0, le=100, description="(<= 100)")
    mutation_scale: float = Field(
        0.12, gt=0.0, le=10.0, description="std of a mutation step in the unit trait box (<= 10)"
    )
    snapshot_share: float = Field(0.2, ge=0.0, lt=1.0, description="0 disables snapshots")
    max_snapshots: int = Field(6, ge=0, le=1_000, description="(<= 1000)")
    solvable_episodes: int = Field(12, ge=1, le=1_000, description="(<= 1000)")
    min_solvable: float = Field(0.25, ge=0.0, le=1.0)
    tries: int = Field(
        6, ge=1, le=100, description="candidates tried per spawn before giving up (<= 100)"
    )

    @model_validator(mode="after")
    def _ordered(self) -> EvolveArgs:
        if self.min_members > self.max_members:
            raise ValueError(
                f"min_members {self.min_members} is above max_members {self.max_members}"
            )
        return self


@dataclass
class _Track:
    """A member's recent record: own score, panel score, gold, and acts used, per episode."""

    own: deque[float]
    panel: deque[float]
    gold: deque[float]
    acts: deque[Counter[str]]
    born: int
    seen: int = 0

    @classmethod
    def new(cls, window: int, born: int) -> _Track:
        return cls(
            deque(maxlen=window),
            deque(maxlen=window),
            deque(maxlen=window),
            deque(maxlen=window),
            born,
        )


@dataclass
class _Score:
    member: str
    n: int
    own: float
    panel: float
    gap: float
    narrowing: float
    difficulty: float
    exploit: float = 0.0
    note: str = field(default="")


def _entropy(counts: Counter[str]) -> float:
    total = sum(counts.values())
    if not total:
        return 0.0
    p = np.asarray(list(counts.values()), dtype=float) / total
    return float(-(p * np.log(p)).sum())


class EvolveSampler:
    name = "evolve"

    def __init__(
        self,
        members: Sequence[SimulatorSpec],
        scenario: AnyScenario,
        pool: QuirkPool,
        args: EvolveArgs,
        *,
        solvable: Solvability,
        oracle_gold: bool = False,
        seed: int = 0,
    ) -> None:
        if len(members) < 2:
            raise UsageError("sampler 'evolve' needs at least two training members")
        self.args, self.scenario, self.pool, self.oracle_gold = args, scenario, pool, oracle_gold
        self.solvable = solvable
        self.rng = seeding.stream(seed, "evolve")
        self.active: list[SimulatorSpec] = list(members)
        self.snapshots: list[SimulatorSpec] = []
        self.tracks = {m.id: _Track.new(args.window, 0) for m in members}
        self.panel = JudgePanel(members, scenario, args.judges, seed)
        self.cem = CEM(vectors(members))
        self.updates = 0
        self.seen = 0
        self.spawned = 0
        self.history: list[tuple[np.ndarray, float]] = []
        self._events: list[dict[str, object]] = []

    # -- sampling -----------------------------------------------------------------------------

    def snapshot_mass(self) -> float:
        if not self.snapshots or self.args.snapshot_share == 0:
            return 0.0
        n = len(self.active) + len(self.snapshots)
        return min(self.args.snapshot_share, len(self.snapshots) / n)

    def next(self, rng: np.random.Generator) -> SimulatorSpec:
        if rng.random() < self.snapshot_mass():
            return self.snapshots[int(rng.integers(len(self.snapshots)))]
        return self.active[int(rng.integers(len(self.active)))]

    def shares(self) -> dict[str, float]:
        snap = self.snapshot_mass()
        out = {m.id: (1 - snap) / len(self.active) for m in self.active}
        out.update({m.id: snap / len(self.snapshots) for m in self.snapshots} if snap else {})
        return out

    def drain_events(self) -> list[dict[str, object]]:
        out, self._events = self._events, []
        return out

    # -- learning -----------------------------------------------------------------------------

    def update(self, episodes: Sequence[Episode], info: BatchInfo | None = None) -> None:
        self.updates += 1
        self.seen += len(episodes)
        for e in episodes:
            track = self.tracks.get(e.simulator_id)
            if track is None or e.simulator_id in {s.id for s in self.snapshots}:
                continue
            track.own.append(e.proxy)
            track.panel.append(float(np.mean(self.panel.others(e))))
            track.gold.append(float(e.gold.success))
            track.acts.append(Counter(t.act or t.text for t in e.agent_turns))
            track.seen += 1
        if self.updates % self.args.every_updates == 0:
            self.evolve()

    def scores(self) -> list[_Score]:
        """Exploitation and difficulty of every active member with enough recent episodes."""
        out = []
        for m in self.active:
            t = self.tracks[m.id]
            n = len(t.own)
            if n < self.args.min_episodes:
                continue
            own, panel, gold = np.asarray(t.own), np.asarray(t.panel), np.asarray(t.gold)
            half = n // 2
            rise = float(own[half:].mean() - own[:half].mean())
            old, new = Counter[str](), Counter[str]()
            for i, c in enumerate(t.acts):
                (old if i < half else new).update(c)
            narrowed = _entropy(new) < _entropy(old)
            gap = float((own - gold).mean()) if self.oracle_gold else float((own - panel).mean())
            difficulty = 1 - float(gold.mean() if self.oracle_gold else panel.mean())
            out.append(
                _Score(
                    m.id,
                    n,
                    float(own.mean()),
                    float(panel.mean()),
                    gap,
                    max(0.0, rise) if narrowed else 0.0,
                    difficulty,
                )
            )
        if out:  # relative to the population: learning lifts and narrows every member at once
            gap_median = float(np.median([s.gap for s in out]))
            narrow_median = float(np.median([s.narrowing for s in out]))
            w = self.args.narrowing_weight
            for s in out:
                s.exploit = s.gap - gap_median + w * (s.narrowing - narrow_median)
        return out

    def evolve(self) -> None:
        """One round: retire, snapshot, refit the search, spawn."""
        scored = self.scores()
        by_id = {s.member: s for s in scored}
        for s in scored:
            spec = next(m for m in self.active if m.id == s.member)
            self.history.append((to_vector(spec.traits), s.difficulty))
        self.history = self.history[-HISTORY:]
        self._retire(scored)
        if self.history:
            self.cem.fit(
                np.stack([v for v, _ in self.history]), np.asarray([d for _, d in self.history])
            )
        hardest = max(scored, key=lambda s: s.difficulty, default=None)
        k = 0
        while len(self.active) < self.args.max_members and k < self.args.spawn_per_round:
            parent = by_id.get(hardest.member) if hardest is not None and k % 2 == 0 else None
            self._spawn(parent)
            k += 1

    def _retire(self, scored: list[_Score]) -> None:
        a = self.args
        room = len(self.active) - a.min_members
        median = float(np.median([s.gap for s in scored])) if scored else 0.0
        exploited = sorted(
            (
                s
                for s in scored  # narrowing alone never retires: it needs the gap
                if s.exploit > a.exploit_threshold and s.gap > median
            ),
            key=lambda s: -s.exploit,
        )[: min(a.retire_per_round, room)]
        for s in exploited:
            what = "proxy-gold gap" if self.oracle_gold else "own score above the panel's"
            reason = (
                f"exploited: {what} {s.gap:+.2f} over {s.n} episodes, exploitation "
                f"{s.exploit:+.2f} above the population's median"
                + (
                    f"; its proxy rose {s.narrowing:.2f} while the agent's acts narrowed"
                    if s.narrowing
                    else ""
                )
            )
            self._retire_one(s, reason)
        if exploited or len(self.active) < a.max_members or room <= 0:
            return
        easiest = min(scored, key=lambda s: s.difficulty, default=None)
        if easiest is not None and easiest.difficulty < a.mastered_threshold:
            self._retire_one(
                easiest,
                f"mastered: difficulty {easiest.difficulty:.2f} < "
                f"{a.mastered_threshold} with a full population",
            )

    def _retire_one(self, s: _Score, reason: str) -> None:
        spec = next(m for m in self.active if m.id == s.member)
        self.active.remove(spec)
        detail = {
            "exploit": round(s.exploit, 3),
            "difficulty": round(s.difficulty, 3),
            "own": round(s.own, 3),
            "panel": round(s.panel, 3),
        }
        self._event("retire", spec.id, reason, **detail)
        if self.args.snapshot_share > 0 and self.args.max_snapshots > 0:
            self.snapshots.append(spec)
            self._event("snapshot", spec.id, "frozen copy kept for replay at a bounded share")
            if len(self.snapshots) > self.args.max_snapshots:
                dropped = self.snapshots.pop(0)
                self._event("drop", dropped.id, "oldest snapshot over max_snapshots")
        self.panel.set_members([*self.active, *self.snapshots])

    def _spawn(self, parent: _Score | None) -> None:
        """A mutation of the hardest member (``parent``) or a CEM proposal, if plausible."""
        a = self.args
        parent_spec = next((m for m in self.active if parent and m.id == parent.member), None)
        for attempt in range(1, a.tries + 1):
            if parent_spec is not None:
                traits = mutate(parent_spec.traits, self.rng, self.pool, a.mutation_scale)
                family = parent_spec.family
                how = f"mutation of the hardest member {parent_spec.id}"
            else:
                emotion = EMOTIONS[int(self.rng.integers(len(EMOTIONS)))]
                vector = self.cem.propose(self.rng, 1)[0]
                traits = from_vector(vector, emotion, fresh_quirks(self.rng, self.pool))
                family = EVOLVED_FAMILY
                how = "cross-entropy search proposal"
            self.spawned += 1
            seed = int(self.rng.integers(2**31))
            spec = SimulatorSpec(
                id=f"{family}-evo{self.spawned}", family=family, traits=traits, seed=seed
            )
            ok, wins, played = self.solvable(spec, a.solvable_episodes, a.min_solvable, seed)
            if ok:
                self.active.append(spec)
                self.tracks[spec.id] = _Track.new(a.window, self.updates)
                self.panel.set_members([*self.active, *self.snapshots])
                self._event(
                    "spawn",
                    spec.id,
                    f"{how}; the scripted agent solved {wins} of "
                    f"{played} calls (attempt {attempt})",
                    parent=parent_spec.id if parent_spec else None,
                    traits=_brief(spec),
                )
                return
        self._event("reject", "", f"no plausible candidate in {a.tries} tries ({how})")

    def _event(self, kind: str, member: str, reason: str, **extra: object) -> None:
        self._events.append(
            {
                "kind": kind,
                "member": member,
                "update": self.updates,
                "episodes_seen": self.seen,
                "reason": reason,
                **extra,
            }
        )


def _brief(spec: SimulatorSpec) -> dict[str, object]:
    t = spec.traits
    return {
        "cooperativeness": round(t.cooperativeness, 2),
        "patience": t.patience,
        "jargon_confusion": round(t.jargon_confusion, 2),
        "silence_rate": round(t.silence_rate, 2),
        "emotion": t.emotion,
        "noise": {k: round(v, 2) for k, v in t.noise.items()},
    }
