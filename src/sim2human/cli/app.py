"""The ``sim2human`` command."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from functools import partial
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape

from sim2human import __version__
from sim2human.cli import eval_agent as cli_eval_agent
from sim2human.cli import options
from sim2human.cli.check import check
from sim2human.cli.diagnose import diagnose
from sim2human.cli.export import export
from sim2human.cli.fidelity import fidelity
from sim2human.cli.fit_family import fit_family
from sim2human.cli.helptext import HELP_OPTIONS, document
from sim2human.cli.human import human_app
from sim2human.cli.model import model_app
from sim2human.cli.options import (
    AddressOption,
    CapOpt,
    ExecutorOption,
    LogToOpt,
    OnRayLossOpt,
    SeedsOpt,
    parse_seeds,
    use_corpus,
)
from sim2human.cli.output import JsonOpt, Output, QuietOpt, study_document
from sim2human.cli.predictivity import predictivity
from sim2human.cli.report import report
from sim2human.cli.restyle_family import restyle_family
from sim2human.cli.retrieve_family import retrieve_family
from sim2human.cli.scenario import scenario_app
from sim2human.cli.signals import interrupt_code, sigterm_as_interrupt
from sim2human.cli.starting import (
    check_endpoints,
    discard_unstarted,
    endpoints_used,
    scenario_file_passes,
)
from sim2human.cli.stress import stress as stress_command
from sim2human.cli.view import compare, view
from sim2human.errors import Sim2HumanError, UsageError
from sim2human.experiments.executors.backends import Choice
from sim2human.experiments.study.config import load_study
from sim2human.redact import redact
from sim2human.report.summary import stored_summary, summarise
from sim2human.report.terminal import print_summary
from sim2human.scenarios.catalog import DEFAULT_SCENARIO
from sim2human.scenarios.refs import allow, allowing
from sim2human.store.layout import REPORT_HTML, REPORT_JSON, REPORT_MD, STUDY_JSON
from sim2human.store.loading import existing_dir
from sim2human.train import curves
from sim2human.train.config import training_words

if TYPE_CHECKING:
    from sim2human.experiments.study.plan import StudyPlan
    from sim2human.experiments.study.results import StudyResult
    from sim2human.experiments.study.runner import StudyFailed

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    context_settings=HELP_OPTIONS,
)
app.add_typer(model_app, name="model")
app.add_typer(human_app, name="human")
app.add_typer(scenario_app, name="scenario")
app.command("stress")(stress_command)
app.command("eval-agent")(cli_eval_agent.eval_agent)
app.command()(report)
app.command()(diagnose)
app.command()(fidelity)
app.command("fit-family")(fit_family)
app.command("restyle-family")(restyle_family)
app.command("retrieve-family")(retrieve_family)
app.command()(export)
app.command()(check)
app.command()(view)
app.command()(compare)
app.command()(predictivity)
out_console = Console()
if not out_console.is_terminal:  # files and pipes get the whole table, not an 80-column crop
    out_console = Console(width=120)
err_console = Console(stderr=True)

OutOption = Annotated[
    Path | None, typer.Option("--out", help="Run directory (default: runs/<timestamp>-<study>).")
]
WorkersOption = Annotated[
    int | None,
    typer.Option(
        "--workers",
        min=1,
        max=256,
        help="Processes to train in, then to diagnose in (default: all cores; with --executor "
        "ray, the cluster's CPUs to train).",
    ),
]
RetriesOption = Annotated[
    int | None,
    typer.Option(
        "--retries",
        min=0,
        max=10,
        help="Times a sub-run whose worker died (say, out of memory) is run again before it "
        "is marked failed and the study goes on without it (default: 1).",
    ),
]
DataOption = Annotated[
    Path | None,
    typer.Option(
        "--data",
        help="ACI-Bench folder for the real-patient families (default: $SIM2HUMAN_DATA, "
        "../shared/data); without it they are left out.",
    ),
]


def _version(value: bool) -> None:
    if value:
        typer.echo(f"sim2human {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version.")
    ] = False,
) -> None:
    """Train and test conversational agents against populations of simulated users."""


def _run(
    config: Path,
    quick: bool,
    out: Path | None,
    workers: int | None,
    resume: bool = False,
    check: bool = False,
    data: Path | None = None,
    retries: int | None = None,
    executor: Choice | None = None,
    output: Output = Output(),  # noqa: B008 (frozen)
    max_concurrency: int | None = None,
    seeds: tuple[int, ...] | None = None,
) -> Path | None:
    from sim2human.cli.report import finish_study
    from sim2human.experiments.study.runner import RETRIES, StudyFailed, default_out, run_study

    plan = _study_plan(config, quick, data, executor, seeds)
    cfg = plan.config
    if resume and out is None:
        raise UsageError("--resume needs --out: the run directory to continue")
    target = out or default_out(cfg)
    if target.exists() or target.is_symlink():  # a file, a FIFO, a symlink loop: as the run would
        existing_dir(target, "run directory (--out)")
    if check:
        shape = f"{len(cfg.conditions)} conditions x {len(cfg.seeds)} seeds"
        output.progress_console(err_console).print(f"{config}: valid ({shape}); nothing run")
        output.emit({"config": str(config), "valid": True, "conditions": len(cfg.conditions)})
        return None
    check_endpoints(plan)  # a wrong URL, model or key: one line, exit 2, no run directory
    fresh = not target.exists()
    progress = output.progress_console(err_console)
    progress.print(
        f"[bold]{cfg.name}[/]: {len(cfg.conditions)} conditions x {len(cfg.seeds)} seeds, "
        f"{training_words(cfg.agent, cfg.train)} each -> {target}"
    )
    try:
        study = run_study(
            plan,
            target,
            workers=workers,
            console=progress,
            resume=resume,
            finish=partial(finish_study, workers=workers),
            retries=RETRIES if retries is None else retries,
            executor=executor,
            max_concurrency=max_concurrency,
        )
    except StudyFailed as failed:
        _failed(failed, config)
        raise typer.Exit(failed.exit_code) from None
    except KeyboardInterrupt as stop:
        _interrupted(stop, target)
        raise typer.Exit(interrupt_code()) from None
    except Exception:
        if fresh:  # a failed start: no directory left that would then demand --resume
            discard_unstarted(target)
        raise
    _show_study(study, target, output)
    return target


def _study_plan(
    config: Path,
    quick: bool,
    data: Path | None,
    executor: Choice | None,
    seeds: tuple[int, ...] | None = None,
) -> StudyPlan:
    """The study to run, resolved once (``StudyPlan``): its executor available, its corpus
    found (or its real people left out, with a note), its file valid."""
    from sim2human.experiments.study.plan import StudyPlan

    if executor is not None:
        executor.check()  # ray asked for but missing: one line, exit 2, nothing written
    if data is not None:
        use_corpus(data)
    cfg = load_study(config, quick=quick, seeds=seeds)
    scenario_file_passes(cfg, config)  # as `scenario check` would: --check refuses it too
    plan = StudyPlan.of(cfg)
    if plan.left_out:
        err_console.print(
            f"[yellow]note:[/] {escape(plan.left_out)}", highlight=False, soft_wrap=True
        )
    if note := endpoints_used(plan, config):  # an endpoint no member names: refused
        err_console.print(f"[yellow]note:[/] {escape(note)}", highlight=False, soft_wrap=True)
    return plan


def _show_study(study: StudyResult, target: Path, output: Output) -> None:
    """A finished study's table and verdicts, and where its reports are (or the JSON)."""
    summary = stored_summary(target / REPORT_JSON) or summarise(None, None, study)
    shown = output.table_console(out_console)
    print_summary(shown, summary)
    shown.print(f"report: {target / REPORT_HTML}", soft_wrap=True)
    shown.print(f"markdown: {target / REPORT_MD}", soft_wrap=True)
    output.emit(study_document(summary, target))


def _interrupted(stop: KeyboardInterrupt, target: Path) -> None:
    """What an interrupted study kept, and how to continue it."""
    for name in getattr(stop, "started", ()):
        err_console.print(f"[yellow]interrupted[/]: {name} (unfinished; reruns on --resume)")
    if waiting := getattr(stop, "not_started", 0):
        err_console.print(f"[yellow]not started[/]: {waiting} sub-run(s)")
    err_console.print(
        f"[yellow]interrupted[/]: finished episodes are kept in {target}; "
        f"continue with --resume --out {target}",
        soft_wrap=True,
    )


def _failed(failed: StudyFailed, config: Path) -> None:
    """The end of a study whose workers died: the table of what finished, each failed job and
    why, and how to finish it."""
    study, out = failed.study, failed.out
    if study.all_rows:
        print_summary(out_console, summarise(None, None, study))
    for f in study.failed:
        err_console.print(f"[red]failed[/]: {escape(f.job)}: {escape(f.reason)}", highlight=False)
    err_console.print(
        f"[red]error:[/] {len(study.failed)} job(s) failed; {out / STUDY_JSON} holds what "
        f"finished and names them; run them again with "
        f"`sim2human study {escape(str(config))} --resume --out {escape(str(out))}`",
        highlight=False,
        soft_wrap=True,
    )


@app.command()
def study(
    config: Annotated[Path, typer.Argument(help="Study YAML file.")],
    quick: Annotated[bool, typer.Option("--quick", help="Fewer seeds and episodes.")] = False,
    out: OutOption = None,
    workers: WorkersOption = None,
    resume: Annotated[
        bool, typer.Option("--resume", help="Continue the study in --out: keep finished sub-runs.")
    ] = False,
    check: Annotated[
        bool, typer.Option("--check", help="Only validate the config (and --out); run nothing.")
    ] = False,
    human: Annotated[
        Path | None,
        typer.Option("--human", help="Call database: add its human calls as held-out evaluation."),
    ] = None,
    data: DataOption = None,
    retries: RetriesOption = None,
    executor: ExecutorOption = "local",
    address: AddressOption = None,
    on_ray_loss: OnRayLossOpt = "fail",
    max_concurrency: CapOpt = None,
    seeds: SeedsOpt = None,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
    log_to: LogToOpt = None,
    scenario_path: options.ScenarioPathOpt = None,
) -> None:
    """Run a study: every condition x seed trained, evaluated on held-out simulators, tabulated."""
    choice = Choice(executor, address, on_ray_loss)
    output = Output(as_json, quiet)
    if log_to is not None:  # checked here; the sub-runs' workers read it from the environment
        os.environ[curves.ENV] = ",".join(curves.parse_sinks(log_to))
    if human is not None:
        from sim2human.store.calls import check_existing

        try:
            check_existing(human)  # a bad database is refused before the study trains
        except UsageError as err:
            raise UsageError(f"--human {err}") from None
    chosen = parse_seeds(seeds)
    allow(Path.cwd())  # the user's own study file: its module:Name is imported from here
    args = (retries, choice, output, max_concurrency, chosen)
    target = _run(config, quick, out, workers, resume, check, data, *args)
    if human is not None and target is not None:
        from sim2human.experiments.research.human_eval import fold_in, human_table
        from sim2human.store.layout import HUMAN_MD

        shown = output.table_console(out_console)
        shown.print(human_table(fold_in(target, human)))
        shown.print(f"human: {target / HUMAN_MD}", soft_wrap=True)


DEMOS: dict[str, str] = {
    DEFAULT_SCENARIO: "collapse.yaml",
    "support": "support.yaml",
    "negotiation": "negotiation.yaml",
}
"""Each scenario's packaged collapse study (``sim2human/examples/``); a scenario's demo is a row."""
DemoScenarioOption = Annotated[
    str,
    typer.Option(
        "--scenario",
        help=f"Whose collapse study to run: {', '.join(DEMOS)} (default: {DEFAULT_SCENARIO}, the "
        "phone intake of examples/collapse.yaml).",
    ),
]


@app.command()
def demo(
    out: OutOption = None,
    workers: WorkersOption = None,
    data: DataOption = None,
    scenario: DemoScenarioOption = DEFAULT_SCENARIO,
) -> None:
    """A collapse study, quick form: `study examples/collapse.yaml --quick` from the package
    (`--scenario support`: examples/support.yaml)."""
    study = DEMOS.get(scenario)
    if study is None:
        known = ", ".join(DEMOS)
        raise UsageError(f"demo --scenario: no demo for {scenario!r} (known: {known})")
    path = resources.files("sim2human").joinpath("examples", study)
    with resources.as_file(path) as config:
        _run(config, True, out, workers, data=data)


document(app)  # every verb's help reflowed, with its example (cli/helptext.py)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code (tests call it in-process)."""
    args = list(argv) if argv is not None else sys.argv[1:]
    try:
        # In non-standalone mode click returns a raised Exit's code instead of raising it.
        # SIGTERM stops a command as Ctrl-C does (cli/signals); what a verb allows module:Name
        # to be imported from ends with it (scenarios.refs.allowing)
        with sigterm_as_interrupt(), allowing():
            code = app(args=args, standalone_mode=False, prog_name="sim2human")
        if isinstance(code, int):
            return code
    except typer.Exit as done:
        return done.exit_code
    except typer.Abort:
        err_console.print("[yellow]aborted[/]")
        return interrupt_code()
    except typer.TyperException as err:  # usage errors: typer's own message, exit code 2
        show = getattr(err, "show", None)
        if show is not None:
            show()
        else:
            err_console.print(f"[red]error:[/] {err}")
        return int(getattr(err, "exit_code", 2))
    except Sim2HumanError as err:
        shown = escape(redact(str(err)))  # an endpoint's error may quote its key
        # emoji=False: a message naming "file.yaml:100:" is not an emoji code
        err_console.print(f"[red]error:[/] {shown}", highlight=False, soft_wrap=True, emoji=False)
        return err.exit_code
    return 0


if __name__ == "__main__":
    sys.exit(main())
