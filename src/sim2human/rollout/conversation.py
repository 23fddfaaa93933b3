"""The conversation core: a ``Job`` names one episode to play, a ``Conversation`` steps it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, cast

import numpy as np

from sim2human import seeding
from sim2human.agents.base import AgentTurn, Observation
from sim2human.scenarios.core import AnyScenario, Scenario, StateT
from sim2human.scenarios.tools import Desk, has_desk, open_desk, use_tools
from sim2human.simulators.base import (
    AsyncSimulator,
    HearsTheEnd,
    Simulator,
    SimulatorSpec,
    UserTurn,
)
from sim2human.simulators.kinds import build_simulator, member_profile
from sim2human.types import Episode, Profile, Record, Termination, ToolCall, Turn

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
    tag: str = ""
    """Tells apart calls that share member and seed (a GRPO group's calls: the same caller with
    the same hidden profile, played several times); part of the episode's id when set."""


def job_profile(job: Job, scenario: AnyScenario) -> Profile:
    """The hidden profile a job plays, as its kind chooses it
    (``simulators.kinds.member_profile``)."""
    return member_profile(job.spec, scenario, job.seed)


def job_id(job: Job) -> str:
    """The id of the episode ``job`` plays (``Episode.id``). A tagged job (a GRPO group's call)
    names its step too: a sampler that replays levels (PLR) plays the same member and profile
    seed, with the same tags, at several steps, and each call is stored once."""
    member = job.spec.id if job.spec is not None else ""  # a replayed episode's job has none
    base = f"{job.condition}/{job.phase}/{member}/{job.seed}"
    return f"{base}/step{job.step}/{job.tag}" if job.tag else base


def user_rng(job: Job) -> np.random.Generator:
    """The simulator's own stream in ``job``'s episode."""
    return seeding.stream(job.seed, "user")


def agent_rng(job: Job) -> np.random.Generator:
    """A sampling agent's draws in ``job``'s episode: its own, whatever else shares the batch
    (and, for a tagged job, whatever other calls of its group draw)."""
    if job.tag:
        return seeding.stream(job.seed, "agent", job.spec.id, job.tag)
    return seeding.stream(job.seed, "agent", job.spec.id)


@dataclass
class Conversation(Generic[StateT]):
    """One call, stepped turn by turn. It owns the words (turns, transcript, the turn count and
    limit); the dialogue state is the scenario's (``Scenario.initial_state``, ``hear_user``,
    ``hear_agent``), typed by it (``Conversation[StateT]`` of a ``Scenario[StateT]``), and so is
    how the call ends (``Scenario.ending``)."""

    job: Job
    scenario: Scenario[StateT]
    simulator: Simulator | AsyncSimulator
    """``step`` needs a sync ``Simulator``; ``rollout.play_async`` drives the rest."""
    profile: Profile
    max_turns: int
    turns: list[Turn] = field(default_factory=list)
    state: StateT = field(init=False)
    """The scenario's dialogue state (its own type: a slot record, a deal on the table...),
    replaced (never changed) at every turn; the conversation only hands it back to the
    scenario."""
    termination: Termination | None = None
    satisfaction: list[float] = field(default_factory=list)
    """The simulator's satisfaction after each agent turn (the proxy, turn by turn)."""
    history: tuple[str, ...] = ()
    """What ``observe`` reports, kept as the call goes (rebuilding it each turn is quadratic)."""
    transcript: tuple[tuple[str, str], ...] = ()
    tool_calls: tuple[tuple[ToolCall, ...], ...] = ()
    """The tools the agent called, one entry per agent turn."""
    desk: Desk | None = None
    """What a tool-using agent recorded and submitted (``scenarios.tools``); None while the agent
    has not acted through tools, when gold grades what the call made heard."""

    def __post_init__(self) -> None:
        self.state = self.scenario.initial_state(self.profile)

    @classmethod
    def open(
        cls,
        job: Job,
        scenario: Scenario[StateT],
        max_turns: int,
        simulator: Simulator | None = None,
    ) -> Conversation[StateT]:
        """A call with ``job``'s member (``simulator``: an instance to use instead of building
        one from the spec, e.g. a user's own class under ``sim2human check``)."""
        simulator = simulator if simulator is not None else build_simulator(job.spec, scenario)
        profile = job_profile(job, scenario)
        conv = cls(job, scenario, simulator, profile, max_turns)
        first = simulator.start(profile, user_rng(job))
        conv._hear(first.text, first.tags)
        return conv

    @property
    def done(self) -> bool:
        return self.termination is not None

    @property
    def record(self) -> Record:
        """The state as it would be stored now (``Scenario.record``)."""
        return self.scenario.record(self.state)

    @property
    def graded_record(self) -> Record:
        """What gold grades: a tool-using agent's submitted record, else what was heard."""
        if self.desk is not None:
            return self.desk.graded(open_desk(self.scenario).working)
        return self.record

    def observe(self) -> Observation:
        return Observation(
            user_text=self.turns[-1].text,
            turn=len(self.history),
            max_turns=self.max_turns,
            history=self.history,
            view=self.scenario.observe(self.state),
            transcript=self.transcript,
            tool_calls=self.tool_calls,
            call=self.job_id,
        )

    @property
    def job_id(self) -> str:
        """The episode's id (``Episode.id``)."""
        return job_id(self.job)

    def step(self, turn: AgentTurn) -> None:
        """The agent says ``turn``; unless that ended the call, the simulator answers."""
        self.say(turn)
        if not self.done:
            sim = cast(Simulator, self.simulator)
            self.answer(turn, sim.reply(turn.text), sim.satisfaction)

    def say(self, turn: AgentTurn) -> None:
        """The agent's half of a step: its turn is heard (the simulator has not answered). The
        scenario may end the call on it (an agent accepting a deal)."""
        if self.done:
            raise RuntimeError("conversation already ended")
        calls = turn.tool_calls or ()
        self.turns.append(Turn(speaker="agent", text=turn.text, act=turn.act, tool_calls=calls))
        self.history += (turn.act or turn.text,)
        self.transcript += (("agent", turn.text),)
        self.tool_calls += (calls,)
        if turn.tool_calls is not None and has_desk(self.scenario):
            desk = self.desk if self.desk is not None else open_desk(self.scenario)
            self.desk = use_tools(self.scenario, desk, turn.tool_calls)
        self.state = self.scenario.hear_agent(self.state, turn)
        self.termination = self.scenario.ending(self.state, user_left=False)
        if self.done:  # no reply comes: the user hears the turn, and feels what it feels
            if isinstance(self.simulator, HearsTheEnd):
                self.simulator.hear_end(turn.text)
            self.satisfaction.append(self.simulator.satisfaction())

    def answer(self, turn: AgentTurn, reply: UserTurn, satisfaction: Callable[[], float]) -> None:
        """The simulator's half: its reply is heard, its satisfaction noted, the end decided."""
        self._hear(reply.text, reply.tags)
        self.satisfaction.append(satisfaction())
        n_agent = len(self.satisfaction)  # one entry per agent turn
        self.termination = self.scenario.ending(self.state, user_left=reply.done)
        if reply.done and self.termination is None:  # a scenario that breaks its contract
            self.termination = Termination.HUNG_UP
        elif self.termination is None and n_agent >= self.max_turns:
            self.termination = Termination.MAX_TURNS

    def hear(self, opening: UserTurn) -> None:
        """The user's opening line (the async engine starts simulators itself)."""
        self._hear(opening.text, opening.tags)

    def _hear(self, text: str, tags: tuple[str, ...]) -> None:
        self.turns.append(Turn(speaker="user", text=text, tags=tags))
        self.transcript += (("user", text),)
        self.state = self.scenario.hear_user(self.state, text)

    def fail(self, reason: str, diagnostics: dict[str, float] | None = None) -> Episode:
        self.termination = Termination.ERROR
        return self.episode(error=reason, diagnostics=diagnostics)

    def episode(
        self, error: str | None = None, diagnostics: dict[str, float] | None = None
    ) -> Episode:
        if self.termination is None:
            raise RuntimeError("conversation still running")
        record = self.graded_record
        gold = self.scenario.grade(self.profile, record, self.termination)
        j = self.job
        return Episode(
            id=self.job_id,
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
            record=record,
            error=error,
            condition=j.condition,
            phase=j.phase,
            step=j.step,
            record_source="submitted" if self.desk is not None else "heard",
            diagnostics=diagnostics or {},
        )


AnyConversation = Conversation[Any]
"""A call on a scenario of any state (as ``core.AnyScenario``): what the house holds when it
does not read the state itself."""
