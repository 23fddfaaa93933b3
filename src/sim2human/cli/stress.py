"""``sim2human stress RUN_DIR``: severity sweeps, robustness and adversarial search for every
agent of a finished study run."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from sim2human.cli.llm_agent_options import (
    LLMKeyOpt,
    LLMModelOpt,
    LLMPromptOpt,
    LLMUrlOpt,
    endpoint_agent,
)
from sim2human.cli.options import ScenarioPathOpt
from sim2human.cli.output import JsonOpt, Output, QuietOpt
from sim2human.cli.signals import interrupt_code
from sim2human.errors import UsageError
from sim2human.store.layout import STRESS_HTML, STRESS_JSON, STRESS_MD
from sim2human.stress.adversarial import SearchConfig
from sim2human.stress.sweep import DEFAULT_GRID, DEFAULT_PER_MEMBER, StressPlan

GRID_TEXT = ",".join(f"{s:g}" for s in DEFAULT_GRID)
out_console = Console()
err_console = Console(stderr=True)


def parse_grid(text: str) -> list[float]:
    """``"0,0.25,0.5"`` -> floats; a bad entry is a UsageError naming it."""
    items = [t.strip() for t in text.split(",") if t.strip()]
    if not items:
        raise UsageError("--grid is empty: give severities in [0, 1], e.g. 0,0.25,0.5,0.75,1")
    out = []
    for t in items:
        try:
            out.append(float(t))
        except ValueError:
            raise UsageError(f"--grid: {t!r} is not a number in [0, 1]") from None
    return out


def parse_names(text: str | None) -> list[str] | None:
    if text is None:
        return None
    return [t.strip() for t in text.split(",") if t.strip()]


RunArg = Annotated[Path, typer.Argument(help="A study run directory (from `study`/`demo`).")]
OutOpt = Annotated[
    Path | None, typer.Option("--out", help="Where stress.json/html/md go (default: RUN_DIR).")
]
GridOpt = Annotated[
    str, typer.Option("--grid", help="Severities to sweep, comma-separated (0 is added).")
]
PerturbationsOpt = Annotated[
    str | None, typer.Option("--perturbations", help="Comma-separated names (default: all).")
]
EpisodesOpt = Annotated[
    int | None,
    typer.Option(
        "--episodes-per-member",
        min=1,
        max=10_000,
        help="Episodes per member and point, every member (default: 3, and the study's "
        "eval.per_family count for the families it names: one call per real patient in the demo).",
    ),
]
SearchOpt = Annotated[
    bool, typer.Option("--search/--no-search", help="Adversarial search per condition.")
]
ThresholdOpt = Annotated[
    float, typer.Option("--threshold", help="Search: broken = gold < threshold x clean.")
]
SearchOnOpt = Annotated[
    str, typer.Option("--search-on", help="Search on 'heldout' members or each agent's 'train'.")
]
ConditionsOpt = Annotated[
    str | None, typer.Option("--conditions", help="Comma-separated subset (and 'scripted').")
]
WorkersOpt = Annotated[
    int | None,
    typer.Option(
        "--workers",
        min=1,
        max=256,
        help="Processes (default: all cores; with --executor ray, the cluster's CPUs).",
    ),
]
ExecutorOpt = Annotated[
    str,
    typer.Option(
        "--executor",
        help="Where the work runs: local (this machine) or ray (Ray actors; the ray extra).",
    ),
]
AddressOpt = Annotated[
    str | None,
    typer.Option(
        "--address",
        help="With --executor ray: the cluster to join (auto, or ray://HOST:PORT); "
        "default: a local Ray cluster on this machine.",
    ),
]


def stress(
    run_dir: RunArg,
    out: OutOpt = None,
    grid: GridOpt = GRID_TEXT,
    perturbations: PerturbationsOpt = None,
    episodes: EpisodesOpt = None,
    search: SearchOpt = True,
    threshold: ThresholdOpt = 0.5,
    search_on: SearchOnOpt = "heldout",
    conditions: ConditionsOpt = None,
    workers: WorkersOpt = None,
    executor: ExecutorOpt = "local",
    address: AddressOpt = None,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
    scenario_path: ScenarioPathOpt = None,
    llm_base_url: LLMUrlOpt = None,
    llm_model: LLMModelOpt = None,
    llm_api_key_env: LLMKeyOpt = None,
    llm_system_prompt: LLMPromptOpt = None,
) -> None:
    """Stress every condition's agents (and the scripted reference, and an LLM agent behind an
    endpoint when given) on the held-out ensemble."""
    from sim2human.experiments.executors.backends import Choice
    from sim2human.experiments.research.stress import stress_run
    from sim2human.report.stress import write_stress_reports

    if not run_dir.is_dir():
        raise UsageError(f"{run_dir}: no such run directory")
    output = Output(as_json, quiet)
    names = parse_names(perturbations)
    every: dict[str, int] | None = None if episodes is None else {}  # the flag: all, same count
    plan = StressPlan.make(names, parse_grid(grid), episodes or DEFAULT_PER_MEMBER, every)
    search_cfg = SearchConfig(
        threshold=threshold,
        perturbations=plan.perturbations,
        members="train" if search_on == "train" else "heldout",
    )
    if search_on not in ("heldout", "train"):
        raise UsageError(f"--search-on must be 'heldout' or 'train', got {search_on!r}")
    llm = endpoint_agent(llm_base_url, llm_model, llm_api_key_env, llm_system_prompt)
    try:
        result = stress_run(
            run_dir,
            out,
            plan=plan,
            search_cfg=search_cfg if search else None,
            conditions=parse_names(conditions),
            workers=workers,
            console=output.progress_console(err_console),
            finish=write_stress_reports,
            executor=Choice(executor, address),
            llm=llm,
        )
    except KeyboardInterrupt as stop:
        for name in getattr(stop, "started", ()):
            err_console.print(f"[yellow]interrupted[/]: {name}")
        err_console.print("[yellow]interrupted[/]: no stress results written")
        raise typer.Exit(interrupt_code()) from None
    _show(result, out or run_dir, output)


def _show(result: dict[str, Any], target: Path, output: Output) -> None:
    """The robustness table, the findings and where the files are (or the JSON document)."""
    from sim2human.report.stress_findings import findings

    shown = output.table_console(out_console)
    shown.print(robustness_table(result))
    lines = findings(result)
    for line in lines:
        shown.print(line, highlight=False)
    files = [target / name for name in (STRESS_JSON, STRESS_HTML, STRESS_MD)]
    shown.print(f"stress: {files[0]}, report: {files[1]}, {files[2]}")
    output.emit(_document(result, lines, files))


def robustness_table(result: dict[str, Any]) -> Table:
    from sim2human.report.stress_findings import fmt

    t = Table(title="robustness on held-out members (%, 95% CI)", title_justify="left")
    for col in ("agent", "clean gold", "overall", *result["perturbations"]):
        t.add_column(col, justify="left" if col == "agent" else "right")
    for name, a in result["agents"].items():
        per = [fmt(a["per_perturbation"][p]) for p in result["perturbations"]]
        t.add_row(name, fmt(a["clean"]), fmt(a["overall"]), *per)
    return t


def _document(result: dict[str, Any], lines: list[str], files: list[Path]) -> dict[str, Any]:
    """The robustness table under ``--json``: per agent, clean gold, overall and per
    perturbation (mean, 95% CI, n), then the findings printed under the table."""
    agents = {
        name: {k: a[k] for k in ("clean", "overall", "per_perturbation")}
        for name, a in result["agents"].items()
    }
    return {
        "perturbations": list(result["perturbations"]),
        "agents": agents,
        "findings": lines,
        "files": {p.name: str(p) for p in files},
    }
