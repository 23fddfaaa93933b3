"""One sub-run of a study: a condition x seed trained, then evaluated on held-out members.

Each (condition, seed) is a sub-run in its own process (``conditions/<name>/seed-<k>/``), so a
2-core laptop trains two agents at once. Sub-runs write episodes as they finish; the study only
aggregates what they stored.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import torch

from sim2human import seeding
from sim2human.agents.policy import PolicyAgent
from sim2human.agents.scripted import reference_agent
from sim2human.experiments.study.config import Condition, StudyConfig
from sim2human.experiments.study.sub_run_summary import Evaluation, SubRunSummary
from sim2human.experiments.study.validation import CheckpointSelection
from sim2human.experiments.study.world import (
    Splits,
    StudyWorld,
    evaluate_splits,
    heldout_splits,
    llm_runtime,
)
from sim2human.llm.runtime import LLMRuntime
from sim2human.metrics.outcomes import by, member_std, summarise
from sim2human.population.panel import EnsembleJudge, JudgePanel
from sim2human.samplers.build import PerturbingSampler, Sampler
from sim2human.samplers.feedback import BatchInfo, Reporting, draw_level
from sim2human.simulators.base import SimulatorSpec
from sim2human.simulators.kinds import is_programmatic
from sim2human.store.layout import (
    CHECKPOINT,
    CONFIG,
    CURVE_LOG,
    EPISODES,
    MEMBERS,
    METRICS,
    SAMPLER_LOG,
    SUMMARY,
)
from sim2human.store.rundir import EpisodeLog, JsonlWriter, write_json
from sim2human.train.config import LMAgentConfig, PolicyAgentConfig, PPOConfig, UpdateStats
from sim2human.train.curves import CurveLog, open_curves
from sim2human.train.phases import START, Phases
from sim2human.train.ppo import train
from sim2human.train.telemetry import HeldoutProbe
from sim2human.types import Episode

Progress = Callable[[int], None]
"""Called with a number of finished episodes (training or evaluation)."""
TRAIN_LOG_EVERY = 10
"""Keep every tenth update's training episodes in ``episodes.jsonl`` (all of them are summarised
in ``metrics.jsonl``); storing all of them would make a run directory hundreds of MB."""


def train_config(cfg: StudyConfig, condition: Condition) -> PPOConfig:
    """The study's PPO settings with the condition's own episode budget, if it has one."""
    override = {
        k: v for k in ("episodes", "batch_episodes") if (v := getattr(condition, k)) is not None
    }
    return cfg.train.model_copy(update=override) if override else cfg.train


def trained_episodes(cfg: StudyConfig, condition: Condition) -> int:
    """How many training calls ``condition``'s agent plays (PPO's episodes, or GRPO's steps x
    groups x calls per group), for progress bars and scheduling."""
    agent = cfg.agent
    if isinstance(agent, LMAgentConfig):
        return agent.steps * agent.groups * agent.group_size
    return train_config(cfg, condition).episodes


def sub_run_seed(condition: str, seed: int) -> int:
    """The seed of one condition's sub-run (32 bits: it is shown in ``config.json``)."""
    return seeding.seed(seed, "sub-run", condition, bits=32)


def quirk_phrasings(spec: SimulatorSpec) -> set[str]:
    """The phrasings ``spec``'s quirks over-reward, its trigger among them."""
    q = spec.traits.quirks
    return {*q.over_rewarded, *([q.trigger] if q.trigger else [])}


class Recording:
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
            self.phrasings |= quirk_phrasings(spec)
        return spec

    def update(self, episodes: Sequence[Episode], info: BatchInfo | None = None) -> None:
        self.inner.update(episodes, info)

    def log_row(self, stats: UpdateStats) -> dict[str, Any]:
        """This update's line of ``sampler.jsonl``."""
        inner = self.inner
        reporting = inner if isinstance(inner, Reporting) else None
        row: dict[str, Any] = {
            "update": stats.update,
            "episodes_seen": stats.episodes_seen,
            "shares": reporting.shares() if reporting else None,
            "counts": {m: v[2] for m, v in stats.per_member.items()},
            "events": reporting.drain_events() if reporting else [],
        }
        if isinstance(inner, PerturbingSampler):  # how far its ranges are open (perturb_ramp)
            row["perturb_level"] = inner.level
        return row


# long: one sub-run read top to bottom (its logs open together around training and evaluation)
def run_condition(
    cfg: StudyConfig, condition: Condition, seed: int, out: Path, progress: Progress | None = None
) -> dict[str, Any]:
    """Train one agent and evaluate it; everything lands in ``out``. Returns its summary."""
    torch.set_num_threads(1)
    started = time.perf_counter()
    phases = Phases()
    world = StudyWorld.build(cfg)
    run_seed = sub_run_seed(condition.name, seed)
    ppo = train_config(cfg, condition)
    sampler = Recording(world.sampler(condition, run_seed, episodes=ppo.episodes))
    judge = _judge(world, condition, run_seed)
    write_json(out / CONFIG, sub_run_config(cfg, condition, seed, run_seed))
    torch.manual_seed(run_seed)  # the initial weights: workers run several sub-runs each
    ask_once = isinstance(cfg.agent, PolicyAgentConfig) and cfg.agent.ask_once
    agent = PolicyAgent(world.scenario, seed=run_seed, ask_once=ask_once)
    probe = _probe(cfg, world, agent, ppo, condition.name, run_seed, out)
    selection = _selection(world, condition, agent, run_seed)
    episodes_log = EpisodeLog(out / EPISODES)
    with (
        episodes_log,
        JsonlWriter(out / METRICS) as metrics_log,
        JsonlWriter(out / SAMPLER_LOG) as sampler_log,
        JsonlWriter(out / CURVE_LOG) as curve_log,
        llm_runtime(cfg, world.endpoints([condition])) as llm,
        open_curves(out, f"{condition.name}/seed-{seed}", _curve_params(cfg, seed)) as sink,
    ):
        if (initial := probe.initial()) is not None:
            metrics_log.write(initial)
            sink.log(initial)
        logs = _UpdateLogs(
            probe, sampler, metrics_log, sampler_log, curve_log, episodes_log, sink, selection
        )
        on_update = partial(logs.write, progress=progress)
        phases.add(START, time.perf_counter() - started)
        train(
            agent,
            sampler,
            world.scenario,
            ppo,
            run_seed,
            condition=condition.name,
            on_update=on_update,
            llm=llm,
            judge=judge,
            phases=phases,
        )
        selected = selection.restore() if selection is not None else None
        agent.save(out / CHECKPOINT)
        on_episode = partial(_log_evaluation, episodes_log, progress)
        trained_on = world.train_members(condition)
        splits = eval_splits(cfg, world, trained_on)
        evals = evaluate_splits(cfg, agent, world, llm, splits, condition.name, on_episode, phases)
        llm_stats = llm_accounting(llm)
    write_members(out / MEMBERS, trained_on, world.ensemble.heldout, sampler)
    summary = SubRunSummary(
        **evaluation_fields(evals, sampler.phrasings),
        condition=condition.name,
        seed=seed,
        episodes_trained=ppo.episodes,
        wall_seconds=round(time.perf_counter() - started, 2),
        phase_seconds=phases.rounded(),
        phase_work=phases.work,
        selected_update=selected,
        validation_gold=selection.best_gold if selection is not None else None,
        llm=llm_stats or None,
        episodes_logged=len(episodes_log.ids),  # what readers check the log against
    )
    return summary.write(out / SUMMARY)


def _curve_params(cfg: StudyConfig, seed: int) -> dict[str, Any]:
    """What a curve sink (W&B, MLflow) records of the sub-run: its study, seed and training."""
    return {"study": cfg.name, "seed": seed, **cfg.train.model_dump(mode="json")}


def _log_evaluation(log: EpisodeLog, progress: Progress | None, episode: Episode) -> None:
    log.write(episode)
    if progress is not None:
        progress(1)


def sub_run_config(
    cfg: StudyConfig, condition: Condition, seed: int, run_seed: int
) -> dict[str, Any]:
    """The sub-run's ``config.json``."""
    return {
        "study": cfg.name,
        "condition": condition.model_dump(mode="json"),
        "seed": seed,
        "run_seed": run_seed,
        "train": cfg.train.model_dump(),
    }


def eval_splits(cfg: StudyConfig, world: StudyWorld, trained_on: Sequence[SimulatorSpec]) -> Splits:
    """The members a trained agent is evaluated on: the ones it trained on, with the same
    evaluation budget for every condition (however few members it saw), then the held out."""
    per = cfg.eval.episodes_per_member
    n_train_eval = per * len(world.ensemble.train)
    return [
        ("train", trained_on, max(per, n_train_eval // len(trained_on))),
        *heldout_splits(cfg, world),
    ]


def _judge(world: StudyWorld, condition: Condition, run_seed: int) -> EnsembleJudge | None:
    """The condition's ensemble judge, when it judges by ensemble."""
    if condition.judging is None:
        return None
    panel = JudgePanel(world.ensemble.train, world.scenario, condition.judging.k, run_seed)
    return EnsembleJudge(panel, condition.judging)


def _probe(
    cfg: StudyConfig,
    world: StudyWorld,
    agent: PolicyAgent,
    ppo: PPOConfig,
    condition: str,
    run_seed: int,
    out: Path,
) -> HeldoutProbe:
    """One held-out probe serves the learning curve (``heldout_curve.jsonl``) and the
    diagnostics (d, field accuracy and a checkpoint at each point, in ``metrics.jsonl``)."""
    return HeldoutProbe(
        agent,
        [s for s in world.ensemble.heldout if is_programmatic(s)],
        world.scenario,
        every=ppo.eval_every,
        per_member=min(cfg.eval.curve_episodes_per_member, cfg.eval.episodes_per_member),
        out=out,
        seed=run_seed,
        condition=condition,
        max_turns=world.max_turns,
        last_update=-(-ppo.episodes // ppo.batch_episodes) - 1,
    )


def _selection(
    world: StudyWorld, condition: Condition, agent: PolicyAgent, run_seed: int
) -> CheckpointSelection | None:
    """The condition's checkpoint selection on validation members (``select``), if any."""
    if condition.select is None:
        return None
    return CheckpointSelection(
        agent,
        world.validation(condition),
        world.scenario,
        per_member=condition.select.per_member,
        max_turns=world.max_turns,
        seed=run_seed,
        condition=condition.name,
    )


@dataclass(frozen=True)
class _UpdateLogs:
    """What each PPO update writes: metrics, the sampler's line, the held-out curve point, and
    every ``TRAIN_LOG_EVERY``-th update's training episodes."""

    probe: HeldoutProbe
    sampler: Recording
    metrics: JsonlWriter
    sampler_log: JsonlWriter
    curve: JsonlWriter
    episodes: EpisodeLog
    curves: CurveLog
    """``--log-to``'s sinks (TensorBoard, W&B, MLflow: ``train/curves``); none by default."""
    selection: CheckpointSelection | None = None
    """Validation at each probe point (``select``); none by default."""

    def write(
        self, stats: UpdateStats, episodes: Sequence[Episode], progress: Progress | None
    ) -> None:
        extra = self.probe.at(stats.update, stats.kl_init, episodes)
        if self.selection is not None and self.probe.point(stats.update):
            extra |= self.selection.at(stats.update)
        self.metrics.write(row := stats.__dict__ | extra)
        self.curves.log(row)
        self.sampler_log.write(self.sampler.log_row(stats))
        if "heldout_gold" in extra:
            self.curve.write(
                {
                    "update": stats.update,
                    "episodes_seen": stats.episodes_seen,
                    "n": extra["heldout_n"],
                    "heldout_gold": extra["heldout_gold"],
                }
            )
        if stats.update % TRAIN_LOG_EVERY == 0:  # ids made unique: a level can be replayed
            for i, e in enumerate(episodes):
                self.episodes.write(e.model_copy(update={"id": f"{e.id}/u{stats.update}.{i}"}))
        if progress is not None:
            progress(len(episodes))


def write_members(
    path: Path,
    trained_on: Sequence[SimulatorSpec],
    heldout: Sequence[SimulatorSpec],
    sampler: Recording,
) -> None:
    write_json(
        path,
        {
            "trained_on": [s.model_dump(mode="json") for s in trained_on],
            "heldout": [s.model_dump(mode="json") for s in heldout],
            "sampled_members": len(sampler.members),
            "trained_quirk_phrasings": sorted(sampler.phrasings),
        },
    )


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


def evaluation_fields(evals: Sequence[Episode], phrasings: set[str]) -> Evaluation:
    """A sub-run's final evaluation as ``SubRunSummary`` fields: by split, held-out families,
    the spread over held-out members, the exploit rate."""
    train_eps = [e for e in evals if e.split == "train"]
    held = [e for e in evals if e.split == "heldout"]
    return {
        "train": summarise(train_eps),
        "heldout": summarise(held),
        "heldout_by_family": by(held, lambda e: e.family),
        "heldout_member_std": member_std(held),
        "exploit_rate": exploit_rate(held, phrasings),
    }


def reference_scripted(cfg: StudyConfig, out: Path) -> dict[str, Any]:
    """The scripted baseline on the same members and profiles, one evaluation per seed."""
    world = StudyWorld.build(cfg)
    agent = reference_agent(world.scenario)
    per = cfg.eval.episodes_per_member
    needed = {s.llm.endpoint for s in world.ensemble.heldout if s.llm is not None}
    log = EpisodeLog(out / EPISODES)
    with log, llm_runtime(cfg, needed) as llm:
        splits = [("train", world.ensemble.train, per), *heldout_splits(cfg, world)]
        evals = evaluate_splits(cfg, agent, world, llm, splits, "scripted", log.write)
        llm_stats = llm_accounting(llm)
    summary = SubRunSummary(
        **evaluation_fields(evals, set()),
        condition="scripted",
        seed=0,
        episodes_trained=0,
        train_by_family=by([e for e in evals if e.split == "train"], lambda e: e.family),
        llm=llm_stats or None,
        episodes_logged=len(log.ids),
    )
    return summary.write(out / SUMMARY)
