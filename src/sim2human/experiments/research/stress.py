"""Stressing a finished study run: every condition's agents (each seed) and the scripted
reference, swept over the perturbation grid on the study's held-out ensemble, plus an
adversarial search per condition; results in ``stress.json``, ``stress.html`` and ``stress.md``.

Each agent's sweep and its search are units of the executor seam (``units``; ids
``stress/<label>/seed-<k>`` and ``.../search``; apart, two cores share the work evenly, where 13
agents of like cost left one idle for the 13th, a seventh of the wall): on the ``local``
executor, worker processes (one per core, like the study's sub-runs); on ``ray``, Ray actors
that parse the study config once, with each checkpoint shipped in its unit (a cluster's nodes
need not see the run directory). Workers report finished episodes to one progress bar; the
driver alone writes, and results are assembled in agent order whatever order they finish in.
Nothing is written into the sub-run directories.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Literal

import torch
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from sim2human.agents.base import Agent
from sim2human.agents.endpoint_agent import EndpointAgent
from sim2human.agents.scripted import reference_agent
from sim2human.errors import RunDirError
from sim2human.experiments.executors.backends import Choice, open_executor
from sim2human.experiments.executors.pool import report_progress
from sim2human.experiments.executors.units import Ledger, Note, Unit, Work, env_for_workers
from sim2human.experiments.study.config import StudyConfig, load_run_config
from sim2human.experiments.study.trained_agents import (
    check_saved,
    load_saved,
    pack,
    saved_agent,
    saved_name,
    unpack,
)
from sim2human.experiments.study.world import StudyWorld
from sim2human.llm.runtime import LLMRuntime
from sim2human.simulators.base import SimulatorSpec
from sim2human.simulators.kinds import needs_endpoint
from sim2human.store.layout import STRESS_JSON, RunLayout
from sim2human.store.loading import output_dir
from sim2human.store.lock import run_lock
from sim2human.store.rundir import write_json
from sim2human.stress.adversarial import SearchConfig, result_json, search
from sim2human.stress.sweep import Curves, StressPlan, summarise_curves, sweep

SCRIPTED = "scripted"
LLM = "llm"
"""The endpoint agent's name among the stressed agents (``cli.llm_agent_options.LLM_AGENT``)."""
AGENT_ENDPOINT = "stress-agent"
"""The endpoint agent's name among the study's endpoints while it is stressed."""
RETRIES = 1
"""Times an agent whose worker died is stressed again before the command fails (as a study's
sub-runs: ``runner.RETRIES``)."""
Context = tuple[StudyConfig, StressPlan, "SearchConfig | None"]
"""What every stress unit shares: the study config, the sweep, the search (or None)."""


@dataclass(frozen=True)
class AgentRef:
    """One agent to stress: a condition's saved agent for one seed (``trained_agents``), or the
    scripted reference."""

    label: str
    seed: int
    saved: str | None
    search: bool
    blob: bytes | None = None
    """The saved agent's bytes (``trained_agents.pack``), for a worker that may not see
    ``saved`` (``ray``)."""
    llm: EndpointAgent | None = None
    """An LLM agent behind an endpoint (``--llm-base-url``), stressed beside the run's agents."""

    @property
    def unit_id(self) -> str:
        return f"stress/{self.label}/seed-{self.seed}"


def study_agents(
    run_dir: Path,
    cfg: StudyConfig,
    conditions: Sequence[str] | None = None,
    llm: EndpointAgent | None = None,
) -> list[AgentRef]:
    """Every seed of every (selected) condition, then the scripted reference and the endpoint
    agent (``llm``, when given); the first seed of each gets the adversarial search."""
    known = [c.name for c in cfg.conditions]
    extra = [SCRIPTED, *([LLM] if llm is not None else [])]
    chosen = list(conditions) if conditions is not None else [*known, *extra]
    for name in chosen:
        if name not in (*known, *extra):
            raise RunDirError(
                f"{run_dir}: no condition {name!r} in this run (known: "
                f"{', '.join([*known, *extra])})"
            )
    refs = []
    for name in [c for c in known if c in chosen]:
        for i, seed in enumerate(cfg.seeds):
            path = saved_agent(RunLayout(run_dir).sub_run(name, seed), cfg)
            check_saved(path, cfg)  # every agent readable before any work starts
            refs.append(AgentRef(name, seed, str(path), search=i == 0))
    if SCRIPTED in chosen:
        refs.append(AgentRef(SCRIPTED, 0, None, search=True))
    if llm is not None and LLM in chosen:
        refs.append(AgentRef(LLM, 0, None, search=True, llm=llm))
    return refs


def build_agent(
    ref: AgentRef, world: StudyWorld, cfg: StudyConfig, llm: LLMRuntime | None = None
) -> Agent:
    """``ref``'s agent: from the run directory, from the bytes it carries (``ray``), or behind
    its endpoint (asking through ``llm``'s client for it)."""
    if ref.llm is not None:
        return ref.llm.build(world.scenario, llm.clients[AGENT_ENDPOINT] if llm else None)
    if ref.saved is None:
        return reference_agent(world.scenario)
    if ref.blob is None:
        return load_saved(Path(ref.saved), cfg, world.scenario, ref.seed)
    with tempfile.TemporaryDirectory(prefix="sim2human-stress-") as scratch:
        local = unpack(ref.blob, saved_name(cfg), Path(scratch))
        return load_saved(local, cfg, world.scenario, ref.seed)


@contextmanager
def agent_runtime(cfg: StudyConfig, ref: AgentRef) -> Iterator[LLMRuntime | None]:
    """The event loop and client an endpoint agent asks through (None for any other agent):
    the endpoint checked with one request first, and no response cache, so the agent under
    test is never answered by an earlier run."""
    if ref.llm is None:
        yield None
        return
    endpoints = {**cfg.llm.endpoints, AGENT_ENDPOINT: ref.llm.endpoint}
    settings = cfg.llm.model_copy(update={"endpoints": endpoints, "cache": None})
    with LLMRuntime.open(settings, {AGENT_ENDPOINT}) as runtime:
        yield runtime


Part = Literal["sweep", "search"]
"""A unit's share of one agent's stress (the module docstring says why they are apart)."""


def stress_agent(
    cfg: StudyConfig,
    ref: AgentRef,
    plan: StressPlan,
    search_cfg: SearchConfig | None,
    progress: Callable[[int], None] | None = None,
    parts: Sequence[Part] = ("sweep", "search"),
) -> dict[str, Any]:
    """Sweep one agent and search it, if asked (or only ``parts`` of that); plain data (it
    crosses processes). Each part builds its own agent and plays its own seeds."""
    torch.set_num_threads(1)
    world = StudyWorld.build(cfg)

    tick = lambda _: progress(1) if progress is not None else None  # noqa: E731

    result: dict[str, Any] = {"label": ref.label, "seed": ref.seed}
    with agent_runtime(cfg, ref) as llm:
        if "sweep" in parts:
            result["sweep"] = sweep(
                build_agent(ref, world, cfg, llm),
                programmatic(world.ensemble.heldout),
                world.scenario,
                plan,
                max_turns=world.max_turns,
                label=ref.label,
                on_episode=tick,
                llm=llm,
            )
        if "search" in parts and search_cfg is not None and ref.search:
            found = search(
                build_agent(ref, world, cfg, llm),
                search_members(cfg, world, ref.label, search_cfg.members),
                world.scenario,
                search_cfg,
                max_turns=world.max_turns,
                on_episode=tick,
                llm=llm,
            )
            result["search"] = {**result_json(found), "seed": ref.seed}
    return result


def search_members(
    cfg: StudyConfig, world: StudyWorld, label: str, which: str
) -> tuple[SimulatorSpec, ...]:
    if which == "heldout":
        return programmatic(world.ensemble.heldout)
    condition = next((c for c in cfg.conditions if c.name == label), None)
    return programmatic(
        world.ensemble.train if condition is None else world.train_members(condition)
    )


def programmatic(members: Sequence[SimulatorSpec]) -> tuple[SimulatorSpec, ...]:
    """The members stress can play: those that need no endpoint (``KINDS``). Perturbations act
    on programmatic replies; an ``llm`` member would need the study's endpoints at stress
    time, so it is left out of the sweep and the search (as from the exploit finder)."""
    playable = tuple(s for s in members if not needs_endpoint(s))
    if not playable:
        raise RunDirError("no member to stress: every one plays on an endpoint (kind 'llm')")
    return playable


def _load(payload: tuple[str, StressPlan, SearchConfig | None]) -> Context:
    """What a worker is handed, parsed (once per worker on a remote executor)."""
    cfg_json, plan, search_cfg = payload
    return StudyConfig.model_validate_json(cfg_json), plan, search_cfg


def _work(context: Context, ref: AgentRef, part: Part) -> dict[str, Any]:
    """One stress unit, in a worker: one agent swept, or searched."""
    cfg, plan, search_cfg = context
    return stress_agent(cfg, ref, plan, search_cfg, progress=report_progress, parts=(part,))


def stress_run(
    run_dir: Path,
    out: Path | None = None,
    *,
    plan: StressPlan,
    search_cfg: SearchConfig | None = None,
    conditions: Sequence[str] | None = None,
    workers: int | None = None,
    console: Console | None = None,
    finish: Callable[[dict[str, Any], Path], object] | None = None,
    executor: Choice | None = None,
    llm: EndpointAgent | None = None,
) -> dict[str, Any]:
    """Stress every agent of the study run in ``run_dir``; write stress.json into ``out``
    (default: the run directory), then ``finish`` (the command passes
    ``report.stress.write_stress_reports``) under the same lock; ``search_cfg`` None skips the
    adversarial search; ``executor`` says where the agents are stressed (default: ``local``);
    ``llm``, an endpoint agent stressed beside the run's. Returns what stress.json holds."""
    choice = executor or Choice()
    choice.check()  # Ray asked for but missing: refused before anything is written
    console = console or Console(stderr=True)
    target = out or run_dir
    load_run_config(run_dir)  # a bad run directory is named before any other directory is made
    note = lambda msg: console.print(f"note: {target}: {msg}", soft_wrap=True)  # noqa: E731
    with run_lock(output_dir(target), "stress", note=note):
        where = _Where(choice, workers, console, note)
        refs = study_agents(run_dir, load_run_config(run_dir), conditions, llm)
        stress = _stress_run(run_dir, target, plan, search_cfg, refs, where)
        if finish is not None:
            finish(stress, target)
        return stress


def _stress_run(
    run_dir: Path,
    target: Path,
    plan: StressPlan,
    search_cfg: SearchConfig | None,
    refs: Sequence[AgentRef],
    where: _Where,
) -> dict[str, Any]:
    started = time.perf_counter()
    cfg = load_run_config(run_dir)
    plan = plan.weighed_as(cfg.eval.per_family)
    held = programmatic(StudyWorld.build(cfg).ensemble.heldout)  # what the workers will play
    total = len(refs) * plan.n_episodes(held)
    if search_cfg is not None:  # a frozen condition searches on one member: fewer than this
        on = cfg.ensemble.train_members() if search_cfg.members == "train" else 0
        total += sum(r.search for r in refs) * search_cfg.max_episodes(max(len(held), on))
    results = _run_all((cfg, plan, search_cfg), refs, where, total)
    stress = assemble(cfg, plan, search_cfg, results)
    endpoint = next((r.llm for r in refs if r.llm is not None), None)
    if endpoint is not None:
        stress["llm_agent"] = endpoint.described()
    stress["wall_seconds"] = round(time.perf_counter() - started, 1)
    write_json(target / STRESS_JSON, stress)
    return stress


@dataclass(frozen=True)
class _Where:
    """Where a stress run's units go: the executor asked for, ``--workers``, the terminal."""

    choice: Choice
    workers: int | None
    console: Console
    note: Note


def _run_all(
    context: Context, refs: Sequence[AgentRef], where: _Where, total: int
) -> list[dict[str, Any]]:
    """Every agent stressed, results in the order of ``refs``: in this process when the local
    executor has one worker (as before the seam), else as units on the executor."""
    columns = (
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("episodes (at most)"),
        TimeElapsedColumn(),
    )
    cfg, plan, search_cfg = context
    local = max(1, min(where.workers or os.cpu_count() or 1, len(refs)))
    with Progress(*columns, console=where.console, transient=False) as bar:
        task = bar.add_task(f"stress: {len(refs)} agents", total=total)
        advance = lambda n: bar.advance(task, n)  # noqa: E731
        if where.choice.kind == "local" and local == 1:
            bar.update(task, description=f"stress: {len(refs)} agents on 1 core")
            out = [stress_agent(cfg, r, plan, search_cfg, advance) for r in refs]
        else:
            out = _on_executor(
                context, refs, where, lambda d: bar.update(task, description=d), advance
            )
        bar.update(task, completed=total)
        return out


def _on_executor(
    context: Context,
    refs: Sequence[AgentRef],
    where: _Where,
    describe: Callable[[str], None],
    advance: Callable[[int], None],
) -> list[dict[str, Any]]:
    """``refs`` as units on the chosen executor; their results in the order of ``refs``."""
    cfg, plan, search_cfg = context
    remote = where.choice.kind != "local"
    sent = [_shipped(r) if remote else r for r in refs]
    searched = [r for r in sent if r.search and search_cfg is not None]
    units = [  # the sweeps first: the larger parts, so the searches fill the last gaps
        *(Unit(r.unit_id, f"{r.label} seed {r.seed}", (r, "sweep")) for r in sent),
        *(Unit(f"{r.unit_id}/search", f"{r.label} search", (r, "search")) for r in searched),
    ]
    ledger = Ledger.of(Path("."), units)  # units write nothing: the ledger only keeps values
    work = Work(_work, _load, (cfg.model_dump_json(), plan, search_cfg))
    keys = [r.llm.api_key_env for r in refs if r.llm is not None and r.llm.api_key_env]
    env = env_for_workers(keys)  # an endpoint agent's key, and SIM2HUMAN_* settings
    with open_executor(where.choice, where.workers, len(units), env, where.note) as (ex, n):
        on = "cores" if ex.name == "local" else f"{ex.name} workers"
        describe(f"stress: {len(refs)} agents on {n} {on}")
        ex.run(work, units, ledger, advance=advance, retries=RETRIES, note=where.note)
    found = {r.unit_id: ledger.values[f"{r.unit_id}/search"] for r in searched}
    return [{**ledger.values[r.unit_id], **found.get(r.unit_id, {})} for r in refs]


def _shipped(ref: AgentRef) -> AgentRef:
    """``ref`` carrying its saved agent's bytes (a remote worker may not see the run dir)."""
    if ref.saved is None:
        return ref
    return replace(ref, blob=pack(Path(ref.saved)))


def assemble(
    cfg: StudyConfig,
    plan: StressPlan,
    search_cfg: SearchConfig | None,
    results: Sequence[dict[str, Any]],
) -> dict[str, Any]:
    """stress.json: robustness per agent (seeds pooled by cluster bootstrap), searches, and
    each condition's role (the report's findings compare agents by role, never by name)."""
    labels = list(dict.fromkeys(r["label"] for r in results))
    agents: dict[str, Any] = {}
    searches: dict[str, Any] = {}
    for label in labels:
        mine = [r for r in results if r["label"] == label]
        curves = Curves.from_sweeps(plan, {r["seed"]: r["sweep"] for r in mine})
        agents[label] = summarise_curves(curves, n_boot=cfg.eval.bootstrap)
        for r in mine:
            if "search" in r:
                searches[label] = r["search"]
    stress: dict[str, Any] = {
        "study": cfg.name,
        "members": "heldout",
        "heldout_families": list(cfg.ensemble.heldout),
        "perturbations": list(plan.perturbations),
        "grid": list(plan.grid),
        "episodes_per_member": plan.per_member,
        "episodes_per_family": dict(plan.per_family or ()),
        "agents": agents,
        "adversarial": searches,
        "adversarial_members": search_cfg.members if search_cfg is not None else None,
        "search_config": asdict(search_cfg) if search_cfg is not None else None,
        "roles": {
            c.name: {
                "role": c.role,
                "compare_to": c.compare_to,
                "sampler": c.sampler,
                "perturbed": c.perturb is not None,
            }
            for c in cfg.conditions
        },
    }
    return stress
