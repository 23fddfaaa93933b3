"""Running a study: sub-runs in worker processes, one progress bar, Ctrl-C safe, then the table."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

import torch
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from sim2human import outputs
from sim2human.errors import Sim2HumanError, UsageError
from sim2human.experiments.executors.backends import Choice, open_executor, served_for
from sim2human.experiments.executors.fallback import run_here
from sim2human.experiments.executors.pool import WorkersDied, report_progress
from sim2human.experiments.executors.units import (
    Advance,
    ClusterLost,
    Executor,
    Ledger,
    Note,
    Unit,
    Work,
    env_for_workers,
)
from sim2human.experiments.study.aggregate import aggregate
from sim2human.experiments.study.condition import (
    reference_scripted,
    run_condition,
    trained_episodes,
)
from sim2human.experiments.study.config import WARM_START_AGENT, StudyConfig
from sim2human.experiments.study.diversity import diversity_groups, measure_groups
from sim2human.experiments.study.lm_condition import run_lm_condition
from sim2human.experiments.study.plan import StudyPlan
from sim2human.experiments.study.results import FailedRun, StudyResult, write_study_result
from sim2human.experiments.study.resume import finished, prepare
from sim2human.experiments.study.warm_start_reference import reference_warm_start
from sim2human.experiments.study.world import StudyWorld
from sim2human.llm.client import EndpointConfig
from sim2human.store.layout import DIVERSITY_JSON, RunLayout
from sim2human.store.loading import output_dir
from sim2human.store.lock import run_lock
from sim2human.store.rundir import write_json
from sim2human.train.config import LMAgentConfig

Call = tuple[str, str, int, str]
"""One job of a study for ``_work``: kind (``condition``, ``reference``, ``diversity``), name,
seed and output path."""
Finish = Callable[[StudyResult, Path, Console], None]
"""What runs after ``study.json`` is written, under the run's lock: the command diagnoses the
run once (``diagnosis.json``) and renders the reports from the stored files."""
RETRIES = 1
"""How many times a job whose worker died is run again before it is marked failed (Ray Tune's
``FailureConfig(max_failures=...)``): once, in case the machine was only short of memory for a
moment; a job that kills its worker twice would most likely do so again."""


class StudyFailed(Sim2HumanError):
    """Jobs whose workers died: ``study.json`` holds what finished, each failed job named in it
    (``study.failed``); ``--resume`` reruns them. Exit code 1."""

    def __init__(self, study: StudyResult, out: Path) -> None:
        named = "; ".join(f"{f.job}: {f.reason}" for f in study.failed)
        super().__init__(
            f"{out}: {len(study.failed)} job(s) failed ({named}); study.json holds what "
            f"finished; continue with --resume --out {out}"
        )
        self.study = study
        self.out = out


def default_out(cfg: StudyConfig) -> Path:
    return Path("runs") / f"{datetime.now():%Y%m%d-%H%M%S}-{cfg.name}"


def _load(cfg_json: str) -> StudyConfig:
    """The study config a worker is handed, parsed (once per worker on a remote executor)."""
    return StudyConfig.model_validate_json(cfg_json)


def _work(config: StudyConfig | str, kind: str, name: str, seed: int, out: str) -> dict[str, Any]:
    """One job of a study, in a worker: a sub-run (``condition``), a ``reference`` agent's
    evaluation, or the simulators' ``diversity`` (which needs no trained agent, so it runs
    beside training instead of after it). ``config``: parsed, or as JSON."""
    cfg = _load(config) if isinstance(config, str) else config
    if kind in ("reference", "condition"):  # a job run again after its worker died starts over
        outputs.remove(Path(out), inside=Path(out).parent)
    if kind == "reference":
        if name == WARM_START_AGENT:
            return reference_warm_start(cfg, Path(out))
        return reference_scripted(cfg, Path(out))
    if kind == "diversity":
        torch.set_num_threads(1)  # the embedding model beside a training worker
        world = StudyWorld.build(cfg)
        runs = [(c.name, world.train_members(c), world.ensemble.heldout) for c in cfg.conditions]
        measured = measure_groups(diversity_groups(runs), world.scenario, world.max_turns)
        write_json(Path(out), measured.model_dump(mode="json"))
        return {}
    cond = next(c for c in cfg.conditions if c.name == name)
    if isinstance(cfg.agent, LMAgentConfig):
        return run_lm_condition(cfg, cfg.agent, cond, seed, Path(out), progress=report_progress)
    return run_condition(cfg, cond, seed, Path(out), progress=report_progress)


def _side_jobs(cfg: StudyConfig, out: Path, note: Note) -> list[Call]:
    """The reference agents' evaluations and the diversity measurement not yet stored (or torn:
    ``resume.finished``)."""
    jobs: list[Call] = []
    for name in cfg.reference_agents:
        ref = RunLayout(out).reference(name)
        if not finished(cfg, out, ref, note):
            outputs.remove(ref, inside=out)  # a linked one as a link, never followed
            jobs.append(("reference", name, 0, str(ref)))
    if not (out / DIVERSITY_JSON).exists():
        jobs.append(("diversity", "", 0, str(out / DIVERSITY_JSON)))
    return jobs


def run_study(
    study: StudyConfig | StudyPlan,
    out: Path,
    *,
    workers: int | None = None,
    console: Console | None = None,
    resume: bool = False,
    finish: Finish | None = None,
    retries: int = RETRIES,
    executor: Choice | None = None,
    max_concurrency: int | None = None,
) -> StudyResult:
    """Train and evaluate every condition x seed and write ``study.json``; then ``finish``
    (the command passes ``cli.report.finish_study``) while the run is still locked.

    With ``resume``, sub-runs that finished in ``out`` are kept and the rest are run again.
    A job whose worker dies is run again up to ``retries`` times, then marked failed while the
    others finish: ``StudyFailed`` then says which, after ``study.json`` is written over what
    finished (without ``finish``).
    An embedded model that ``llm`` members use is started once here and shared by the workers
    (on ``ray``: once per node, ``backends.served_for``).
    The run directory is locked for the whole study: a second writer is refused (``store.lock``).
    A study given as its config is resolved first (``plan.StudyPlan``: a family whose corpus is
    not found is left out, with a note); the command passes the plan it resolved already.
    ``executor`` says where the jobs run (default: ``local`` processes; ``backends``); the
    run directory is the same on every executor, so a study resumes on any of them.
    ``max_concurrency`` caps every served endpoint and the conversations in flight in each
    worker (``LLMSettings.capped``); it is not part of the study (``config.yaml`` keeps the
    file's caps), so a study resumes under another cap.
    """
    choice = executor or Choice()
    choice.check()  # Ray asked for but missing: refused before anything is written
    if resume and not out.exists():
        raise UsageError(f"{out}: nothing to resume (no such directory)")
    console = console or Console(stderr=True)
    note: Note = lambda msg: console.print(f"note: {out}: {msg}", highlight=False, soft_wrap=True)  # noqa: E731
    plan = study if isinstance(study, StudyPlan) else StudyPlan.of(study)
    if plan is not study and plan.left_out:  # the command said its plan's already
        note(plan.left_out)
    cfg = plan.config
    with run_lock(
        output_dir(out, "run directory"), "study --resume" if resume else "study", note=note
    ):
        jobs = prepare(cfg, out, resume, note)  # against the config as written, not endpoints
        needed = set(plan.endpoints)
        if workers is None and plan.model_takes_every_core():
            workers = 1
        settings = cfg.llm if max_concurrency is None else cfg.llm.capped(max_concurrency)
        with served_for(choice, settings, needed) as live:
            played = plan.config.model_copy(update={"llm": live})
            run = _Run(replace(plan, config=played), out, console, note, retries, choice)
            result = run.study(jobs, workers)
        if result.failed:
            raise StudyFailed(result, out)
        if finish is not None:
            finish(result, out, console)
        return result


class _Run:
    """One pass over a study's jobs: run them, then aggregate what finished."""

    def __init__(
        self,
        plan: StudyPlan,
        out: Path,
        console: Console,
        note: Note,
        retries: int,
        choice: Choice = Choice(),  # noqa: B008 (frozen)
    ) -> None:
        self.cfg, self.endpoints = plan.config, plan.endpoints
        self.out, self.console = out, console
        self.note, self.retries, self.choice = note, retries, choice
        self.workers: int | None = None

    def study(self, jobs: list[tuple[str, int]], workers: int | None) -> StudyResult:
        cfg, out = self.cfg, self.out
        self.workers, started = workers, time.perf_counter()
        n_eval = (
            cfg.eval.episodes_per_member
            * len(cfg.ensemble.heldout)
            * cfg.ensemble.members_per_family
        )
        by_name = {c.name: c for c in cfg.conditions}
        total = sum(trained_episodes(cfg, by_name[name]) + 2 * n_eval for name, _ in jobs)
        side = _side_jobs(cfg, out, self.note)  # once: it clears an unfinished reference dir
        units = self._units(jobs, side)
        env = env_for_workers(_key_names(cfg))
        with open_executor(self.choice, workers, len(units), env, self.note) as (executor, n):
            # every unit counted, reference agents too: as "not started: N sub-run(s)" counts
            what = f"{len(units)} sub-runs, {n} at a time"
            failed = self._with_bar(executor, units, what, total)
        study = aggregate(cfg, out, time.perf_counter() - started, failed)
        write_study_result(out, study)
        return study

    def _with_bar(
        self, executor: Executor, units: list[Unit], what: str, total: int
    ) -> list[FailedRun]:
        columns = (
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("episodes"),
            TimeElapsedColumn(),
        )
        on = "" if executor.name == "local" else f" on {executor.name}"
        with Progress(*columns, console=self.console, transient=False) as bar:
            task = bar.add_task(f"{self.cfg.name}: {what}{on}", total=total)
            failed = self._jobs(executor, units, lambda n: bar.advance(task, n))
            bar.update(task, completed=total)
        return failed

    def _units(self, jobs: list[tuple[str, int]], side: list[Call]) -> list[Unit]:
        """Every job as a unit, longest first; its id is where it writes in the run directory
        (deterministic: the same on every executor and every resume)."""
        out = self.out
        calls = longest_first(
            self.cfg,
            [
                ("condition", name, seed, str(RunLayout(out).sub_run(name, seed)))
                for name, seed in jobs
            ]
            + side,
        )
        return [
            Unit(
                id=Path(path).relative_to(out).as_posix(),
                label=f"{name} seed {seed}" if kind == "condition" else f"{kind} {name}".strip(),
                args=(kind, name, seed),
                out=path,
            )
            for kind, name, seed, path in calls
        ]

    def _jobs(self, executor: Executor, units: list[Unit], advance: Advance) -> list[FailedRun]:
        """Run every unit; the ones whose workers died (after ``retries``), as failed runs."""
        ledger = Ledger.of(self.out, units)
        work = Work(_work, _load, self.cfg.model_dump_json())
        try:
            try:
                executor.run(
                    work, units, ledger, advance=advance, retries=self.retries, note=self.note
                )
            except ClusterLost as lost:  # --on-ray-loss local
                self._here(lost, units, ledger, advance)
        except WorkersDied as died:
            return [
                FailedRun(
                    job=f.label,
                    path=units[f.index].id,
                    reason=f.reason + (f", on each of {f.attempts} attempts" * (f.attempts > 1)),
                )
                for f in died.failures
            ]
        return []

    def _here(self, lost: ClusterLost, units: list[Unit], ledger: Ledger, adv: Advance) -> None:
        """What a lost Ray cluster left, run on this machine (``fallback``)."""
        cfg = self.cfg
        run_here(
            lost,
            units,
            ledger,
            work_for=lambda live: Work(
                _work, _load, cfg.model_copy(update={"llm": live}).model_dump_json()
            ),
            settings=cfg.llm,
            needed=set(self.endpoints),
            workers=self.workers,
            advance=adv,
            retries=self.retries,
            note=self.note,
        )


def _key_names(cfg: StudyConfig) -> list[str]:
    """The environment variables the study's endpoints read their keys from."""
    return [
        e.api_key_env
        for e in cfg.llm.endpoints.values()
        if isinstance(e, EndpointConfig) and e.api_key_env
    ]


def longest_first(cfg: StudyConfig, calls: list[Call]) -> list[Call]:
    """``calls`` in the order to submit them: longest expected first, so that the workers run
    out of work together instead of one of them training the slowest sub-run alone at the end.
    Order changes nothing else: each sub-run is seeded by its own condition and seed."""
    return sorted(calls, key=lambda call: expected_cost(cfg, call), reverse=True)


def expected_cost(cfg: StudyConfig, call: Call) -> tuple[int, int]:
    """A rank of how long a job takes, from the config alone (higher: longer).

    Measured on the quick demo: a sub-run with perturbations takes longest (37-41 s; one with
    LLM members is slower still), then one on an ensemble (26-30 s), then one on a frozen
    simulator (10-12 s); within a rank, more training episodes take longer. The side jobs (the
    diversity measurement, 8 s, and the scripted reference, 1 s) rank just above the frozen
    sub-runs: never last, where the diversity measurement alone would keep one worker busy, and
    behind the ensembles, so that the short frozen sub-runs fill in the end.
    """
    kind, name, _, _ = call
    if kind != "condition":
        return (1, int(kind == "diversity"))
    condition = next(c for c in cfg.conditions if c.name == name)
    if condition.perturb or condition.llm_share > 0:
        rank = 3
    else:
        rank = 2 if condition.sampler != "fixed" else 0
    return (rank, trained_episodes(cfg, condition))
