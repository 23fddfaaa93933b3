"""The conversation core: a ``Job`` names one episode to play, a ``Conversation`` steps it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import cast

import numpy as np

from sim2human import seeding
from sim2human.agents.base import AgentTurn, Observation
from sim2human.scenarios.base import Scenario, UserSignals
from sim2human.simulators import build_simulator, fixed_profile
from sim2human.simulators.base import AsyncSimulator, Simulator, SimulatorSpec, UserTurn
from sim2human.simulators.replay import replay_card
from sim2human.types import Episode, Profile, Record, Termination, Turn

MAX_TURNS = 20


@dataclass(frozen=True)
class Job:
    """One episode to play: which simulator, which seed, and how to label it."""

    spec: SimulatorSpec
    seed: int
    split: str = "train"
    condition: str = ""
    phase: str = "eval"
    step: int = 0


def job_profile(job: Job, scenario: Scenario) -> Profile:
    """The hidden patient a job plays: a fresh one per episode, or one of the member's fixed
    ``cards`` (``LLMParams.cards``) chosen by the episode seed."""
    if job.spec.kind == "replay":  # one real patient: the card derived from their encounter
        return replay_card(job.spec, scenario)
    if (fixed := fixed_profile(job.spec, scenario)) is not None:
        return fixed
    cards = job.spec.llm.cards if job.spec.llm is not None else None
    if cards is None:
        return scenario.sample_profile(seeding.stream(job.seed, "profile"))
    return scenario.sample_profile(seeding.stream(job.spec.seed, "card", job.seed % cards))


def user_rng(job: Job) -> np.random.Generator:
    """The simulator's own stream in ``job``'s episode."""
    return seeding.stream(job.seed, "user")


def agent_rng(job: Job) -> np.random.Generator:
    """A sampling agent's draws in ``job``'s episode: its own, whatever else shares the batch."""
    return seeding.stream(job.seed, "agent", job.spec.id)


@dataclass
class Conversation:
    job: Job
    scenario: Scenario
    simulator: Simulator | AsyncSimulator
    """``step`` needs a sync ``Simulator``; ``rollout.play_async`` drives the rest."""
    profile: Profile
    max_turns: int
    turns: list[Turn] = field(default_factory=list)
    record: Record = field(default_factory=dict)
    signals: UserSignals = field(default_factory=UserSignals)
    last_field: str | None = None
    asked: dict[str, int] = field(default_factory=dict)
    termination: Termination | None = None
    satisfaction: list[float] = field(default_factory=list)
    """The simulator's satisfaction after each agent turn (the proxy, turn by turn)."""
    greeted: bool = False
    record_version: int = 0
    """Bumped whenever the record changes; a read-back is current while it is unchanged."""
    read_back_version: int = -1
    history: tuple[str, ...] = ()
    """What ``observe`` reports, kept as the call goes (rebuilding it each turn is quadratic)."""
    transcript: tuple[tuple[str, str], ...] = ()

    @classmethod
    def open(
        cls, job: Job, scenario: Scenario, max_turns: int, simulator: Simulator | None = None
    ) -> Conversation:
        """A call with ``job``'s member (``simulator``: an instance to use instead of building
        one from the spec, e.g. a user's own class under ``sim2human check``)."""
        simulator = simulator if simulator is not None else build_simulator(job.spec, scenario)
        profile = job_profile(job, scenario)
        conv = cls(job, scenario, simulator, profile, max_turns, record=scenario.empty_record())
        first = simulator.start(profile, user_rng(job))
        conv._hear(first.text, first.tags)
        return conv

    @property
    def done(self) -> bool:
        return self.termination is not None

    def observe(self) -> Observation:
        return Observation(
            user_text=self.turns[-1].text,
            record=dict(self.record),
            signals=self.signals,
            turn=len(self.history),
            max_turns=self.max_turns,
            history=self.history,
            last_field=self.last_field,
            asked=tuple(sorted(self.asked.items())),
            transcript=self.transcript,
            greeted=self.greeted,
            read_back=self.read_back_version == self.record_version,
        )

    def step(self, turn: AgentTurn) -> None:
        """The agent says ``turn``; the simulator answers; the record is updated."""
        self.say(turn)
        sim = cast(Simulator, self.simulator)
        self.answer(turn, sim.reply(turn.text), sim.satisfaction)

    def say(self, turn: AgentTurn) -> None:
        """The agent's half of a step: its turn is recorded (the simulator has not answered)."""
        if self.done:
            raise RuntimeError("conversation already ended")
        self.turns.append(Turn(speaker="agent", text=turn.text, act=turn.act))
        self.history += (turn.act or turn.text,)
        self.transcript += (("agent", turn.text),)
        intent = self.scenario.interpret(turn.text)
        self.greeted = self.greeted or intent.greet
        if intent.confirm:  # the caller now answers the read-back, not the last question
            self.read_back_version = self.record_version
            self.last_field = None
        asks = intent.asks
        field_asked = turn.field or (asks[0] if asks else None)
        if field_asked is not None:
            self.last_field = field_asked
            self.asked[field_asked] = self.asked.get(field_asked, 0) + 1

    def answer(self, turn: AgentTurn, reply: UserTurn, satisfaction: Callable[[], float]) -> None:
        """The simulator's half: its reply is heard, its satisfaction noted, the end decided."""
        self._hear(reply.text, reply.tags)
        self.satisfaction.append(satisfaction())
        n_agent = len(self.satisfaction)  # one entry per agent turn
        if reply.done:
            closed = self.scenario.interpret(turn.text).close
            self.termination = Termination.COMPLETED if closed else Termination.HUNG_UP
        elif n_agent >= self.max_turns:
            self.termination = Termination.MAX_TURNS

    def hear(self, opening: UserTurn) -> None:
        """The user's opening line (the async engine starts simulators itself)."""
        self._hear(opening.text, opening.tags)

    def _hear(self, text: str, tags: tuple[str, ...]) -> None:
        self.turns.append(Turn(speaker="user", text=text, tags=tags))
        self.transcript += (("user", text),)
        before = self.record
        self.record = self.scenario.extract(text, before, self.last_field)
        self.signals = self.scenario.signals(text, before, self.record)
        if self.record != before:
            self.record_version += 1

    def fail(self, reason: str, diagnostics: dict[str, float] | None = None) -> Episode:
        self.termination = Termination.ERROR
        return self.episode(error=reason, diagnostics=diagnostics)

    def episode(
        self, error: str | None = None, diagnostics: dict[str, float] | None = None
    ) -> Episode:
        if self.termination is None:
            raise RuntimeError("conversation still running")
        gold = self.scenario.grade(self.profile, self.record, self.termination)
        j = self.job
        return Episode(
            id=f"{j.condition}/{j.phase}/{j.spec.id}/{j.seed}",
            scenario=self.scenario.name,
            simulator_id=j.spec.id,
            family=j.spec.family,
            kind=j.spec.kind,
            split="heldout" if j.split == "heldout" else "train",
            seed=j.seed,
            turns=tuple(self.turns),
            proxy=self.simulator.satisfaction(),
            gold=gold,
            termination=self.termination,
            profile=self.profile,
            record=self.record,
            error=error,
            condition=j.condition,
            phase=j.phase,
            step=j.step,
            diagnostics=diagnostics or {},
        )
