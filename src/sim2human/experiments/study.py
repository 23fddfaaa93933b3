"""Studies: conditions x seeds -> trained agents -> held-out evaluation -> a table with CIs.

Each (condition, seed) is a sub-run in its own process (``conditions/<name>/seed-<k>/``), so a
2-core laptop trains two agents at once. Sub-runs write episodes as they finish; the study only
aggregates what they stored.
"""

from __future__ import annotations

import time
import zlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import torch

from sim2human.agents.base import Agent
from sim2human.agents.policy import PolicyAgent
from sim2human.agents.scripted import ScriptedAgent
from sim2human.ensemble import Ensemble
from sim2human.experiments.config import Condition, StudyConfig
from sim2human.judging import EnsembleJudge, JudgePanel
from sim2human.llm.runtime import LLMRuntime
from sim2human.metrics.outcomes import Estimate, by, cluster_bootstrap, member_std, summarise
from sim2human.metrics.robustness import curve_mean, episodes_to_reach, worst_decile_estimate
from sim2human.rollout.checks import solvability
from sim2human.rollout.evaluate import evaluate
from sim2human.samplers.build import MixedSampler, Sampler, build_sampler
from sim2human.samplers.feedback import BatchInfo, Reporting, draw_level
from sim2human.scenarios.intake import IntakeScenario
from sim2human.simulators.base import QuirkPool, SimulatorSpec
from sim2human.simulators.families import get_family
from sim2human.simulators.llm import llm_spec
from sim2human.simulators.replay import REPLAY_FAMILIES, reply_shares
from sim2human.store import (
    CHECKPOINT,
    CONFIG,
    EPISODES,
    MEMBERS,
    METRICS,
    SUMMARY,
    EpisodeLog,
    JsonlWriter,
    iter_jsonl,
    read_episodes,
    read_json,
    write_json,
)
from sim2human.train.config import PPOConfig, UpdateStats
from sim2human.train.ppo import train
from sim2human.train.telemetry import HeldoutProbe
from sim2human.types import Episode

Progress = Callable[[int], None]
"""Called with a number of finished episodes (training or evaluation)."""
TRAIN_LOG_EVERY = 10
"""Keep every tenth update's training episodes in ``episodes.jsonl`` (all of them are summarised
in ``metrics.jsonl``); storing all of them would make a run directory hundreds of MB."""
SAMPLER_LOG = "sampler.jsonl"
"""Per update: the sampler's member shares, the batch's member counts, and its events (why)."""
CURVE_LOG = "heldout_curve.jsonl"
"""Held-out gold on a fixed subset every ``train.eval_every`` updates (logged, never used)."""


@dataclass(frozen=True)
class StudyWorld:
    """What every sub-run of a study shares: the scenario, the quirk pool and the ensemble."""

    scenario: IntakeScenario
    pool: QuirkPool
    ensemble: Ensemble
    """Held-out members include the ``llm`` held-out ones (``ensemble.llm.heldout``)."""
    max_turns: int
    """Agent turns before a conversation is cut off (``train.max_turns``), wherever it is played."""
    llm_train: tuple[SimulatorSpec, ...] = ()
    """``llm`` members that mixed conditions (``llm_share``) train on."""

    @classmethod
    def build(cls, cfg: StudyConfig) -> StudyWorld:
        scenario = IntakeScenario()
        pool = QuirkPool.from_acts(scenario.acts)
        e = cfg.ensemble
        ensemble = Ensemble.from_families(e.train, e.heldout, e.members_per_family, pool, e.seed)
        llm_train: tuple[SimulatorSpec, ...] = ()
        if e.llm is not None:
            if e.llm.train is not None:
                llm_train = e.llm.train.draw(e.seed * 10_000 + 7_000, pool, "train")
            if e.llm.heldout is not None:
                held = e.llm.heldout.draw(e.seed * 10_000 + 8_000, pool, "heldout")
                ensemble = replace(ensemble, heldout=ensemble.heldout + held)
        if (hr := e.human_replay) is not None:
            extra = hr.draw(scenario)
            ensemble = replace(ensemble, **{hr.split: getattr(ensemble, hr.split) + extra})
        return cls(scenario, pool, ensemble, cfg.train.max_turns, llm_train)

    def fixed_spec(self, condition: Condition) -> SimulatorSpec | None:
        ref = condition.simulator
        if ref is None:
            return None
        override = {
            k: v
            for k, v in (("capacity", ref.capacity), ("temperature", ref.temperature))
            if v is not None
        }
        spec = get_family(ref.family).sample(ref.seed, self.pool, **override)
        return spec if ref.llm is None else llm_spec(spec, **ref.llm.model_dump())

    def train_members(self, condition: Condition) -> tuple[SimulatorSpec, ...]:
        """The members a condition's agent is scored on as 'training' simulators."""
        fixed = self.fixed_spec(condition)
        if fixed is not None:
            return (fixed,)
        return self.ensemble.train + (self.llm_train if condition.llm_share > 0 else ())

    def sampler(self, condition: Condition, seed: int = 0) -> Sampler:
        inner = build_sampler(
            condition.sampler, self.ensemble, self.pool, self.fixed_spec(condition),
            condition.perturb, args=condition.sampler_args, scenario=self.scenario,
            solvable=solvability(self.scenario, self.max_turns),
            oracle_gold=condition.oracle_gold, seed=seed,
        )  # fmt: skip
        if condition.llm_share > 0:
            return MixedSampler(inner, self.llm_train, condition.llm_share, condition.llm_block)
        return inner

    def endpoints(self, conditions: Sequence[Condition]) -> set[str]:
        """Names of the endpoints the ``llm`` members of these conditions (and evaluation) use."""
        specs = [*self.ensemble.heldout, *(s for c in conditions for s in self.train_members(c))]
        return {s.llm.endpoint for s in specs if s.llm is not None}


@contextmanager
def llm_runtime(cfg: StudyConfig, needed: set[str]) -> Iterator[LLMRuntime | None]:
    """The endpoints a sub-run needs, or None when it has no ``llm`` member."""
    if not needed:
        yield None
        return
    with LLMRuntime.open(cfg.llm, needed) as runtime:
        yield runtime


def evaluate_members(
    cfg: StudyConfig, agent: Agent, specs: Sequence[SimulatorSpec],
    world: StudyWorld, per_member: int, llm: LLMRuntime | None, **kw: Any,
) -> list[Episode]:  # fmt: skip
    """``evaluate`` with ``eval.llm_episodes_per_member`` episodes on each ``llm`` member."""
    persona = [s for s in specs if s.kind != "llm"]
    chat = [s for s in specs if s.kind == "llm"]
    per_llm = cfg.eval.llm_episodes_per_member or per_member
    out = evaluate(agent, persona, world.scenario, per_member=per_member, llm=llm,
                   max_turns=cfg.train.max_turns, **kw) if persona else []  # fmt: skip
    if chat:
        out += evaluate(agent, chat, world.scenario, per_member=per_llm, llm=llm,
                        max_turns=cfg.train.max_turns, **kw)  # fmt: skip
    return out


def train_config(cfg: StudyConfig, condition: Condition) -> PPOConfig:
    """The study's PPO settings with the condition's own episode budget, if it has one."""
    override = {k: v for k in ("episodes", "batch_episodes")
                if (v := getattr(condition, k)) is not None}  # fmt: skip
    return cfg.train.model_copy(update=override) if override else cfg.train


def sub_run_seed(condition: str, seed: int) -> int:
    return int(np.random.SeedSequence([seed, zlib.crc32(condition.encode())]).generate_state(1)[0])


class _Recording:
    """Wraps a sampler to remember the quirk phrasings of every simulator it handed out."""

    def __init__(self, inner: Sampler) -> None:
        self.inner = inner
        self.name = inner.name
        self.phrasings: set[str] = set()
        self.members: set[str] = set()

    def next(self, rng: np.random.Generator) -> SimulatorSpec:
        return self._note(self.inner.next(rng))

    def next_level(self, rng: np.random.Generator) -> tuple[SimulatorSpec, int]:
        spec, seed = draw_level(self.inner, rng)
        return self._note(spec), seed

    def _note(self, spec: SimulatorSpec) -> SimulatorSpec:
        if spec.id not in self.members:
            self.members.add(spec.id)
            q = spec.traits.quirks
            self.phrasings.update(q.over_rewarded)
            if q.trigger:
                self.phrasings.add(q.trigger)
        return spec

    def update(self, episodes: Sequence[Episode], info: BatchInfo | None = None) -> None:
        self.inner.update(episodes, info)

    def log_row(self, stats: UpdateStats) -> dict[str, Any]:
        """This update's line of ``sampler.jsonl``."""
        inner = self.inner
        reporting = inner if isinstance(inner, Reporting) else None
        return {
            "update": stats.update,
            "episodes_seen": stats.episodes_seen,
            "shares": reporting.shares() if reporting else None,
            "counts": {m: v[2] for m, v in stats.per_member.items()},
            "events": reporting.drain_events() if reporting else [],
        }


def run_condition(
    cfg: StudyConfig, condition: Condition, seed: int, out: Path, progress: Progress | None = None
) -> dict[str, Any]:
    """Train one agent and evaluate it; everything lands in ``out``. Returns its summary."""
    torch.set_num_threads(1)
    started = time.perf_counter()
    world = StudyWorld.build(cfg)
    run_seed = sub_run_seed(condition.name, seed)
    sampler = _Recording(world.sampler(condition, run_seed))
    judge = None
    if condition.judging is not None:
        panel = JudgePanel(world.ensemble.train, world.scenario, condition.judging.k, run_seed)
        judge = EnsembleJudge(panel, condition.judging)
    write_json(out / CONFIG, {
        "study": cfg.name, "condition": condition.model_dump(mode="json"), "seed": seed,
        "run_seed": run_seed, "train": cfg.train.model_dump(),
    })  # fmt: skip
    torch.manual_seed(run_seed)  # the initial weights: workers run several sub-runs each
    agent = PolicyAgent(world.scenario, seed=run_seed)
    # One held-out probe serves the learning curve (heldout_curve.jsonl) and the diagnostics
    # (d, field accuracy and a checkpoint at each point, in metrics.jsonl).
    ppo = train_config(cfg, condition)
    probe = HeldoutProbe(agent, [s for s in world.ensemble.heldout if s.kind == "persona"],
                         world.scenario, every=ppo.eval_every,
                         per_member=min(cfg.eval.curve_episodes_per_member,
                                        cfg.eval.episodes_per_member),
                         out=out, seed=run_seed, condition=condition.name,
                         max_turns=world.max_turns,
                         last_update=-(-ppo.episodes // ppo.batch_episodes) - 1)  # fmt: skip
    with (
        EpisodeLog(out / EPISODES) as episodes_log,
        JsonlWriter(out / METRICS) as metrics_log,
        JsonlWriter(out / SAMPLER_LOG) as sampler_log,
        JsonlWriter(out / CURVE_LOG) as curve_log,
        llm_runtime(cfg, world.endpoints([condition])) as llm,
    ):
        if (initial := probe.initial()) is not None:
            metrics_log.write(initial)

        def on_update(stats: UpdateStats, episodes: Sequence[Episode]) -> None:
            extra = probe.at(stats.update, stats.kl_init, episodes)
            metrics_log.write(stats.__dict__ | extra)
            sampler_log.write(sampler.log_row(stats))
            if "heldout_gold" in extra:
                curve_log.write({
                    "update": stats.update, "episodes_seen": stats.episodes_seen,
                    "n": extra["heldout_n"], "heldout_gold": extra["heldout_gold"],
                })  # fmt: skip
            if stats.update % TRAIN_LOG_EVERY == 0:  # ids made unique: a level can be replayed
                for i, e in enumerate(episodes):
                    episodes_log.write(e.model_copy(update={"id": f"{e.id}/u{stats.update}.{i}"}))
            if progress is not None:
                progress(len(episodes))

        train(agent, sampler, world.scenario, train_config(cfg, condition), run_seed,
              condition=condition.name, on_update=on_update, llm=llm, judge=judge)  # fmt: skip
        agent.save(out / CHECKPOINT)

        def on_episode(e: Episode) -> None:
            episodes_log.write(e)
            if progress is not None:
                progress(1)

        per = cfg.eval.episodes_per_member
        trained_on = world.train_members(condition)
        n_train_eval = per * len(world.ensemble.train)  # same evaluation budget for every condition
        evals = [
            *evaluate_members(cfg, agent, trained_on, world,
                              max(per, n_train_eval // len(trained_on)), llm, split="train",
                              condition=condition.name, on_episode=on_episode),
            *evaluate_members(cfg, agent, world.ensemble.heldout, world, per, llm,
                              split="heldout", condition=condition.name, on_episode=on_episode),
        ]  # fmt: skip
        llm_stats = llm_accounting(llm)
    write_json(out / MEMBERS, {
        "trained_on": [s.model_dump(mode="json") for s in trained_on],
        "heldout": [s.model_dump(mode="json") for s in world.ensemble.heldout],
        "sampled_members": len(sampler.members),
        "trained_quirk_phrasings": sorted(sampler.phrasings),
    })  # fmt: skip
    summary = summarise_sub_run(evals, sampler.phrasings)
    summary.update(condition=condition.name, seed=seed,
                   episodes_trained=train_config(cfg, condition).episodes,
                   wall_seconds=round(time.perf_counter() - started, 2))  # fmt: skip
    if llm_stats:
        summary["llm"] = llm_stats
    write_json(out / SUMMARY, summary)
    return summary


def llm_accounting(llm: LLMRuntime | None) -> dict[str, Any]:
    """Requests, cache hits, retries, failures, tokens and latency per endpoint, for this run."""
    if llm is None:
        return {}
    return {name: stats.model_dump() for name, stats in llm.stats().items()}


def exploit_rate(episodes: Sequence[Episode], phrasings: set[str]) -> float:
    """Share of agent turns that use a phrasing some training member's quirk over-rewards."""
    turns = [t.text.lower() for e in episodes for t in e.agent_turns]
    quirky = [p.lower() for p in phrasings]
    return sum(any(p in t for p in quirky) for t in turns) / max(1, len(turns))


def summarise_sub_run(evals: Sequence[Episode], phrasings: set[str]) -> dict[str, Any]:
    train_eps = [e for e in evals if e.split == "train"]
    held = [e for e in evals if e.split == "heldout"]
    return {
        "train": summarise(train_eps).model_dump(),
        "heldout": summarise(held).model_dump(),
        "heldout_by_family": {k: v.model_dump() for k, v in by(held, lambda e: e.family).items()},
        "heldout_member_std": member_std(held),
        "exploit_rate": exploit_rate(held, phrasings),
    }


def reference_scripted(cfg: StudyConfig, out: Path) -> dict[str, Any]:
    """The scripted baseline on the same members and profiles, one evaluation per seed."""
    world = StudyWorld.build(cfg)
    agent = ScriptedAgent(world.scenario)
    per = cfg.eval.episodes_per_member
    needed = {s.llm.endpoint for s in world.ensemble.heldout if s.llm is not None}
    with EpisodeLog(out / EPISODES) as log, llm_runtime(cfg, needed) as llm:
        evals = [
            *evaluate_members(cfg, agent, world.ensemble.train, world, per, llm,
                              split="train", condition="scripted", on_episode=log.write),
            *evaluate_members(cfg, agent, world.ensemble.heldout, world, per, llm,
                              split="heldout", condition="scripted", on_episode=log.write),
        ]  # fmt: skip
        llm_stats = llm_accounting(llm)
    summary = summarise_sub_run(evals, set())
    if llm_stats:
        summary["llm"] = llm_stats
    summary.update(condition="scripted", seed=0, episodes_trained=0)
    summary["train_by_family"] = {
        k: v.model_dump()
        for k, v in by([e for e in evals if e.split == "train"], lambda e: e.family).items()
    }
    write_json(out / SUMMARY, summary)
    return summary


def aggregate(cfg: StudyConfig, root: Path, wall_seconds: float) -> dict[str, Any]:
    """study.json from the sub-runs on disk: CIs by cluster bootstrap over seeds and episodes."""
    rows = []
    for condition in cfg.conditions:
        by_seed: dict[int, list[Episode]] = {}
        summaries = []
        curves = []
        for seed in cfg.seeds:
            sub = root / "conditions" / condition.name / f"seed-{seed}"
            by_seed[seed] = [e for e in read_episodes(sub / EPISODES) if e.phase == "eval"]
            summaries.append(read_json(sub / SUMMARY))
            curve_path = sub / CURVE_LOG
            curves.append([r for _, r in iter_jsonl(curve_path)] if curve_path.exists() else [])
        row = _condition_row(condition.name, cfg, by_seed, summaries)
        row["episodes_trained"] = train_config(cfg, condition).episodes
        row["sampler"] = condition.sampler
        w = worst_decile_estimate(by_seed, n_boot=cfg.eval.bootstrap)
        row["heldout_worst_decile"] = {"mean": w.mean, "ci": list(w.ci), "n": w.n}
        row["heldout_curve"] = [list(p) for p in curve_mean(curves)] if all(curves) else []
        rows.append(row)
    _episodes_to_uniform_final(rows)
    reference = []
    for name in cfg.reference_agents:
        sub = root / "reference" / name
        row = _condition_row(
            name, cfg, {0: read_episodes(sub / EPISODES)}, [read_json(sub / SUMMARY)]
        )
        row["episodes_trained"] = 0
        reference.append(row)
    return {
        "study": cfg.name,
        "scenario": cfg.scenario,
        "seeds": list(cfg.seeds),
        "wall_seconds": round(wall_seconds, 1),
        "conditions": rows,
        "reference": reference,
        **_llm_accounting(root, cfg),
    }


def _llm_accounting(root: Path, cfg: StudyConfig) -> dict[str, Any]:
    """Endpoint accounting summed over every sub-run (absent for studies without LLMs)."""
    subs = [root / "conditions" / c.name / f"seed-{s}" for c in cfg.conditions for s in cfg.seeds]
    subs += [root / "reference" / name for name in cfg.reference_agents]
    total: dict[str, float] = {}
    for sub in subs:
        for stats in read_json(sub / SUMMARY).get("llm", {}).values():
            for k, v in stats.items():
                total[k] = total.get(k, 0) + v
    return {"llm_accounting": total} if total else {}


def _episodes_to_uniform_final(
    rows: list[dict[str, Any]], reference: str = "ensemble-uniform"
) -> None:
    """Episodes each condition needed to reach ``reference``'s final held-out gold on the curve
    subset (seed-mean curves); None when it never did, or without curves or that condition."""
    ref = next((r for r in rows if r["name"] == reference and r["heldout_curve"]), None)
    for r in rows:
        r["episodes_to_uniform_final"] = (
            episodes_to_reach([(int(n), g) for n, g in r["heldout_curve"]],
                              ref["heldout_curve"][-1][1])
            if ref is not None and r["heldout_curve"] else None
        )  # fmt: skip


def _condition_row(
    name: str,
    cfg: StudyConfig,
    by_seed: dict[int, list[Episode]],
    summaries: Sequence[dict[str, Any]],
) -> dict[str, Any]:
    tagged = [(seed, e) for seed, eps in by_seed.items() for e in eps]

    def est(split: str, metric: Callable[[Episode], float]) -> dict[str, Any]:
        pairs = [(seed, e) for seed, e in tagged if e.split == split]
        r: Estimate = cluster_bootstrap(
            [metric(e) for _, e in pairs], [seed for seed, _ in pairs], n_boot=cfg.eval.bootstrap
        )
        return {"mean": r.mean, "ci": list(r.ci), "n": r.n}

    held = [e for _, e in tagged if e.split == "heldout"]
    trained = [e for _, e in tagged if e.split == "train"]
    families = sorted({e.family for e in held})
    extra: dict[str, Any] = {}
    if any(e.family.startswith("llm:") for e in held):
        extra = llm_rows(tagged, cfg.eval.bootstrap)
    if any(e.family in REPLAY_FAMILIES for e in held):
        extra |= real_patient_rows(tagged, cfg.eval.bootstrap)
    return {
        **extra,
        "name": name,
        "episodes_trained": cfg.train.episodes,
        "train_proxy": est("train", lambda e: e.proxy),
        "train_gold": est("train", lambda e: float(e.gold.success)),
        "heldout_proxy": est("heldout", lambda e: e.proxy),
        "heldout_gold": est("heldout", lambda e: float(e.gold.success)),
        "heldout_member_std": float(np.mean([s["heldout_member_std"] for s in summaries])),
        "exploit_rate": float(np.mean([s["exploit_rate"] for s in summaries])),
        "heldout_gold_by_family": {
            f: float(np.mean([e.gold.success for e in held if e.family == f])) for f in families
        },
        "train_gold_by_family": {
            f: float(np.mean([e.gold.success for e in trained if e.family == f]))
            for f in sorted({e.family for e in trained})
        },
        "heldout_dropped_rate": float(np.mean([e.gold.dropped for e in held])) if held else 0.0,
    }


def real_patient_rows(tagged: Sequence[tuple[int, Episode]], n_boot: int) -> dict[str, Any]:
    """Held-out results on real patients (``replay`` families) and on the programmatic rest."""

    def est(real: bool, metric: Callable[[Episode], float]) -> dict[str, Any]:
        pairs = [(s, e) for s, e in tagged
                 if e.split == "heldout" and (e.family in REPLAY_FAMILIES) == real]  # fmt: skip
        r = cluster_bootstrap([metric(e) for _, e in pairs], [s for s, _ in pairs], n_boot=n_boot)
        return {"mean": r.mean, "ci": list(r.ci), "n": r.n}

    real = [e for _, e in tagged if e.split == "heldout" and e.family in REPLAY_FAMILIES]
    return {
        "heldout_gold_real": est(True, lambda e: float(e.gold.success)),
        "heldout_fields_real": est(True, lambda e: e.gold.field_accuracy),
        "heldout_proxy_real": est(True, lambda e: e.proxy),
        "heldout_gold_programmatic": est(False, lambda e: float(e.gold.success)),
        "real_reply_shares": reply_shares(real),
    }


def llm_rows(tagged: Sequence[tuple[int, Episode]], n_boot: int) -> dict[str, Any]:
    """Held-out results split into persona and ``llm`` members (CIs), and LLM member health."""

    def est(pick: Callable[[Episode], bool], metric: Callable[[Episode], float]) -> dict[str, Any]:
        pairs = [(seed, e) for seed, e in tagged if pick(e)]
        r = cluster_bootstrap([metric(e) for _, e in pairs], [s for s, _ in pairs], n_boot=n_boot)
        return {"mean": r.mean, "ci": list(r.ci), "n": r.n}

    def is_llm(e: Episode) -> bool:
        return e.family.startswith("llm:")

    llm_eps = [e for _, e in tagged if is_llm(e)]
    replies = sum(e.diagnostics.get("replies", 0.0) for e in llm_eps)
    return {
        "heldout_gold_persona": est(lambda e: e.split == "heldout" and not is_llm(e),
                                    lambda e: float(e.gold.success)),
        "heldout_gold_llm": est(lambda e: e.split == "heldout" and is_llm(e),
                                lambda e: float(e.gold.success)),
        "heldout_fields_llm": est(lambda e: e.split == "heldout" and is_llm(e),
                                  lambda e: e.gold.field_accuracy),
        "heldout_fields_persona": est(lambda e: e.split == "heldout" and not is_llm(e),
                                      lambda e: e.gold.field_accuracy),
        "train_fields": est(lambda e: e.split == "train", lambda e: e.gold.field_accuracy),
        "llm_episodes": len(llm_eps),
        "llm_errors": sum(e.termination == "error" for e in llm_eps),
        "llm_replies": int(replies),
        "llm_role_retries": int(sum(e.diagnostics.get("role_retries", 0) for e in llm_eps)),
        "llm_role_failures": int(sum(e.diagnostics.get("role_failures", 0) for e in llm_eps)),
        "llm_judge_failures": int(sum(e.diagnostics.get("judge_failures", 0) for e in llm_eps)),
    }  # fmt: skip
