"""How ``eval-agent`` plays: the plan line before, the pace while, only what is missing.

Sized: ``plan_line`` says how many calls each family and split will get and how many requests
that can take before anything is sent. Watched: the progress bar carries a rate and an ETA, and
when stderr is not a terminal (a CI log, ``nohup``) plain lines say the same every
``PACE_EVERY_S`` seconds, instead of minutes of silence. Resumable: every episode's id
(``condition/phase/member/seed``) fixes what it plays, so a run that finds some ids stored plays
only the others, and its episodes are those an uninterrupted run would have written.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from sim2human.agents.llm import LLMAgent
from sim2human.experiments.executors.backends import Choice
from sim2human.experiments.study.config import StudyConfig
from sim2human.llm.runtime import LLMRuntime
from sim2human.rollout.evaluate import eval_jobs
from sim2human.rollout.play import play
from sim2human.simulators.base import SimulatorSpec
from sim2human.simulators.kinds import needs_endpoint
from sim2human.store.layout import EPISODES
from sim2human.store.rundir import EpisodeLog, read_episodes
from sim2human.types import Episode

if TYPE_CHECKING:
    from sim2human.experiments.study.world import StudyWorld

CONDITION = "llm-agent"
PACE_EVERY_S = 30.0
"""Seconds between plain progress lines when stderr is not a terminal."""
Groups = list[tuple[Literal["train", "heldout"], Sequence[SimulatorSpec]]]


def per_member(cfg: StudyConfig, spec: SimulatorSpec) -> int:
    """Episodes a member gets: ``llm_episodes_per_member`` for one that needs an endpoint."""
    per = cfg.eval.episodes_per_member
    return (cfg.eval.llm_episodes_per_member or per) if needs_endpoint(spec) else per


def plan_line(cfg: StudyConfig, groups: Groups, max_turns: int, done: int) -> str:
    """``plan: heldout 12 calls (terse-guarded 4, ...) ...; up to N agent requests``."""
    parts, total = [], 0
    for split, members in groups:
        calls: Counter[str] = Counter()
        for s in members:
            calls[s.family] += per_member(cfg, s)
        n = sum(calls.values())
        total += n
        shown = ", ".join(f"{f} {c}" for f, c in sorted(calls.items()))
        parts.append(f"{split} {n} calls ({shown})")
    left = f"; {done} already stored, {total - done} to play" if done else ""
    return (
        f"plan: {'; '.join(parts)}; {total} calls in all{left}; up to "
        f"{(total - done) * max_turns} agent requests ({max_turns} turns a call at most)"
    )


class Pace:
    """Plain progress lines (done, rate, ETA) for a log that is not a terminal."""

    def __init__(self, console: Console, total: int, done: int) -> None:
        self.console, self.total, self.done, self.start_done = console, total, done, done
        self.started = self.last = time.monotonic()
        self.plain = not console.is_terminal and not console.quiet

    def advance(self, n: int = 1) -> None:
        self.done += n
        now = time.monotonic()
        if self.plain and (now - self.last >= PACE_EVERY_S or self.done == self.total):
            self.last = now
            self.console.print(self.line(now), highlight=False, soft_wrap=True)

    def line(self, now: float) -> str:
        played, spent = self.done - self.start_done, max(now - self.started, 1e-9)
        rate = played / spent
        eta = f"{(self.total - self.done) / rate:.0f} s" if rate > 0 else "unknown"
        return f"eval-agent: {self.done}/{self.total} calls, {60 * rate:.1f} calls/min, ETA {eta}"


def progress_bar(console: Console) -> Progress:
    return Progress(
        TextColumn("[bold]eval-agent"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        console=console,
        disable=not console.is_terminal,
    )


def stored(target: Path) -> list[Episode]:
    """The episodes a run directory already holds (none for a new one)."""
    path = target / EPISODES
    return read_episodes(path) if path.exists() else []


def play_missing(
    cfg: StudyConfig,
    world: StudyWorld,
    groups: Groups,
    agent: tuple[str, dict[str, Any]],
    log: EpisodeLog,
    advance: Callable[[int], None],
) -> dict[str, Any]:
    """Every job of ``groups`` whose episode ``log`` does not hold, played in this process;
    returns the endpoints' accounting."""
    name, settings = agent
    jobs = [
        job
        for split, members in groups
        for s in members
        for job in eval_jobs([s], split, per_member(cfg, s), CONDITION)
        if f"{CONDITION}/eval/{s.id}/{job.seed}" not in log.ids
    ]
    specs = [s for _, g in groups for s in g]
    needed = {name} | {s.llm.endpoint for s in specs if s.llm is not None}
    with LLMRuntime.open(cfg.llm, needed) as rt:
        llm_agent = LLMAgent(world.scenario, rt.clients[name], **settings)

        def on_episode(e: Episode) -> None:
            log.write(e)
            advance(1)

        play(
            llm_agent,
            jobs,
            world.scenario,
            on_episode=on_episode,
            llm=rt,
            max_turns=world.max_turns,
        )
        stats = {n: s.model_dump() for n, s in rt.stats().items()}
        stats["served_model"] = rt.clients[name].served_model  # type: ignore[assignment]
    return stats


def play_on_executor(
    cfg: StudyConfig,
    groups: Groups,
    agent: tuple[str, dict[str, Any]],
    where: tuple[Choice, int | None],
    log: EpisodeLog,
    console: Console,
    advance: Callable[[int], None],
) -> dict[str, Any]:
    """One unit per member with an episode missing on the executor (``member_units``); the
    episodes already stored are not written twice."""
    from sim2human.experiments.research.member_units import Agent, evaluate_on_executor

    todo: Groups = []
    for split, members in groups:
        left = [
            s
            for s in members
            if any(
                f"{CONDITION}/eval/{s.id}/{j.seed}" not in log.ids
                for j in eval_jobs([s], split, per_member(cfg, s), CONDITION)
            )
        ]
        todo.append((split, left))
    note = lambda m: console.print(f"note: {m}", soft_wrap=True, highlight=False)  # noqa: E731
    choice, workers = where
    played, stats = evaluate_on_executor(
        cfg,
        todo,
        Agent(*agent),
        cfg.eval.episodes_per_member,
        choice,
        workers=workers,
        advance=advance,
        note=note,
    )
    for e in played:
        if e.id not in log.ids:
            log.write(e)
    return stats
