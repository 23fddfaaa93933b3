"""``sim2human eval-agent``: how does my deployed LLM agent do on a study's held-out simulators?

Evaluates an LLM agent (any OpenAI-compatible endpoint, or the embedded model) on the members of
a study's ensemble exactly as the study evaluates its policy agents: same members, same episode
seeds, same scoring. Writes ``episodes.jsonl`` and ``summary.json``; prints gold and proxy per
family with 95% CIs (bootstrap over members, then episodes), and the rule gold was scored under:
the agent acts through the scenario's tools and is graded on what it submitted
(``agents.llm``); ``--no-tools`` offers none and reads a JSON summary at the end of its reply.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from sim2human.agents.llm import LLMAgent
from sim2human.cli.options import CapOpt, finite
from sim2human.cli.output import JsonOpt, Output, QuietOpt
from sim2human.cli.starting import discard_unstarted, holds_evaluation
from sim2human.cli.stress import AddressOpt, ExecutorOpt
from sim2human.errors import UsageError
from sim2human.experiments.backends import Choice
from sim2human.experiments.config import StudyConfig, load_study
from sim2human.llm.client import EndpointConfig
from sim2human.llm.runtime import LOCAL, LLMRuntime
from sim2human.metrics.outcomes import StoredEstimate, cluster_bootstrap
from sim2human.metrics.outcomes import fmt_estimate as est
from sim2human.metrics.record_rule import record_rule_line
from sim2human.scenarios.refs import allow
from sim2human.simulators import needs_endpoint
from sim2human.store.layout import CONFIG, EPISODES, MEMBERS, METRICS, SUMMARY
from sim2human.store.loading import output_dir, read_text
from sim2human.store.lock import run_lock
from sim2human.store.rundir import EpisodeLog, JsonlWriter, write_json
from sim2human.types import Episode

if TYPE_CHECKING:
    from sim2human.experiments.world import StudyWorld

AGENT = "agent"
RayWorkersOpt = Annotated[
    int | None,
    typer.Option(min=1, max=256, help="With --executor ray: workers (default: its CPUs)."),
]


# long: one parameter per command-line option (typer), then the checks and the call
def eval_agent(
    config: Annotated[Path, typer.Argument(help="Study YAML whose ensemble to evaluate on.")],
    base_url: Annotated[
        str | None,
        typer.Option(
            help="Agent endpoint, e.g. http://host:8000/v1 "
            "(default: the embedded SmolLM2 model, started here).",
        ),
    ] = None,
    model: Annotated[str | None, typer.Option(help="Model name at that endpoint.")] = None,
    api_key_env: Annotated[
        str | None, typer.Option(help="NAME of the env var holding the API key.")
    ] = None,
    system_prompt: Annotated[
        Path | None, typer.Option(help="File with the agent's system prompt.")
    ] = None,
    split: Annotated[str, typer.Option(help="heldout, train or all.")] = "heldout",
    episodes: Annotated[
        int | None,
        typer.Option(min=1, max=10_000, help="Episodes per member (default: the study's eval)."),
    ] = None,
    temperature: Annotated[
        float,
        typer.Option(
            parser=finite(0.0, 2.0), metavar="FLOAT", help="Sampling temperature, 0 to 2."
        ),
    ] = 0.0,
    max_tokens: Annotated[
        int, typer.Option(min=1, max=32_768, help="Longest agent reply, in tokens.")
    ] = 64,
    timeout_s: Annotated[
        float,
        typer.Option(
            parser=finite(0.1, 3600.0), metavar="FLOAT", help="Per-request timeout (s), <= 3600."
        ),
    ] = 60.0,
    no_tools: Annotated[
        bool,
        typer.Option(
            "--no-tools",
            help="Offer no tools (a model served without tool calls): the agent hands its "
            "record over as a JSON summary in its reply. Gold grades what it submitted.",
        ),
    ] = False,
    out: Annotated[Path | None, typer.Option(help="Run directory.")] = None,
    max_concurrency: CapOpt = None,
    executor: ExecutorOpt = "local",
    address: AddressOpt = None,
    workers: RayWorkersOpt = None,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Evaluate an LLM agent on a study's simulators (persona and llm members)."""
    choice = Choice(executor, address)
    choice.check()  # ray asked for but missing: one line, exit 2, nothing written
    if split not in ("heldout", "train", "all"):
        raise UsageError(f"--split must be heldout, train or all, not {split!r}")
    if (base_url is None) != (model is None):
        raise UsageError("--base-url and --model go together (neither: the embedded model)")
    prompt = None if system_prompt is None else read_text(system_prompt, "system prompt file")
    allow(Path.cwd())  # the user's own study file: its module:Name is imported from here
    cfg = load_study(config)
    if base_url is not None and model is not None:
        endpoint = EndpointConfig(
            base_url=base_url, model=model, api_key_env=api_key_env, timeout_s=timeout_s
        )
        cfg = _with_endpoint(cfg, AGENT, endpoint)
    if episodes is not None:
        cfg = _with_episodes(cfg, episodes)
    if max_concurrency is not None:
        cfg = cfg.model_copy(update={"llm": cfg.llm.capped(max_concurrency)})
    from sim2human.experiments.world import StudyWorld

    world = StudyWorld.build(cfg)
    groups = _groups(world, split)
    agent_endpoint = AGENT if base_url is not None else LOCAL
    target = out or Path("runs") / f"{datetime.now():%Y%m%d-%H%M%S}-eval-agent"
    output = Output(as_json, quiet)
    console = output.progress_console()
    agent = {
        "system_prompt": prompt,
        "temperature": temperature,
        "max_tokens": max_tokens,
        "record_by": "summary" if no_tools else "tools",
    }
    fresh = not (target.exists() or target.is_symlink())
    try:
        with run_lock(
            output_dir(target),
            "eval-agent",
            note=lambda m: console.print(f"note: {m}", soft_wrap=True),
        ):
            if holds_evaluation(target):  # a log a kill left empty is no evaluation
                raise UsageError(
                    f"{target}: already holds an evaluation ({EPISODES}); choose another --out"
                )
            summary = _evaluate(
                cfg, world, groups, agent_endpoint, agent, target, console, (choice, workers)
            )
    except Exception:
        if fresh:  # a failed start (say, the endpoint is down) leaves no directory
            discard_unstarted(target)
        raise
    shown = output.table_console()
    shown.print(table(summary))
    shown.print(summary["record_rule"], highlight=False)
    shown.print(f"episodes: {target / EPISODES}")
    output.emit({"out": str(target), "episodes": str(target / EPISODES), **summary})


def _with_endpoint(cfg: StudyConfig, name: str, endpoint: EndpointConfig) -> StudyConfig:
    llm = cfg.llm.model_copy(update={"endpoints": {**cfg.llm.endpoints, name: endpoint}})
    return cfg.model_copy(update={"llm": llm})


def _with_episodes(cfg: StudyConfig, episodes: int) -> StudyConfig:
    """``episodes`` per member, for persona and llm members alike."""
    update = {"episodes_per_member": episodes, "llm_episodes_per_member": episodes}
    return cfg.model_copy(update={"eval": cfg.eval.model_copy(update=update)})


def _groups(world: StudyWorld, split: str) -> list[tuple[Literal["train", "heldout"], Any]]:
    """The members to evaluate on, per split (``all``: train, then held out)."""
    groups: list[tuple[Literal["train", "heldout"], Any]] = []
    if split in ("train", "all"):
        groups.append(("train", world.ensemble.train + world.llm_train))
    if split in ("heldout", "all"):
        groups.append(("heldout", world.ensemble.heldout))
    return groups


def _evaluate(
    cfg: StudyConfig,
    world: StudyWorld,
    groups: list[tuple[Literal["train", "heldout"], Any]],
    agent_endpoint: str,
    agent_kw: dict[str, Any],
    target: Path,
    console: Console,
    where: tuple[Choice, int | None] = (Choice(), None),
) -> dict[str, Any]:
    """Play every member's episodes into ``target`` (locked by the caller) and summarise:
    in this process, or one unit per member on ``where``'s executor (``--executor ray``)."""
    from sim2human.experiments.world import evaluate_splits

    specs = [s for _, g in groups for s in g]
    needed = {agent_endpoint} | {s.llm.endpoint for s in specs if s.llm is not None}
    started = time.perf_counter()
    per, per_llm = cfg.eval.episodes_per_member, cfg.eval.llm_episodes_per_member or 0
    total = sum(per_llm or per if needs_endpoint(s) else per for s in specs)
    with EpisodeLog(target / EPISODES) as log, _bar(console) as bar:
        task = bar.add_task("episodes", total=total)
        if where[0].kind != "local":
            played, stats = _on_executor(
                cfg,
                groups,
                agent_endpoint,
                agent_kw,
                where,
                console,
                lambda n: bar.advance(task, n),
            )
            for e in played:
                log.write(e)
        else:
            with LLMRuntime.open(cfg.llm, needed) as rt:

                def on_episode(e: Episode) -> None:
                    log.write(e)
                    bar.advance(task)

                agent = LLMAgent(world.scenario, rt.clients[agent_endpoint], **agent_kw)
                splits = [(name, members, per) for name, members in groups]
                played = evaluate_splits(cfg, agent, world, rt, splits, "llm-agent", on_episode)
                stats = {n: s.model_dump() for n, s in rt.stats().items()}
    summary = summarise(played, cfg.eval.bootstrap)
    summary.update(wall_seconds=round(time.perf_counter() - started, 1), llm=stats)
    _write_layout(cfg, world, target)
    write_json(target / SUMMARY, summary)
    return summary


def _bar(console: Console) -> Progress:
    return Progress(
        TextColumn("[bold]eval-agent"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
    )


def _on_executor(
    cfg: StudyConfig,
    groups: list[tuple[Literal["train", "heldout"], Any]],
    agent_endpoint: str,
    agent_kw: dict[str, Any],
    where: tuple[Choice, int | None],
    console: Console,
    advance: Callable[[int], None],
) -> tuple[list[Episode], dict[str, Any]]:
    """One unit per member on the executor (``experiments.member_units``)."""
    from sim2human.experiments.member_units import Agent, evaluate_on_executor

    agent = Agent(agent_endpoint, agent_kw)
    note = lambda m: console.print(f"note: {m}", soft_wrap=True, highlight=False)  # noqa: E731
    per = cfg.eval.episodes_per_member
    choice, workers = where
    return evaluate_on_executor(
        cfg, groups, agent, per, choice, workers=workers, advance=advance, note=note
    )


def _write_layout(cfg: StudyConfig, world: StudyWorld, target: Path) -> None:
    """The rest of a sub-run's layout (as ``integrations.runlog`` writes it): its config, the
    members and an empty training log, so ``report`` and ``diagnose`` read a finished run
    rather than warning that training or evaluation did not finish."""
    train = [*world.ensemble.train, *world.llm_train]
    quirks = [s.traits.quirks for s in train]
    phrasings = {p for q in quirks for p in q.over_rewarded} | {
        q.trigger for q in quirks if q.trigger
    }
    condition = {"name": "llm-agent", "sampler": "none"}
    config = {"condition": condition, "trainer": "eval-agent", "scenario": cfg.scenario}
    write_json(target / CONFIG, {**config, "max_turns": world.max_turns})
    members = {
        "trained_on": [s.model_dump(mode="json") for s in train],
        "heldout": [s.model_dump(mode="json") for s in world.ensemble.heldout],
        "trained_quirk_phrasings": sorted(phrasings),
    }
    write_json(target / MEMBERS, members)
    JsonlWriter(target / METRICS).close()  # nothing was trained: an empty training log


def summarise(episodes: list[Episode], n_boot: int) -> dict[str, Any]:
    """Gold success, field accuracy and proxy per (split, family), CIs over members."""
    rows = []
    keys = sorted({(e.split, e.family) for e in episodes})
    for split, family in [*keys, ("all", "all")]:
        eps = [e for e in episodes if (split, family) in (("all", "all"), (e.split, e.family))]
        members = [e.simulator_id for e in eps]

        def est(values: list[float], members: list[str] = members) -> StoredEstimate:
            r = cluster_bootstrap(values, members, n_boot=n_boot)
            return r.stored()

        rows.append(
            {
                "split": split,
                "family": family,
                "gold": est([float(e.gold.success) for e in eps]),
                "fields": est([e.gold.field_accuracy for e in eps]),
                "proxy": est([e.proxy for e in eps]),
                "errors": sum(e.error is not None for e in eps),
            }
        )
    return {"rows": rows, "record_rule": record_rule_line(episodes)}


def table(summary: dict[str, Any]) -> Table:
    t = Table(title="LLM agent: gold vs proxy (%, 95% CI over members)", title_justify="left")
    for col in ("split", "family", "n", "gold success", "fields right", "proxy", "errors"):
        t.add_column(col, justify="left" if col in ("split", "family") else "right")

    def f(e: dict[str, Any]) -> str:
        return est(e)

    for r in summary["rows"]:
        t.add_row(
            r["split"],
            r["family"],
            str(r["gold"]["n"]),
            f(r["gold"]),
            f(r["fields"]),
            f(r["proxy"]),
            str(r["errors"]),
        )
    return t
