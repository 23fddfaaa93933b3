"""``sim2human predictivity RUN_DIR``: which of the study's simulator families predicts how an
agent does with real patients (``experiments.research.predictivity``)?

A command rather than an example script: it reads a finished run, as ``stress`` and
``fidelity`` do, stores ``predictivity.json`` and ``predictivity.md`` in it, and ``sim2human
report`` then includes the table as a section. A run it may not write (read-only, or a study
still running) is measured and printed; ``--out DIR`` stores the files there instead.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from sim2human.cli.fidelity import DataOpt, OutOpt, RunDirArg
from sim2human.cli.options import ScenarioPathOpt, use_corpus
from sim2human.cli.output import JsonOpt, Output, QuietOpt
from sim2human.store.layout import PREDICTIVITY_JSON, PREDICTIVITY_MD

if TYPE_CHECKING:
    from sim2human.experiments.research.predictivity import Budget, Played, PoolAgent
    from sim2human.experiments.study.config import StudyConfig
    from sim2human.experiments.study.world import StudyWorld
    from sim2human.simulators.base import SimulatorSpec

ProbesOpt = Annotated[
    int,
    typer.Option(
        min=0,
        max=1000,
        help="Probe checkpoints per sub-run added to its final one (evenly spaced through "
        "training; the run must have saved them: train.eval_every > 0).",
    ),
]
EpisodesOpt = Annotated[int, typer.Option(min=1, max=10_000, help="Episodes per simulator member.")]
VisitOpt = Annotated[int, typer.Option(min=1, max=10_000, help="Episodes per real-patient visit.")]


def predictivity(
    run_dir: RunDirArg,
    data: DataOpt = None,
    probes: ProbesOpt = 2,
    episodes: EpisodesOpt = 8,
    visit_episodes: VisitOpt = 2,
    out_dir: OutOpt = None,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
    scenario_path: ScenarioPathOpt = None,
) -> None:
    """Rank a study's agents (final and probe checkpoints) on every simulator family and on
    every replayed real patient: per family, Spearman and mean |gap| against the patients, with
    bootstrap CIs over agents and visits. Stores predictivity.json and predictivity.md."""
    from sim2human.cli.reading import noter, reading
    from sim2human.experiments.research import predictivity as pred
    from sim2human.experiments.study.config import load_run_config
    from sim2human.experiments.study.world import StudyWorld

    if data is not None:
        use_corpus(data)
    output = Output(as_json, quiet)
    err = output.progress_console()
    with reading(run_dir, out_dir, "predictivity", noter(err, run_dir)) as r:
        if r.store is None:
            err.print(f"note: {r.unstored('the table')}", highlight=False, soft_wrap=True)
        cfg = load_run_config(run_dir)
        world = StudyWorld.build(cfg)
        pool = pred.build_pool(run_dir, cfg, probes)
        if probes and all(a.update is None for a in pool):
            err.print(
                f"note: {run_dir}: no probe checkpoints saved (train.eval_every: 0); the pool "
                f"holds the {len(pool)} final checkpoints only",
                highlight=False,
                soft_wrap=True,
            )
        families = pred.simulator_families(world)
        members = {f: specs for f, (_, specs) in families.items()}
        members[pred.PEOPLE] = pred.people(world, cfg)
        budget = pred.Budget(episodes, visit_episodes)
        started = time.perf_counter()
        played = _play(pool, cfg, world, members, budget, err)
        result = pred.summarise(pool, played, {f: s for f, (s, _) in families.items()}, budget)
        result["wall_seconds"] = round(time.perf_counter() - started, 1)
        stored = _store(result, r.store, run_dir if r.into_run else None)
    _print(result, stored, output)


def _play(
    pool: Sequence[PoolAgent],
    cfg: StudyConfig,
    world: StudyWorld,
    members: Mapping[str, Sequence[SimulatorSpec]],
    budget: Budget,
    err: Console,
) -> list[Played]:
    """Every agent of the pool on every member, under one progress bar of episodes."""
    from sim2human.experiments.research import predictivity as pred

    per_agent = sum(
        len(specs) * (budget.per_visit if f == pred.PEOPLE else budget.per_member)
        for f, specs in members.items()
    )
    bar = Progress(
        TextColumn("[bold]predictivity"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.description}"),
        TimeElapsedColumn(),
        console=err,
    )
    played: list[Played] = []
    with bar:
        task = bar.add_task("episodes", total=per_agent * len(pool))
        for agent in pool:
            bar.update(task, description=agent.label)
            tick = lambda _: bar.advance(task)  # noqa: E731
            played.append(pred.play_agent(agent, cfg, world, members, budget, tick))
    return played


def _store(result: dict[str, Any], folder: Path | None, run: Path | None) -> Path | None:
    """predictivity.json and .md in ``folder`` (none: nothing stored)."""
    from sim2human.outputs import check_target, write_all
    from sim2human.report.predictivity import markdown
    from sim2human.store.rundir import json_text

    if folder is None:
        return None
    js, md = folder / PREDICTIVITY_JSON, folder / PREDICTIVITY_MD
    for target in (js, md):  # both checked before either is written
        check_target(target, inside=run)
    write_all([(js, json_text(result)), (md, "\n".join(markdown(result)) + "\n")], inside=run)
    return js


def _print(result: dict[str, Any], stored: Path | None, output: Output) -> None:
    from sim2human.report import predictivity as page

    output.emit(result)
    out = output.table_console()
    for key, title in (("all_agents", "all agents"), ("not_frozen", "agents not frozen")):
        table = result.get(key)
        if table is None:
            continue
        t = Table(
            title=f"which simulators predict real patients: {title} ({table['agents']}), "
            f"{result['visits']} visits",
            title_justify="left",
        )
        for col in page.COLUMNS:
            t.add_column(col, justify="left" if col in ("simulator family", "split") else "right")
        for row in table["families"]:
            t.add_row(*page.cells(row))
        out.print(t)
        out.print(page.verdict(table).replace("`", ""), highlight=False)
    if stored is not None:
        out.print(f"written: {stored} (sim2human report includes it)", highlight=False)
