"""One call between a person and an agent, stepped one message at a time, stored as it goes.

A call's live state (record, signals, what was asked) is a pure function of its stored turns, so
after a restart it is rebuilt by replaying them through ``rollout.Conversation`` with the
``human`` simulator; nothing else needs to survive. Every message carries the number of turns
the person saw (``seen``): a message sent twice, or from a stale page, is recognised and not
added again.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass

import numpy as np

from sim2human import seeding
from sim2human.agents.base import AgentTurn
from sim2human.errors import EndpointError
from sim2human.redact import redact
from sim2human.rollout.conversation import AnyConversation, Conversation, Job
from sim2human.scenarios import capabilities
from sim2human.scenarios.core import AnyScenario
from sim2human.simulators.base import UserTurn
from sim2human.simulators.human import HumanSimulator, human_spec, rating_to_proxy
from sim2human.store.call_records import Mode, Session, StoredTurn, as_turns, record_source
from sim2human.store.calls import HumanStore
from sim2human.types import Episode, Profile, Termination
from sim2human.webapp.agents import AgentPool
from sim2human.webapp.card import read_card

log = logging.getLogger("sim2human.webapp")

AGENT_DOWN = "the agent could not answer just now; please send again"
"""All a participant is told when the agent's endpoint fails: the endpoint, the model (which
would break blinding) and the upstream error go to the server log only, redacted."""

DETAILS = {"yes": 1.0, "partly": 0.5, "no": 0.0}
"""Answers to "did it get my details right?" and how they are stored in episode diagnostics."""


class CallError(ValueError):
    """Something the person should be told (shown on the page, status 4xx)."""


@dataclass
class Live:
    conv: AnyConversation
    sim: HumanSimulator
    last_agent: AgentTurn | None


class Calls:
    """Creates, steps, ends and rates calls; the web app and the terminal call both use it."""

    def __init__(self, store: HumanStore, pool: AgentPool) -> None:
        self.store = store
        self.pool = pool
        self.scenario = pool.scenario
        self._courtesy = capabilities.courtesy(self.scenario)
        self._live: dict[str, Live] = {}
        self._locks: dict[str, asyncio.Lock] = {}

    def lock(self, sid: str) -> asyncio.Lock:
        return self._locks.setdefault(sid, asyncio.Lock())

    def start(self, mode: Mode) -> tuple[str, str]:
        """A new session with a blinded agent; (id, token)."""
        agent, agent_seed = self.pool.assign(self.store.agent_counts())
        seed = int(np.random.SeedSequence().generate_state(1)[0] >> 1)
        rng = seeding.stream(seed, "profile")  # the profile a job on this seed plays
        if mode == "self" and capabilities.slot_kit(self.scenario) is None:
            raise CallError(
                f"this study's task ({self.scenario.name}) is played from a card only: "
                "it has no fields for a person to answer as themselves"
            )
        profile = self.scenario.sample_profile(rng) if mode == "card" else None
        return self.store.create(
            run=str(self.pool.run),
            scenario=self.scenario.name,
            agent=agent,
            agent_seed=agent_seed,
            mode=mode,
            seed=seed,
            max_turns=self.pool.max_turns,
            profile=profile,
        )

    def begin(self, s: Session) -> None:
        if s.status == "card":
            self.store.update(s.id, status="calling")

    def _job(self, s: Session) -> Job:
        return Job(spec=human_spec(s.id), seed=s.seed, split="heldout", condition=s.agent)

    def _rebuild(self, s: Session) -> Live:
        """The conversation so far, replayed from the stored turns."""
        sim = HumanSimulator(human_spec(s.id))
        conv = Conversation(
            self._job(s),
            self.scenario,
            sim,
            s.profile or {},
            s.max_turns,
        )
        last: AgentTurn | None = None
        for i, t in enumerate(s.turns):
            if t.speaker == "agent":
                last = AgentTurn(text=t.text, act=t.act, field=t.field, tool_calls=t.tool_calls)
                conv.say(last)
            elif i == 0:
                conv.hear(UserTurn(text=t.text))
            elif last is not None:
                sim.push(t.text)
                conv.answer(last, sim.reply(last.text), sim.satisfaction)
        return Live(conv, sim, last)

    def live(self, s: Session) -> Live:
        cached = self._live.get(s.id)
        if cached is None or len(cached.conv.turns) != len(s.turns):
            cached = self._live[s.id] = self._rebuild(s)
        return cached

    async def say(self, s: Session, seen: int, text: str) -> bool:
        """The person says ``text``; the agent answers. False if ``seen`` is stale (a repeat)."""
        if s.status != "calling":
            raise CallError(
                "the call has not started" if s.status == "card" else "this call has ended"
            )
        if seen != len(s.turns):
            return False
        live = self.live(s)
        conv, sim = live.conv, live.sim
        if live.last_agent is None:
            conv.hear(UserTurn(text=text))
        else:
            sim.push(text)
            conv.answer(live.last_agent, sim.reply(live.last_agent.text), sim.satisfaction)
        new = [StoredTurn("user", text)]
        if not conv.done:
            decide = self.pool.decider(s.agent, s.agent_seed)
            try:
                turn = await decide(
                    conv.observe(), seeding.seed(s.seed, "agent-turn", len(s.turns))
                )
            except EndpointError as err:
                self._live.pop(s.id, None)
                why = redact(str(err))
                log.warning("call %s: agent %s could not answer: %s", s.id, s.agent, why)
                raise CallError(AGENT_DOWN) from None
            conv.say(turn)
            new.append(StoredTurn("agent", turn.text, turn.act, turn.field, turn.tool_calls))
            live.last_agent = turn
            if self._courtesy(turn.text).close:
                conv.termination = Termination.COMPLETED
        if not self.store.add_turns(s.id, seen, new):
            self._live.pop(s.id, None)
            return False
        if conv.termination is not None:
            self._end(s, conv)
        return True

    def hang_up(self, s: Session, seen: int) -> bool:
        if s.status != "calling" or seen != len(s.turns):
            return False
        live = self.live(s)
        live.conv.termination = Termination.HUNG_UP
        self._end(s, live.conv)
        return True

    def _end(self, s: Session, conv: AnyConversation) -> None:
        termination = conv.termination or Termination.HUNG_UP
        status = "confirm" if s.mode == "self" else "rating"
        self.store.update(
            s.id, status=status, termination=termination.value, record=dict(conv.graded_record)
        )
        self._live.pop(s.id, None)

    def confirm(self, s: Session, typed: dict[str, str]) -> dict[str, str]:
        """Store the card a person confirmed after answering as themselves; problems if any."""
        if s.status != "confirm":
            raise CallError("nothing to confirm")
        profile, problems = read_card(self.scenario, typed)
        if not problems:
            self.store.update(s.id, status="rating", profile=profile)
        return problems

    def rate(self, s: Session, rating: int, details: str, comment: str) -> Episode:
        if s.status != "rating":
            raise CallError("this call cannot be rated now")
        if not 1 <= rating <= 5 or details not in DETAILS:
            raise CallError("choose a rating from 1 to 5 and answer the details question")
        episode = human_episode(s, rating, details, self.scenario)
        self.store.update(
            s.id,
            status="done",
            rating=rating,
            details_right=details,
            comment=comment,
            episode=episode,
            finished=time.time(),
        )
        return episode

    def forget(self) -> None:
        """Drop every live call (as a restart would); the next message rebuilds it."""
        self._live.clear()


def human_episode(s: Session, rating: int, details: str, scenario: AnyScenario) -> Episode:
    """A rated session as an ``Episode``: gold from ``grade()`` on the card, proxy = rating."""
    if s.profile is None or s.record is None or s.termination is None:
        raise CallError("the call has no card or record yet")
    profile: Profile = s.profile
    return Episode(
        id=f"human/{s.agent}/{s.id}",
        scenario=s.scenario,
        simulator_id=f"human:{s.id}",
        family="human",
        kind="human",
        split="heldout",
        seed=s.seed,
        turns=as_turns(s.turns),
        proxy=rating_to_proxy(rating),
        gold=scenario.grade(profile, s.record, s.termination),
        termination=s.termination,
        profile=profile,
        record=s.record,
        condition=s.agent,
        phase="eval",
        record_source=record_source(s.turns),
        diagnostics={"rating": float(rating), "details_right": DETAILS[details]},
    )
