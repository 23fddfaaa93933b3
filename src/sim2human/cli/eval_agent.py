"""``sim2human eval-agent``: how does my deployed LLM agent do on a study's held-out simulators?

Evaluates an LLM agent (any OpenAI-compatible endpoint, or the embedded model) on the members of
a study's ensemble exactly as the study evaluates its policy agents: same members, same episode
seeds, same scoring. Writes ``config.json`` first (the agent as it runs: ``AgentRecord``; the
population's hash), then ``episodes.jsonl`` as calls end and ``summary.json`` at the end; prints
gold and proxy per family with 95% CIs (bootstrap over members, then episodes), and the rule
gold was scored under: the agent acts through the scenario's tools and is graded on what it
submitted (``agents.llm``); ``--no-tools`` offers none and reads a JSON summary at the end of
its reply. The record holds the tools offered and how the record was handed over.

The agent's replies never come from the response cache unless ``--cache-agent`` asks: a new
checkpoint served under an old model name would otherwise be scored on the old one's replies.
A run stopped by Ctrl-C or SIGTERM keeps what it played; ``--resume`` plays the rest.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console

from sim2human.agents.llm import Mode, agent_setup
from sim2human.cli import eval_play as ep
from sim2human.cli.eval_summary import cache_line, summarise, table
from sim2human.cli.options import CapOpt, finite
from sim2human.cli.output import JsonOpt, Output, QuietOpt
from sim2human.cli.signals import interrupt_code
from sim2human.cli.starting import discard_unstarted, holds_evaluation
from sim2human.cli.stress import AddressOpt, ExecutorOpt
from sim2human.errors import UsageError
from sim2human.experiments.executors.backends import Choice
from sim2human.experiments.study.agent_record import (
    AgentRecord,
    member_hash,
    population_hash,
    sample_real,
    short_hash,
)
from sim2human.experiments.study.config import Condition, StudyConfig, load_study
from sim2human.llm.client import EndpointConfig
from sim2human.llm.runtime import LOCAL
from sim2human.redact import public_url
from sim2human.scenarios.refs import allow
from sim2human.store.layout import CONFIG, EPISODES, MEMBERS, METRICS, SUMMARY
from sim2human.store.loading import output_dir, read_json_object, read_text
from sim2human.store.lock import run_lock
from sim2human.store.rundir import EpisodeLog, JsonlWriter, write_json

if TYPE_CHECKING:
    from sim2human.experiments.study.world import StudyWorld

AGENT = "agent"
RayWorkersOpt = Annotated[
    int | None,
    typer.Option(min=1, max=256, help="With --executor ray: workers (default: its CPUs)."),
]
EXAMPLE = (
    "Example: sim2human eval-agent examples/support.yaml --base-url http://127.0.0.1:8000/v1 "
    "--model my-agent --system-prompt prompt.txt --label v2 --sample 20 --out runs/v2"
)


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
    label: Annotated[
        str | None, typer.Option(help="Your name for this agent (compare shows it).")
    ] = None,
    split: Annotated[str, typer.Option(help="heldout, train or all.")] = "heldout",
    families: Annotated[
        str | None, typer.Option(help="Comma-separated families to play (default: all).")
    ] = None,
    sample: Annotated[
        int | None,
        typer.Option(min=1, help="Play N real callers, drawn by --sample-seed per family."),
    ] = None,
    sample_seed: Annotated[int, typer.Option(help="Seed of the --sample draw.")] = 0,
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
    cache_agent: Annotated[
        bool, typer.Option(help="Let the agent's replies come from the response cache.")
    ] = False,
    no_cache: Annotated[
        bool, typer.Option(help="No response cache at all (agent and simulators).")
    ] = False,
    resume: Annotated[
        bool, typer.Option(help="Continue the run in --out: play only what is missing.")
    ] = False,
    out: Annotated[Path | None, typer.Option(help="Run directory.")] = None,
    max_concurrency: CapOpt = None,
    executor: ExecutorOpt = "local",
    address: AddressOpt = None,
    workers: RayWorkersOpt = None,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Evaluate an LLM agent on a study's simulators (persona, llm and real-caller members)."""
    choice = Choice(executor, address)
    choice.check()  # ray asked for but missing: one line, exit 2, nothing written
    if split not in ("heldout", "train", "all"):
        raise UsageError(f"--split must be heldout, train or all, not {split!r}")
    if (base_url is None) != (model is None):
        raise UsageError("--base-url and --model go together (neither: the embedded model)")
    if resume and out is None:
        raise UsageError("--resume needs --out: the run directory to continue")
    prompt = None if system_prompt is None else read_text(system_prompt, "system prompt file")
    allow(Path.cwd())  # the user's own study file: its module:Name is imported from here
    cfg = load_study(config)
    agent_endpoint = AGENT if base_url is not None else LOCAL
    if base_url is not None and model is not None:
        endpoint = EndpointConfig(
            base_url=base_url, model=model, api_key_env=api_key_env, timeout_s=timeout_s
        )
        cfg = _with_endpoint(cfg, AGENT, endpoint)
    cfg = _with_cache(cfg, agent_endpoint, cache_agent=cache_agent, no_cache=no_cache)
    if episodes is not None:
        cfg = _with_episodes(cfg, episodes)
    if max_concurrency is not None:
        cfg = cfg.model_copy(update={"llm": cfg.llm.capped(max_concurrency)})
    from sim2human.experiments.study.world import StudyWorld

    world = StudyWorld.build(cfg)
    groups = _groups(world, cfg.conditions, split, families, (sample, sample_seed))
    record_by: Mode = "summary" if no_tools else "tools"
    settings = {
        "system_prompt": prompt,
        "temperature": temperature,
        "max_tokens": max_tokens,
        "record_by": record_by,
    }
    setup = agent_setup(world.scenario, prompt, record_by)
    used = setup.system_prompt  # as sent: the scenario's or the file's, and how to record
    record = AgentRecord(
        label=label or model or "embedded",
        model=model or "embedded",
        base_url=None if base_url is None else public_url(base_url),
        system_prompt=used,
        system_prompt_sha256=short_hash(used),
        temperature=temperature,
        max_tokens=max_tokens,
        tools=setup.tool_names,
        record_by=setup.mode,
        cached=cache_agent and not no_cache,
    )
    target = out or Path("runs") / f"{datetime.now():%Y%m%d-%H%M%S}-eval-agent"
    output = Output(as_json, quiet)
    console = output.progress_console()
    fresh = not (target.exists() or target.is_symlink())
    run = _Run(cfg, world, groups, (agent_endpoint, settings), record)
    try:
        with run_lock(
            output_dir(target),
            "eval-agent",
            note=lambda m: console.print(f"note: {m}", soft_wrap=True),
        ):
            run.start(target, resume)
            summary = run.play(target, console, (choice, workers))
    except KeyboardInterrupt:
        console.print(
            f"[yellow]interrupted[/]: finished calls are kept in {target}; "
            f"continue with the same command and --resume --out {target}",
            soft_wrap=True,
        )
        raise typer.Exit(interrupt_code()) from None
    except Exception:
        if fresh:  # a failed start (say, the endpoint is down) leaves no directory
            discard_unstarted(target)
        raise
    shown = output.table_console()
    shown.print(table(summary))
    shown.print(summary["record_rule"], highlight=False)
    shown.print(cache_line(summary["llm"], agent_endpoint), highlight=False)
    shown.print(f"episodes: {target / EPISODES}")
    output.emit({"out": str(target), "episodes": str(target / EPISODES), **summary})


eval_agent.__doc__ = f"{eval_agent.__doc__}\n\n{EXAMPLE}"


def _with_endpoint(cfg: StudyConfig, name: str, endpoint: EndpointConfig) -> StudyConfig:
    llm = cfg.llm.model_copy(update={"endpoints": {**cfg.llm.endpoints, name: endpoint}})
    return cfg.model_copy(update={"llm": llm})


def _with_cache(cfg: StudyConfig, agent: str, *, cache_agent: bool, no_cache: bool) -> StudyConfig:
    """The agent under test uncached unless ``cache_agent``; no cache at all under ``no_cache``."""
    update: dict[str, Any] = {"uncached": () if cache_agent else (agent,)}
    if no_cache:
        update["cache"] = None
    return cfg.model_copy(update={"llm": cfg.llm.model_copy(update=update)})


def _with_episodes(cfg: StudyConfig, episodes: int) -> StudyConfig:
    """``episodes`` per member, for persona and llm members alike."""
    update = {"episodes_per_member": episodes, "llm_episodes_per_member": episodes}
    return cfg.model_copy(update={"eval": cfg.eval.model_copy(update=update)})


def _groups(
    world: StudyWorld,
    conditions: Sequence[Condition],
    split: str,
    families: str | None,
    sample: tuple[int | None, int],
) -> ep.Groups:
    """The members to evaluate on, per split (``all``: train, then held out), only of
    ``families`` if named, with at most ``sample[0]`` real callers per split. The training
    split is every member a condition of the study trains on: the ensemble's, and a ``fixed``
    condition's own simulator (a user's, say) or a condition's mix."""
    groups: ep.Groups = []
    if split in ("train", "all"):
        trained = [*world.ensemble.train, *world.llm_train]
        trained += [s for c in conditions for s in world.train_members(c)]
        groups.append(("train", list({s.id: s for s in trained}.values())))
    if split in ("heldout", "all"):
        groups.append(("heldout", list(world.ensemble.heldout)))
    if families is not None:
        wanted = {f.strip() for f in families.split(",") if f.strip()}
        known = {s.family for _, g in groups for s in g}
        if unknown := sorted(wanted - known):
            raise UsageError(
                f"--families: {', '.join(unknown)} not in the {split} population "
                f"(it has {', '.join(sorted(known))})"
            )
        groups = [(n, [s for s in g if s.family in wanted]) for n, g in groups]
    n, seed = sample
    if n is not None:
        groups = [(name, sample_real(g, n, seed)) for name, g in groups]
    return [(name, g) for name, g in groups if g]


class _Run:
    """One evaluation's fixed parts, its start (config first) and its play."""

    def __init__(
        self,
        cfg: StudyConfig,
        world: StudyWorld,
        groups: ep.Groups,
        agent: tuple[str, dict[str, Any]],
        record: AgentRecord,
    ) -> None:
        self.cfg, self.world, self.groups, self.agent, self.record = (
            cfg,
            world,
            groups,
            agent,
            record,
        )
        specs = [s for _, g in groups for s in g]
        self.population = population_hash(specs)
        condition = {"name": ep.CONDITION, "sampler": "none"}
        self.config: dict[str, Any] = {
            "condition": condition,
            "trainer": "eval-agent",
            "scenario": cfg.scenario,
            "max_turns": world.max_turns,
            "agent": record.model_dump(mode="json"),
            "population_hash": self.population,
            "members": {s.id: member_hash(s) for s in specs},
            "episodes_per_member": {s.id: ep.per_member(cfg, s) for s in specs},
        }

    def start(self, target: Path, resume: bool) -> None:
        """Refuse a folder that holds another run (or this one, without ``--resume``); write
        ``config.json`` and ``members.json`` before anything is played."""
        # a log a kill left without a whole episode is no evaluation (``holds_evaluation``)
        held = (target / CONFIG).exists() or holds_evaluation(target)
        if held and not resume:
            raise UsageError(
                f"{target}: already holds an evaluation ({EPISODES}); continue it with "
                "--resume or choose another --out"
            )
        if resume and (target / CONFIG).exists():
            self._same_as(read_json_object(target / CONFIG, "run config"), target)
        if (target / SUMMARY).exists():
            (target / SUMMARY).unlink()  # rewritten when the rest is played
        write_json(target / CONFIG, self.config)
        _write_members(self.world, target)

    def _same_as(self, old: dict[str, Any], target: Path) -> None:
        keys = ("agent", "population_hash", "episodes_per_member")
        mine = {**self.config, "agent": {**self.config["agent"], "served_model": None}}
        theirs = {**old, "agent": {**dict(old.get("agent") or {}), "served_model": None}}
        if differ := [k for k in keys if mine.get(k) != theirs.get(k)]:
            raise UsageError(
                f"{target}: --resume with another {' and '.join(differ)} than the stored run "
                f"({CONFIG}); rerun with the same options or choose another --out"
            )

    def play(
        self, target: Path, console: Console, where: tuple[Choice, int | None]
    ) -> dict[str, Any]:
        """Play what ``target`` lacks, then summarise every stored episode."""
        started = time.perf_counter()
        total = sum(ep.per_member(self.cfg, s) for _, g in self.groups for s in g)
        log = EpisodeLog(target / EPISODES)
        with log:
            done = len(log.ids)
            plan = ep.plan_line(self.cfg, self.groups, self.world.max_turns, done)
            console.print(f"{plan}; population {self.population}", highlight=False, soft_wrap=True)
            pace = ep.Pace(console, total, done)
            with ep.progress_bar(console) as bar:
                task = bar.add_task("calls", total=total, completed=done)

                def advance(n: int) -> None:
                    bar.advance(task, n)
                    pace.advance(n)

                if where[0].kind != "local":
                    args = (self.cfg, self.groups, self.agent, where, log, console, advance)
                    stats = ep.play_on_executor(*args)
                else:
                    stats = ep.play_missing(
                        self.cfg, self.world, self.groups, self.agent, log, advance
                    )
        served = stats.pop("served_model", None)
        record = self.record.model_copy(update={"served_model": served})
        summary = summarise(ep.stored(target), self.cfg.eval.bootstrap)
        summary.update(
            agent=record.model_dump(mode="json"),
            population_hash=self.population,
            wall_seconds=round(time.perf_counter() - started, 1),
            llm=stats,
        )
        write_json(target / CONFIG, {**self.config, "agent": summary["agent"]})
        write_json(target / SUMMARY, summary)
        return summary


def _write_members(world: StudyWorld, target: Path) -> None:
    """The rest of a sub-run's layout (as ``integrations.runlog`` writes it): the members and
    an empty training log, so ``report`` and ``diagnose`` read a finished run rather than
    warning that training or evaluation did not finish."""
    train = [*world.ensemble.train, *world.llm_train]
    quirks = [s.traits.quirks for s in train]
    phrasings = {p for q in quirks for p in q.over_rewarded} | {
        q.trigger for q in quirks if q.trigger
    }
    members = {
        "trained_on": [s.model_dump(mode="json") for s in train],
        "heldout": [s.model_dump(mode="json") for s in world.ensemble.heldout],
        "trained_quirk_phrasings": sorted(phrasings),
    }
    write_json(target / MEMBERS, members)
    if not (target / METRICS).exists():
        JsonlWriter(target / METRICS).close()  # nothing was trained: an empty training log
