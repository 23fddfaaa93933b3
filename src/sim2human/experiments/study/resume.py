"""Where a study starts in its run directory: afresh, or resumed from what finished there.

A resume keeps every finished, whole sub-run and runs the rest again from scratch: each is
deterministic by its seed, so the numbers are a straight-through run's. It refuses a config
other than the stored one, except for added conditions and reference agents.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from sim2human import outputs
from sim2human.errors import UsageError
from sim2human.experiments.executors.units import Note
from sim2human.experiments.study.config import WARM_START_AGENT, StudyConfig, parse_study
from sim2human.experiments.study.wholeness import TornSubRun, read_whole
from sim2human.store.layout import CONFIG_YAML, DIVERSITY_JSON, SUMMARY, RunLayout
from sim2human.store.loading import read_text, read_yaml


def _stored_config(path: Path) -> StudyConfig | None:
    """The stored config as this version reads it (one written before a field existed, such as
    a condition's ``role``, gets its default), or None if it no longer parses."""
    try:
        return parse_study(read_yaml(path, "stored study config"), str(path))
    except UsageError:
        return None


def prepare(cfg: StudyConfig, out: Path, resume: bool, note: Note) -> list[tuple[str, int]]:
    """The sub-runs still to do. Resuming keeps every finished sub-run that is whole
    (``finished``) and clears the others: each is deterministic by its seed, so rerunning it
    whole gives the numbers a straight-through run would have given."""
    config_text = yaml.safe_dump(cfg.model_dump(mode="json"), sort_keys=False)
    stored = out / CONFIG_YAML
    if resume:
        if not stored.exists():
            raise UsageError(f"{out}: nothing to resume (no config.yaml)")
        if read_text(stored, "stored study config") != config_text:
            _resumable(_stored_config(stored), cfg, out, note)
    elif RunLayout(out).conditions.exists():
        raise UsageError(
            f"{out}: already holds sub-runs; pass --resume to continue it, or choose another --out"
        )
    outputs.write_text(stored, config_text, inside=out)
    return _unfinished(cfg, out, note)


def _resumable(stored: StudyConfig | None, cfg: StudyConfig, out: Path, note: Note) -> None:
    """Refuse to resume under another config, except one that only adds conditions or
    reference agents: the finished sub-runs are kept (each depends on its condition and seed
    alone) and the new ones run beside them. A language-model run made before its warm start
    was a row gains it; a study gains a condition without rerunning the others. What reads
    every condition is made again: the warm start's row (it plays each condition's training
    members) and the simulators' diversity."""
    if stored == cfg:
        return
    had = {c.name: c for c in stored.conditions} if stored is not None else {}
    new = [c.name for c in cfg.conditions if c.name not in had]
    agents = [a for a in cfg.reference_agents if stored is None or a not in stored.reference_agents]
    changes = {"reference_agents": cfg.reference_agents, "conditions": cfg.conditions}
    if (
        stored is None
        or not (new or agents)
        or any(c != had.get(c.name, c) for c in cfg.conditions)
        or not set(had) <= {c.name for c in cfg.conditions}
        or not set(stored.reference_agents) <= set(cfg.reference_agents)
        or stored.model_copy(update=changes) != cfg
    ):
        raise UsageError(
            f"{out}: the study config differs from the one it was started with; resume with the "
            "same file and --quick setting (conditions and reference agents may be added)"
        )
    added = [*(f"condition {n}" for n in new), *(f"reference agent {a}" for a in agents)]
    note(f"resuming with {', '.join(added)} added")
    if new:
        for stale in (RunLayout(out).reference(WARM_START_AGENT), out / DIVERSITY_JSON):
            if stale.exists() or stale.is_symlink():
                note(f"{stale.relative_to(out)}: made again (it reads every condition)")
                outputs.remove(stale, inside=out)


def _unfinished(cfg: StudyConfig, out: Path, note: Note) -> list[tuple[str, int]]:
    """The sub-runs to run, each cleared first: those never finished, and torn ones."""
    todo = []
    for c in cfg.conditions:
        for seed in cfg.seeds:
            sub = RunLayout(out).sub_run(c.name, seed)
            if finished(cfg, out, sub, note):
                continue
            outputs.remove(sub, inside=out)  # a linked one as a link, never followed
            todo.append((c.name, seed))
    return todo


def finished(cfg: StudyConfig, out: Path, sub: Path, note: Note) -> bool:
    """Whether ``sub`` finished (its ``summary.json`` is written last) and its log holds what
    the summary records; a torn one is named (``note``) and run again. Episodes of another
    scenario are refused: that directory holds another study's sub-run."""
    if not (sub / SUMMARY).exists():
        return False
    try:
        read_whole(sub, cfg.scenario, "running it again")
    except TornSubRun as err:
        note(f"{sub.relative_to(out)}: {err.why}; running it again")
        return False
    return True
