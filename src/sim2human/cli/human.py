"""``sim2human human ...``: real people in the loop.

``serve`` starts the call page for a run's agents; ``play`` is the same call in a terminal;
``export`` writes the finished calls as a run directory that ``report`` and ``diagnose`` read;
``compare`` sets each agent's human outcomes next to its simulator outcomes.
"""

from __future__ import annotations

import asyncio
import os
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import numpy as np
import typer
from rich.console import Console

from sim2human import seeding
from sim2human.cli.llm_agent_options import (
    LLMKeyOpt,
    LLMModelOpt,
    LLMPromptOpt,
    LLMUrlOpt,
    endpoint_agent,
)
from sim2human.cli.starting import port_free
from sim2human.errors import ModelUnavailableError, UsageError
from sim2human.store.layout import HUMAN_DB

if TYPE_CHECKING:
    from sim2human.scenarios.core import AnyScenario
    from sim2human.simulators.base import UserTurn
    from sim2human.webapp.pages import Limits

human_app = typer.Typer(
    no_args_is_help=True,
    help="Real people in the loop: serve the call page (``serve``) or a terminal call "
    "(``play``), export the finished calls as a run (``export``), set them beside the "
    "simulators (``compare``).",
)
out_console = Console()
err_console = Console(stderr=True)

RunArg = Annotated[Path, typer.Argument(help="A study run directory (from `study`/`demo`).")]
DbOpt = Annotated[
    Path | None, typer.Option("--db", help="The call database (default: RUN_DIR/human.sqlite).")
]


def _need_web() -> None:
    try:
        import fastapi  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError:
        raise ModelUnavailableError(
            "the call page needs the web extra: pip install 'sim2human[web]' "
            "(scripts/setup --dev installs it)"
        ) from None


def _run_dir(run: Path) -> Path:
    if not run.is_dir():
        raise UsageError(f"{run}: no such run directory")
    return run


PerMinuteOpt = Annotated[
    int,
    typer.Option("--per-minute", min=1, max=10_000, help="Messages one call may send a minute."),
]
StartsOpt = Annotated[
    int,
    typer.Option(
        "--starts-per-client",
        min=1,
        max=10_000,
        help="Calls one client address may start a minute (a lab behind one address: raise).",
    ),
]
ProxyOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--trusted-proxy",
        metavar="ADDR",
        help="Address (or network) of a reverse proxy whose X-Forwarded-For names the "
        "client; repeatable. Default: none, the connection's address is the client.",
    ),
]
AgentsOpt = Annotated[
    str | None, typer.Option("--agents", help="Comma-separated agents (default: all).")
]
HostOpt = Annotated[
    str, typer.Option("--host", help="Address to bind; others can reach it only if set.")
]
AllowedHostOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--allowed-host",
        help="A Host name the page answers (the name people type; repeatable). Default: the "
        "--host address, localhost, 127.0.0.1 and [::1]; any other Host gets 400 (DNS rebinding).",
    ),
]


@human_app.command()
def serve(
    run_dir: RunArg,
    agents: AgentsOpt = None,
    port: Annotated[
        int, typer.Option("--port", min=1, max=65535, help="Port to listen on.")
    ] = 8000,
    host: HostOpt = "127.0.0.1",
    db: DbOpt = None,
    llm_base_url: LLMUrlOpt = None,
    llm_model: LLMModelOpt = None,
    llm_api_key_env: LLMKeyOpt = None,
    llm_system_prompt: LLMPromptOpt = None,
    per_minute: PerMinuteOpt = 30,
    starts_per_client: StartsOpt = 20,
    trusted_proxy: ProxyOpt = None,
    allowed_host: AllowedHostOpt = None,
) -> None:
    """Serve the call page: consent, a card to play, a blinded call with a random agent, rating."""
    _need_web()
    from sim2human.store.calls import HumanStore
    from sim2human.webapp import serving
    from sim2human.webapp.admin import ADMIN_TOKEN_ENV, check_token
    from sim2human.webapp.agents import AgentPool
    from sim2human.webapp.app import create_app
    from sim2human.webapp.calls import Calls

    check_token(os.environ.get(ADMIN_TOKEN_ENV))
    proxies = _networks(trusted_proxy or [])
    llm = endpoint_agent(llm_base_url, llm_model, llm_api_key_env, llm_system_prompt)
    names = [n.strip() for n in agents.split(",") if n.strip()] if agents else None
    path = db or _default_db(_run_dir(run_dir))
    pool = AgentPool.from_run(_run_dir(run_dir), names, llm)
    pool.warm()
    port_free(host, port)  # a busy port: exit 2 before the database is created
    calls = Calls(HumanStore(path), pool)
    hosts = allowed_host or [host, "localhost", "127.0.0.1", "[::1]"]
    app = create_app(calls, _limits(per_minute, starts_per_client), allowed_hosts=hosts)
    err_console.print(f"agents (blinded to participants): {', '.join(pool.names)}")
    err_console.print(f"calls are stored in {path}")
    if not allowed_host and host in ("0.0.0.0", "::"):
        err_console.print(
            "[yellow]note[/]: only localhost answers; name the page's public "
            "host with --allowed-host"
        )
    if not os.environ.get(ADMIN_TOKEN_ENV):
        err_console.print(f"[yellow]admin page off[/]: set {ADMIN_TOKEN_ENV} to turn it on")
    out_console.print(f"call page: http://{host}:{port}/  (admin: /admin)", soft_wrap=True)
    serving.serve(app, host, port, proxies)


def _limits(per_minute: int, starts_per_client: int) -> Limits:
    """The page's limits; the whole server's start ceiling stays above any one client's."""
    from sim2human.webapp.pages import Limits

    ceiling = max(Limits.starts_per_minute, 5 * starts_per_client)
    return Limits(
        per_minute=per_minute, starts_per_client=starts_per_client, starts_per_minute=ceiling
    )


def _networks(values: list[str]) -> list[str]:
    import ipaddress

    for v in values:
        try:
            ipaddress.ip_network(v, strict=False)
        except ValueError:
            raise UsageError(f"--trusted-proxy {v!r}: not an IP address or network") from None
    return values


def _default_db(run_dir: Path) -> Path:
    """``RUN_DIR/human.sqlite``, unless the run is read-only to this user or another process is
    writing it (only a run's writer writes into it): then ``--db`` must say where."""
    from sim2human.store.lock import live_writer

    writer = live_writer(run_dir)
    if writer is not None:
        raise UsageError(f"{run_dir}: {writer}: give --db PATH to store the calls outside it")
    if not os.access(run_dir, os.W_OK | os.X_OK):
        raise UsageError(f"{run_dir} is read-only: give --db PATH to store the calls elsewhere")
    return run_dir / HUMAN_DB


@human_app.command()
def play(
    run_dir: RunArg,
    agent: Annotated[
        str, typer.Option("--agent", help="Which agent to call: a condition, 'scripted' or 'llm'.")
    ],
    seed: Annotated[
        int | None, typer.Option("--seed", min=0, max=2**32 - 1, help="Patient card seed.")
    ] = None,
    llm_base_url: LLMUrlOpt = None,
    llm_model: LLMModelOpt = None,
    llm_api_key_env: LLMKeyOpt = None,
    llm_system_prompt: LLMPromptOpt = None,
) -> None:
    """Call one agent in the terminal, as the patient on a card; type /hangup to hang up."""
    from sim2human.rollout.conversation import Job, job_profile
    from sim2human.rollout.play_async import play_one
    from sim2human.simulators.human import HumanSimulator, human_spec
    from sim2human.webapp.agents import AgentPool
    from sim2human.webapp.card import card_lines, words

    llm = endpoint_agent(llm_base_url, llm_model, llm_api_key_env, llm_system_prompt)
    pool = AgentPool.from_run(_run_dir(run_dir), [agent], llm, option="--agent")
    scenario = pool.scenario
    job = Job(
        spec=human_spec("terminal"),
        seed=seed if seed is not None else int(np.random.SeedSequence().generate_state(1)[0] >> 1),
        split="heldout",
        condition=agent,
    )
    seeds = pool.saved.get(agent, [(0, Path())])
    decide = pool.decider(agent, seeds[0][0])
    out_console.print(f"[bold]Your {words(scenario).role} card[/]")
    for name, value in card_lines(scenario, job_profile(job, scenario)):
        out_console.print(f"  {name}: [bold]{value}[/]", highlight=False)

    sim = HumanSimulator(job.spec, partial(_ask_in_terminal, scenario))
    counter = iter(range(10_000))
    played = asyncio.run(
        play_one(
            0,
            job,
            scenario,
            sim,
            lambda _, obs: decide(obs, seeding.seed(job.seed, "agent-turn", next(counter))),
            pool.max_turns,
        )
    )
    ep = played.episode
    right = sum(ep.gold.fields.values())
    out_console.print(
        f"call ended ({ep.termination.value}): gold {'success' if ep.gold.success else 'failure'}, "
        f"{right}/{len(ep.gold.fields)} fields right",
        highlight=False,
    )


async def _ask_in_terminal(scenario: AnyScenario, agent_text: str) -> UserTurn:
    """Show the agent's turn and read the person's reply (``/hangup`` or end of input ends it)."""
    from sim2human.scenarios.capabilities import courtesy
    from sim2human.simulators.base import UserTurn

    if agent_text:
        out_console.print(f"[cyan]assistant[/]: {agent_text}", highlight=False)
        if courtesy(scenario)(agent_text).close:
            return UserTurn(text="", done=True)
    else:
        out_console.print("The line is open: say hello and why you are calling.")
    try:
        line = await asyncio.to_thread(input, "you: ")
    except EOFError:
        line = "/hangup"
    if line.strip() == "/hangup":
        return UserTurn(text="", done=True)
    return UserTurn(text=line.strip())


@human_app.command()
def export(
    db: Annotated[Path, typer.Argument(help="A call database (from `human serve`).")],
    out: Annotated[Path, typer.Option("--out", help="Directory to write (created if missing).")],
) -> None:
    """Write the finished calls as a run directory (``report`` and ``diagnose`` read it).

    Exporting again into the same directory replaces what the last export wrote. A path that
    exists and is not a directory (a file, ``/dev/null``) is refused, never overwritten."""
    from sim2human.experiments.research.human_eval import export_run
    from sim2human.store.calls import HumanStore

    store = HumanStore.open_existing(db)
    try:
        episodes = store.episodes()
    finally:
        store.close()
    n = export_run(episodes, out)
    out_console.print(f"{n} finished calls -> {out}", soft_wrap=True)


@human_app.command()
def compare(
    run_dir: RunArg,
    db: DbOpt = None,
) -> None:
    """Each agent's human outcomes next to its simulator outcomes; which simulator families
    predict people (rank correlation and mean absolute gap). Writes RUN_DIR/human.json."""
    from sim2human.experiments.research.human_eval import fold_in, human_table

    result = fold_in(_run_dir(run_dir), db or run_dir / HUMAN_DB)
    out_console.print(human_table(result))
