"""One sub-run of a study whose agent is a language model: warm start, GRPO, the same evaluation.

Everything around the agent is the policy sub-run's (``experiments.study.condition``): the world,
the condition's sampler, the members a sub-run is scored on, the held-out families and real people,
``episodes.jsonl``, ``metrics.jsonl``, ``sampler.jsonl``, ``members.json`` and ``summary.json`` in
the same shapes, so the aggregation, report, ``diagnose``, ``view`` and ``export`` read it as they
read any sub-run. What differs: the agent (``agents.lm_policy``), its trainer (``train.grpo``), its
gold (what it submitted through tools: ``Episode.record_source``), and its files: ``policy/`` (the
trained model in Hugging Face format, with its tokenizer and chat template) instead of
``checkpoint.pt``.

The warm start is shared: one per (scenario, model, study seed), in the run's ``warm-start/``
folder, built by whichever sub-run needs it first under a file lock, written whole or not at all,
with every core (the other sub-runs wait for it, so one thread would leave the rest idle).
"""

from __future__ import annotations

import copy
import fcntl
import hashlib
import json
import logging
import os
import re
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import torch

from sim2human import outputs
from sim2human.agents.lm_chat import chat_template
from sim2human.agents.lm_models import load, save, smollm2, tiny
from sim2human.agents.lm_policy import LMPolicy
from sim2human.agents.tool_messages import RESULTS_WORDING
from sim2human.errors import UsageError
from sim2human.experiments.study.condition import (
    Recording,
    eval_splits,
    evaluation_fields,
    llm_accounting,
    sub_run_config,
    sub_run_seed,
    write_members,
)
from sim2human.experiments.study.config import Condition, StudyConfig
from sim2human.experiments.study.sub_run_summary import SubRunSummary
from sim2human.experiments.study.trained_agents import lm_prompt
from sim2human.experiments.study.world import StudyWorld, evaluate_splits, llm_runtime
from sim2human.store.layout import (
    CONFIG,
    EPISODES,
    MEMBERS,
    METRICS,
    POLICY,
    SAMPLER_LOG,
    SUMMARY,
    WARM_START,
)
from sim2human.store.rundir import EpisodeLog, JsonlWriter, read_json, write_json
from sim2human.train.config import LMAgentConfig
from sim2human.train.copy_drill import copy_drill, drill_shape
from sim2human.train.curves import open_curves
from sim2human.train.grpo import StepStats, train_grpo
from sim2human.train.phases import GRPO, START, Phases
from sim2human.train.phases import WARM_START as WARM_START_PHASE
from sim2human.train.warm_start import corpus_texts, fine_tune, reference_calls, turn_tokens
from sim2human.types import Episode

Progress = Callable[[int], None]
logger = logging.getLogger(__name__)
GRPO_LOG_EVERY = 5
"""Keep every fifth GRPO step's calls in ``episodes.jsonl`` (every step is summarised in
``metrics.jsonl``): a GPU run of thousands of steps would otherwise store gigabytes."""
WARM_META = "warm_start.json"
"""What the warm start learned from and how it went, beside its model."""


# long: one sub-run read top to bottom (its logs open together around training and evaluation)
def run_lm_condition(
    cfg: StudyConfig,
    agent_cfg: LMAgentConfig,
    condition: Condition,
    seed: int,
    out: Path,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Warm-start (or reuse), train by GRPO and evaluate one LM agent; returns its summary."""
    torch.set_num_threads(1)
    if agent_cfg.device.startswith("cuda") and not torch.cuda.is_available():
        raise UsageError(f"agent.device {agent_cfg.device!r}: torch sees no CUDA device here")
    started = time.perf_counter()
    world = StudyWorld.build(cfg)
    run_seed = sub_run_seed(condition.name, seed)
    budget = agent_cfg.steps * agent_cfg.groups * agent_cfg.group_size
    sampler = Recording(world.sampler(condition, run_seed, episodes=max(1, budget)))
    write_json(out / CONFIG, sub_run_config(cfg, condition, seed, run_seed))
    phases = Phases()
    phases.add(START, time.perf_counter() - started)
    with phases.timing(WARM_START_PHASE):
        warm = warm_start(cfg, agent_cfg, world, seed, out.parents[2] / WARM_START)
        warm_meta = read_json(warm / WARM_META)
        policy, ref = warm_policy(warm, agent_cfg, world)
    if (cut := turns_cut(warm_meta, agent_cfg.max_new_tokens)) is not None:
        logger.warning(cut)
    torch.manual_seed(run_seed % 2**31)
    log = EpisodeLog(out / EPISODES)
    with (
        log,
        JsonlWriter(out / METRICS) as metrics,
        JsonlWriter(out / SAMPLER_LOG) as sampler_log,
        llm_runtime(cfg, world.endpoints([condition])) as llm,
        open_curves(out, f"{condition.name}/seed-{seed}", _curve_params(cfg, seed)) as curves,
    ):

        def on_step(stats: StepStats, episodes: Sequence[Episode]) -> None:
            metrics.write(stats.__dict__)
            curves.log(stats.__dict__)
            sampler_log.write(
                {"update": stats.update, "episodes_seen": stats.episodes_seen, "events": []}
            )
            if stats.update % GRPO_LOG_EVERY == 0:
                for e in episodes:
                    log.write(e)
            if progress is not None:
                progress(len(episodes))

        with phases.timing(GRPO):
            train_grpo(
                policy,
                ref,
                sampler,
                world.scenario,
                agent_cfg,
                run_seed,
                max_turns=world.max_turns,
                condition=condition.name,
                on_step=on_step,
                llm=llm,
            )
        save(policy.model, policy.tok, out / POLICY)
        policy.temperature = agent_cfg.eval_temperature
        trained_on = world.train_members(condition)
        evals = evaluate_splits(
            cfg,
            policy,
            world,
            llm,
            eval_splits(cfg, world, trained_on),
            condition.name,
            lambda e: _log(log, progress, e),
            phases,
        )
        llm_stats = llm_accounting(llm)
    write_members(out / MEMBERS, trained_on, world.ensemble.heldout, sampler)
    summary = SubRunSummary(
        **evaluation_fields(evals, sampler.phrasings),
        condition=condition.name,
        seed=seed,
        episodes_trained=budget,
        wall_seconds=round(time.perf_counter() - started, 2),
        agent={"kind": "lm", "model": agent_cfg.model, "record_source": "submitted"},
        warm_start={k: v for k, v in warm_meta.items() if k != "agent_lines"},
        novel_turn_share=novel_share(evals, set(warm_meta["agent_lines"])),
        llm=llm_stats or None,
        episodes_logged=len(log.ids),
        phase_seconds=phases.rounded(),
    )
    return summary.write(out / SUMMARY)


def warm_policy(warm: Path, agent_cfg: LMAgentConfig, world: StudyWorld) -> tuple[LMPolicy, Any]:
    """The policy GRPO starts from (the warm start), and a frozen copy for the KL."""
    model, tok = load(warm)
    model.to(agent_cfg.device)
    ref = copy.deepcopy(model).requires_grad_(False)
    policy = LMPolicy(
        model,
        tok,
        world.scenario,
        temperature=agent_cfg.temperature,
        max_new_tokens=agent_cfg.max_new_tokens,
        device=agent_cfg.device,
    )
    return policy, ref


def turns_cut(warm_meta: dict[str, Any], max_new_tokens: int) -> str | None:
    """A line saying the policy's token limit cuts its warm start's turns, or None: a cut turn
    loses what it was saying, a read-back or a ``record`` call, so the model cannot do what it
    learned (intake's read-back is ~90 tiny-model tokens; an early limit of 48 cut every call)."""
    p99 = warm_meta.get("turn_tokens", {}).get("p99", 0)
    if p99 <= max_new_tokens:
        return None
    return (
        f"agent.max_new_tokens {max_new_tokens} is shorter than the warm start's longest turns "
        f"(99th percentile {p99:.0f} tokens, longest {warm_meta['turn_tokens']['max']}): the "
        f"policy cannot write them whole; raise it to at least {int(p99) + 1}"
    )


def _curve_params(cfg: StudyConfig, seed: int) -> dict[str, Any]:
    """What a curve sink (W&B, MLflow) records of an LM sub-run: its study, seed and agent."""
    agent = cfg.agent.model_dump(mode="json")
    return {"study": cfg.name, "seed": seed, "turns": cfg.train.max_turns, **agent}


def novel_share(episodes: Sequence[Episode], corpus: set[str]) -> float:
    """The share of the agent's held-out turns that are not, word for word, a line of its warm
    start's corpus: whether it writes its own words or replays the reference's."""
    said = [t.text for e in episodes if e.split == "heldout" for t in e.agent_turns]
    return sum(t not in corpus for t in said) / max(1, len(said))


def _log(log: EpisodeLog, progress: Progress | None, episode: Episode) -> None:
    log.write(episode)
    if progress is not None:
        progress(1)


def warm_start_dir(folder: Path, agent_cfg: LMAgentConfig, world: StudyWorld, seed: int) -> Path:
    """Where the warm start for study seed ``seed`` lives in ``folder``: named by the model and
    a hash of everything that makes it (scenario, model, warm-start settings, prompt, chat
    template, the desk's wording of tool results, training members, turn limit), so a changed
    setting never reuses a stale warm start."""
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", agent_cfg.model).strip("_.")[-60:] or "model"
    made_of = {
        "scenario": world.scenario.name,
        "model": agent_cfg.model,
        "warm_start": agent_cfg.warm_start.model_dump(mode="json", exclude={"threads"}),
        "prompt": lm_prompt(world.scenario),
        "chat": hashlib.sha256(chat_template().encode()).hexdigest()[:12],
        "tool_results": RESULTS_WORDING,
        "members": sorted(s.id for s in world.ensemble.train),
        "max_turns": world.max_turns,
    }
    if agent_cfg.warm_start.copy_drill:
        made_of["copy_drill"] = drill_shape()
    key = hashlib.sha256(json.dumps(made_of, sort_keys=True).encode()).hexdigest()[:10]
    return folder / f"{slug}-seed-{seed}-{key}"


def warm_start(
    cfg: StudyConfig, agent_cfg: LMAgentConfig, world: StudyWorld, seed: int, folder: Path
) -> Path:
    """The warm-started model for (this study's scenario, ``agent_cfg.model``, ``seed``): made
    once and shared by every condition, under a lock so parallel sub-runs wait for the first.
    Warm starts (one per seed) are made one at a time, each with ``warm_start.threads`` (every
    core by default): the sub-runs are waiting for them, not playing beside them."""
    target = warm_start_dir(folder, agent_cfg, world, seed)
    folder.mkdir(parents=True, exist_ok=True)
    with _locked(folder / f".{target.name}.lock"):
        if (target / WARM_META).is_file():
            return target
        ws = agent_cfg.warm_start
        with _locked(folder / ".making.lock"), _torch_threads(ws.threads or os.cpu_count() or 1):
            return _make_warm_start(agent_cfg, world, seed, target)


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An exclusive lock on ``path`` (made if missing) while the block runs, across processes."""
    with open(path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


@contextmanager
def _torch_threads(n: int) -> Iterator[None]:
    """torch's intra-op threads set to ``n`` while the block runs."""
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _make_warm_start(agent_cfg: LMAgentConfig, world: StudyWorld, seed: int, target: Path) -> Path:
    """Make the warm start into ``target`` (through a staging folder beside it)."""
    began = time.perf_counter()
    ws = agent_cfg.warm_start
    calls = reference_calls(world.scenario, world.ensemble.train, ws, seed, world.max_turns)
    model, tok = _base_model(agent_cfg.model, corpus_texts(calls, world.scenario), seed)
    model.to(agent_cfg.device)
    torch.manual_seed(seed % 2**31)
    policy = LMPolicy(model, tok, world.scenario, device=agent_cfg.device)
    fields = getattr(world.scenario, "fields", ())
    drilled = copy_drill(policy, calls, fields, ws, seed)
    losses = fine_tune(policy, calls, ws, seed, micro_batch=agent_cfg.micro_batch)
    lengths = np.asarray(turn_tokens(policy, calls) or [0])
    staging = target.with_name(target.name + ".partial")
    outputs.remove(staging, inside=target.parent)
    save(model, tok, staging)
    lines = sorted({t.text for e in calls for t in e.agent_turns})
    write_json(
        staging / WARM_META,
        {
            "model": agent_cfg.model,
            "seed": seed,
            "calls": len(calls),
            "reference_gold": sum(e.gold.score for e in calls) / max(1, len(calls)),
            "epoch_loss": [round(x, 4) for x in losses],
            "copy_drill": {
                "steps": drilled.steps,
                "loss": [round(x, 4) for x in drilled.loss],
                "copied": [round(x, 4) for x in drilled.copied],
            },
            "seconds": round(time.perf_counter() - began, 1),
            "turn_tokens": {
                "median": float(np.median(lengths)),
                "p99": float(np.percentile(lengths, 99)),
                "max": int(lengths.max()),
            },
            "members": sorted({s.id for s in world.ensemble.train}),
            "agent_lines": lines,
        },
    )
    staging.rename(target)
    return target


def _base_model(model: str, texts: Sequence[str], seed: int) -> tuple[Any, Any]:
    """The model before its warm start: ``tiny`` (its tokenizer trained on ``texts``),
    ``smollm2``, or a local Hugging Face directory."""
    if model == "tiny":
        return tiny(texts, seed=seed)
    if model == "smollm2":
        return smollm2()
    return load(Path(model).expanduser())
