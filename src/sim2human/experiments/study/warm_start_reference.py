"""An LM study's warm start as a reference agent: each seed's supervised start, before GRPO,
evaluated on the members and profiles the conditions are evaluated on.

Why a row of its own: a condition's row says where GRPO ended, not what GRPO did. On intake the
study's table showed a 50-point transfer gap that the warm start already had (71% against 41%
of calls complete, read by ``scripts/lm_play.py``), so the table alone read a supervised
model's weakness as RL's collapse. Beside the warm start's row a reader sees both.

One directory, ``reference/warm-start/``, holds every seed's evaluation (as the scripted
reference's holds its one); each episode's ``condition`` names its seed
(``config.warm_start_label``: ``warm-start-seed-0``), which keeps ids unique and lets the
aggregation cluster the bootstrap by warm start. The warm start is the study's own
(``lm_condition.warm_start``: made here if no condition made it yet), played at
``agent.eval_temperature`` as the trained policies are.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from sim2human.experiments.study.condition import (
    eval_splits,
    evaluation_fields,
    llm_accounting,
)
from sim2human.experiments.study.config import WARM_START_AGENT, StudyConfig, warm_start_label
from sim2human.experiments.study.lm_condition import WARM_META, novel_share, warm_policy
from sim2human.experiments.study.lm_condition import warm_start as made_warm_start
from sim2human.experiments.study.sub_run_summary import SubRunSummary
from sim2human.experiments.study.world import (
    Splits,
    StudyWorld,
    evaluate_splits,
    heldout_splits,
    llm_runtime,
)
from sim2human.metrics.outcomes import by
from sim2human.store.layout import EPISODES, SUMMARY, WARM_START
from sim2human.store.rundir import EpisodeLog, read_json
from sim2human.train.config import LMAgentConfig
from sim2human.types import Episode


def training_splits(cfg: StudyConfig, world: StudyWorld) -> Splits:
    """The training members the warm start plays: the ones it learned from, and every member a
    condition trains on, each as many times as that condition's evaluation plays it (the most,
    where two differ), so that every condition's calls there have the warm start's beside them,
    member for member and profile for profile (``diagnose``'s *against its warm start*)."""
    times = dict.fromkeys((s.id for s in world.ensemble.train), cfg.eval.episodes_per_member)
    specs = {s.id: s for s in world.ensemble.train}
    for condition in cfg.conditions:
        _, members, per = eval_splits(cfg, world, world.train_members(condition))[0]
        for s in members:
            specs[s.id] = s
            times[s.id] = max(per, times.get(s.id, 0))
    counts = sorted(set(times.values()))
    return [("train", [specs[i] for i in specs if times[i] == n], n) for n in counts]


def reference_warm_start(cfg: StudyConfig, out: Path) -> dict[str, Any]:
    """Every seed's warm start evaluated on the training members (``training_splits``), the
    held-out families and real people; ``out`` is ``<run>/reference/warm-start``. Returns its
    summary."""
    agent_cfg = cfg.agent
    if not isinstance(agent_cfg, LMAgentConfig):
        raise TypeError("the warm-start reference needs an lm agent")  # the config refuses it
    torch.set_num_threads(1)
    world = StudyWorld.build(cfg)
    splits = [*training_splits(cfg, world), *heldout_splits(cfg, world)]
    needed = {s.llm.endpoint for _, members, _ in splits for s in members if s.llm is not None}
    log = EpisodeLog(out / EPISODES)
    evals: list[Episode] = []
    corpus: set[str] = set()
    with log, llm_runtime(cfg, needed) as llm:
        for seed in cfg.seeds:
            warm = made_warm_start(cfg, agent_cfg, world, seed, out.parents[1] / WARM_START)
            corpus |= set(read_json(warm / WARM_META)["agent_lines"])
            policy, _ = warm_policy(warm, agent_cfg, world)
            policy.temperature = agent_cfg.eval_temperature
            label = warm_start_label(seed)
            evals += evaluate_splits(cfg, policy, world, llm, splits, label, log.write)
        llm_stats = llm_accounting(llm)
    summary = SubRunSummary(
        **evaluation_fields(evals, set()),  # no sampler: as the scripted agent's
        condition=WARM_START_AGENT,
        seed=0,
        episodes_trained=0,
        train_by_family=by([e for e in evals if e.split == "train"], lambda e: e.family),
        agent={"kind": "lm", "model": agent_cfg.model, "record_source": "submitted"},
        novel_turn_share=novel_share(evals, corpus),
        llm=llm_stats or None,
        episodes_logged=len(log.ids),
    )
    return summary.write(out / SUMMARY)
