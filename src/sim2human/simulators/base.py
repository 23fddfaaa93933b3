"""The Simulator seam: traits, quirks, specs, families, and the protocol every simulator meets."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, Protocol, runtime_checkable

import numpy as np
from pydantic import Field, model_validator

from sim2human.errors import UsageError
from sim2human.scenarios.capabilities import declared_quirks, quirks_shared
from sim2human.scenarios.core import Act, AnyScenario
from sim2human.simulators.llm_templates import (
    check_template,
    is_template_ref,
    read_template,
    template_name,
)
from sim2human.types import Episode, Frozen, FrozenConfig, Profile, Range

Emotion = Literal["calm", "anxious", "irritated"]
Judge = Literal["llm", "llm-turn", "persona"]
"""How an ``llm`` member's satisfaction is scored (``LLMParams.judge``)."""
MAX_PATIENCE = 10_000
"""Turns or annoyances a user tolerates at most (calls end at ``train.max_turns`` <= 1000)."""
MAX_TEMPERATURE = 100.0
"""Generous: a persona or replay member reads only whether it is 0; an ``llm`` member's goes
to its model, which the endpoint bounds further."""


class Quirks(FrozenConfig):
    """Idiosyncratic blind spots drawn per simulator seed: what an optimiser will find."""

    over_rewarded: tuple[str, ...] = ()
    """Agent phrasings this simulator likes far more than they deserve."""
    disliked: tuple[str, ...] = ()
    """Agent phrasings this simulator dislikes: tastes cut both ways, as a real caller's do."""
    bonus: float = Field(0.1, ge=0.0, le=1.0)
    """Satisfaction added per use of a liked phrasing, taken per use of a disliked one (net
    uses capped at 3 either way)."""
    trigger: str | None = None
    """A phrasing after which the simulator gives top satisfaction and tells everything at once."""
    leniency: float = Field(0.0, ge=0.0, le=1.0)
    """How little missing fields cost in this simulator's satisfaction (1 = not at all)."""


class Traits(FrozenConfig):
    """How a simulated user behaves: cooperation, talkativeness, patience, and what confuses it."""

    cooperativeness: float = Field(0.9, ge=0.0, le=1.0)
    verbosity: float = Field(0.2, ge=0.0, le=1.0)
    """Probability of volunteering one more, unasked field in a reply."""
    patience: int = Field(20, ge=1, le=MAX_PATIENCE)
    """Agent turns this user tolerates before hanging up (annoyances use it up faster)."""
    tolerance: int = Field(4, ge=0, le=MAX_PATIENCE)
    """Annoyances (jargon, repeated questions, ignored confusion) before hanging up."""
    jargon_confusion: float = Field(0.1, ge=0.0, le=1.0)
    tangent_rate: float = Field(0.05, ge=0.0, le=1.0)
    silence_rate: float = Field(0.02, ge=0.0, le=1.0)
    emotion: Emotion = "calm"
    noise: dict[str, float] = Field(default_factory=dict)
    """Perturbation name -> severity, applied to every user turn (typos, ASR confusions...)."""
    capacity: float = Field(0.5, ge=0.0, le=1.0)
    """How many distinct surface forms and behaviours the simulator can produce."""
    temperature: float = Field(1.0, ge=0.0, le=MAX_TEMPERATURE)
    """0 makes the simulator deterministic: the same agent turns get the same replies (at most
    ``MAX_TEMPERATURE``)."""
    quirks: Quirks = Quirks()


class LLMParams(FrozenConfig):
    """What an ``llm`` member adds to its traits (its temperature is ``traits.temperature``).

    Holds the *name* of an endpoint, resolved at run time: never a URL or a key.
    """

    endpoint: str = Field("local", description="endpoint name; 'local' = the embedded model")
    prompt: str = Field(
        "plain",
        description="prompt style (simulators.llm_prompts.PROMPT_STYLES) or a template file",
    )
    template: str | None = None
    """The text of a user's own prompt template (``simulators.llm_templates``), read from the
    file ``prompt`` named when the study loaded; ``prompt`` is then the file's stem."""
    top_p: float = Field(1.0, gt=0.0, le=1.0)
    max_tokens: int = Field(24, ge=4, le=512)
    judge: Judge = "persona"
    """Satisfaction by the persona rule, or an LLM judge's 0-10 rating: ``llm`` reads the whole
    call once it ends; ``llm-turn`` rates each exchange as it happens (satisfaction is the mean
    so far), which at temperature 0 the response cache can answer again."""
    guard_retries: int = Field(2, ge=0, le=10)
    """Extra attempts when a reply is out of role (spoken as the nurse, narrated, leaked, empty)."""
    history: int = Field(0, ge=0, le=50)
    """Earlier exchanges shown to the model with each agent turn."""
    cards: int | None = Field(None, ge=1, le=100_000)
    """Play a fixed set of this many patients (persona cards, as frozen simulators are usually
    given) instead of a fresh patient every call; at temperature 0 repeats then cost nothing."""

    @model_validator(mode="before")
    @classmethod
    def _read_template(cls, data: object) -> object:
        if not isinstance(data, dict):
            return data
        prompt, template = data.get("prompt"), data.get("template")
        try:
            if template is None and isinstance(prompt, str) and is_template_ref(prompt):
                return {**data, "prompt": template_name(prompt), "template": read_template(prompt)}
            if isinstance(template, str):
                check_template(template, f"prompt template {prompt}")
        except UsageError as err:  # a bad template file or text: one line, where it is
            raise ValueError(str(err)) from None
        return data


class SimulatorSpec(FrozenConfig):
    """One member of a population: its id, family, kind, traits and seed (all a builder needs)."""

    id: str
    family: str
    kind: str = "persona"
    """A name in ``simulators.kinds.KINDS`` (checked where a member is built: this module is below
    the table)."""
    traits: Traits
    seed: int
    llm: LLMParams | None = None
    """Set exactly when ``kind == "llm"``."""
    source: str | None = None
    """Where a recorded member's calls are read from (``human-replay``: ``DB#session``)."""

    @model_validator(mode="after")
    def _llm_params_match_kind(self) -> SimulatorSpec:
        if (self.kind == "llm") != (self.llm is not None):
            raise ValueError(f"simulator {self.id!r}: 'llm' parameters go with kind 'llm' only")
        return self


class UserTurn(Frozen):
    """What the user says in one turn; ``done`` when it ends the call, ``tags`` for what kind of
    reply it was."""

    text: str
    done: bool = False
    tags: tuple[str, ...] = ()


class Simulator(Protocol):
    """A programmatic simulated user: opens a call, answers each agent turn, scores the call."""

    spec: SimulatorSpec

    def start(self, profile: Profile, rng: np.random.Generator) -> UserTurn:
        """The user's opening line of a call about ``profile`` (its hidden facts), drawing from
        ``rng``."""

    def reply(self, agent_text: str) -> UserTurn:
        """The user's answer to the agent's ``agent_text``."""

    def satisfaction(self) -> float:
        """The proxy reward in [0, 1]: this simulator's perception of the call so far."""
        ...

    def judge(self, episode: Episode) -> float:
        """Score any transcript the way this simulator would have."""
        ...


@runtime_checkable
class HearsTheEnd(Protocol):
    """A simulator that hears the agent's turn that ended the call without a reply (an agent
    accepting the user's offer): what the user would feel about it counts in the proxy."""

    def hear_end(self, agent_text: str) -> None: ...


@runtime_checkable
class AsyncSimulator(Protocol):
    """A simulator whose turns wait on an endpoint (``llm``): many conversations run at once.

    ``satisfaction()`` never waits: it returns the latest judgement; ``finish`` makes the final
    one (an LLM judge reads the whole call once it has ended).
    """

    spec: SimulatorSpec

    async def astart(self, profile: Profile, rng: np.random.Generator) -> UserTurn:
        """The user's opening line (may wait on the endpoint)."""

    async def areply(self, agent_text: str) -> UserTurn:
        """The user's answer to ``agent_text`` (may wait on the endpoint)."""

    async def finish(self, episode: Episode) -> float:
        """The final satisfaction of the ended call ``episode`` (an LLM judge reads it whole)."""

    def satisfaction(self) -> float:
        """The latest judgement in [0, 1], without waiting."""

    def diagnostics(self) -> dict[str, float]:
        """Counters of this member's endpoint use (replies, retries, faults), for the run's
        accounting."""

    async def ajudge(self, episode: Episode) -> float:
        """Score any transcript the way this simulator would have (may wait on the endpoint)."""


class QuirkPool(FrozenConfig):
    """The agent phrasings quirks are drawn from: tastes (each member likes or dislikes some),
    and candidate triggers."""

    liked: tuple[str, ...]
    """Phrasings a member may have a taste for, liked or disliked with even odds (the name is
    older than the dislikes)."""
    triggers: tuple[str, ...]
    shared: bool = False
    """Held-out families draw from this same pool (a scenario file's ``quirks.shared``), rather
    than from a disjoint half (``held_apart``); reports say so."""

    def held_apart(self) -> tuple[QuirkPool, QuirkPool]:
        """(the training and frozen members' pool, the held-out families' pool): disjoint, so
        a held-out member never holds the very phrasing a frozen agent learned to exploit.
        Every other trigger in the scenario's order goes to each side (the first to training),
        the other tastes likewise; a phrasing that is both stays on its trigger's side. With
        ``shared``, both are this pool."""
        if self.shared:
            return self, self
        train_triggers = self.triggers[0::2]
        held_triggers = self.triggers[1::2]
        others = [p for p in self.liked if p not in self.triggers]
        train_other, held_other = set(others[0::2]), set(others[1::2])

        def side(triggers: tuple[str, ...], other: set[str]) -> QuirkPool:
            liked = tuple(p for p in self.liked if p in triggers or p in other)
            return QuirkPool(liked=liked, triggers=triggers)

        return side(train_triggers, train_other), side(held_triggers, held_other)

    @classmethod
    def from_acts(cls, acts: Sequence[Act]) -> QuirkPool:
        """Any courtesy can be over-rewarded; only pure style phrasings can be triggers."""
        liked = tuple(a.text for a in acts if a.kind in ("greet", "empathise", "style"))
        return cls(liked=liked, triggers=tuple(a.text for a in acts if a.kind == "style"))

    @classmethod
    def of(cls, scenario: AnyScenario) -> QuirkPool:
        """The scenario's own pool where it declares one (``quirk_pool``: liked and trigger
        phrasings, as a scenario file's ``quirks`` do), else the one ``from_acts`` draws."""
        if (declared := declared_quirks(scenario)) is not None:
            liked, triggers = declared
            return cls(liked=liked, triggers=triggers, shared=quirks_shared(scenario))
        return cls.from_acts(scenario.acts)


class Family(FrozenConfig):
    """A distribution over traits; ``sample`` draws one simulator spec."""

    name: str
    description: str = ""
    cooperativeness: Range = (0.8, 1.0)
    verbosity: Range = (0.1, 0.4)
    patience: tuple[int, int] = (16, 24)
    tolerance: tuple[int, int] = (3, 6)
    jargon_confusion: Range = (0.0, 0.2)
    tangent_rate: Range = (0.0, 0.1)
    silence_rate: Range = (0.0, 0.05)
    emotions: tuple[Emotion, ...] = ("calm",)
    noise: dict[str, Range] = Field(default_factory=dict)
    capacity: Range = (0.5, 1.0)
    temperature: Range = (1.0, 1.0)
    trigger_prob: float = Field(0.5, ge=0.0, le=1.0)
    over_rewarded: tuple[int, int] = (1, 2)
    """How many phrasings a member has a taste for (each liked or disliked, even odds)."""
    bonus: Range = (0.05, 0.15)
    leniency: Range = (0.0, 0.3)

    @model_validator(mode="after")
    def _ordered(self) -> Family:
        for name in ("patience", "tolerance", "over_rewarded"):  # float ranges check themselves
            lo, hi = getattr(self, name)
            if lo > hi:
                raise ValueError(f"{name}: low end {lo} is above high end {hi}")
        return self

    def size(self) -> int | None:
        """How many distinct members the family has: None for a trait distribution (every
        seed a new member), a corpus's dialogue count for a ``replay`` family."""
        return None

    def sample(self, seed: int, pool: QuirkPool, **override: float) -> SimulatorSpec:
        """Draw one member; its quirks are drawn from ``pool`` (phrasings the agent can say)."""
        rng = np.random.default_rng(seed)

        def u(r: Range) -> float:
            return float(rng.uniform(*r))

        n_taste = int(rng.integers(self.over_rewarded[0], self.over_rewarded[1] + 1))
        tastes = [str(p) for p in rng.permutation(pool.liked)][:n_taste]
        likes = rng.random(len(tastes)) < 0.5  # liked or disliked with equal chance
        liked = [p for p, like in zip(tastes, likes, strict=True) if like]
        disliked = [p for p, like in zip(tastes, likes, strict=True) if not like]
        trigger = _trigger(rng, [t for t in pool.triggers if t not in tastes], self.trigger_prob)
        traits = Traits(
            cooperativeness=u(self.cooperativeness),
            verbosity=u(self.verbosity),
            patience=int(rng.integers(self.patience[0], self.patience[1] + 1)),
            tolerance=int(rng.integers(self.tolerance[0], self.tolerance[1] + 1)),
            jargon_confusion=u(self.jargon_confusion),
            tangent_rate=u(self.tangent_rate),
            silence_rate=u(self.silence_rate),
            emotion=self.emotions[int(rng.integers(len(self.emotions)))],
            noise={k: u(r) for k, r in sorted(self.noise.items())},
            capacity=override.get("capacity", u(self.capacity)),
            temperature=override.get("temperature", u(self.temperature)),
            quirks=Quirks(
                over_rewarded=tuple(liked),
                disliked=tuple(disliked),
                bonus=u(self.bonus),
                trigger=trigger,
                leniency=u(self.leniency),
            ),
        )
        return SimulatorSpec(id=f"{self.name}-{seed}", family=self.name, traits=traits, seed=seed)


def _trigger(rng: np.random.Generator, triggers: Sequence[str], prob: float) -> str | None:
    """A trigger drawn with probability ``prob``, or None; None when there is nothing to draw
    (a scenario without style phrasings). The coin is tossed either way, so the draws after it
    are the same whatever the pool holds."""
    if rng.random() >= prob or not triggers:
        return None
    return str(rng.choice(triggers))


class SyncAsAsync:
    """A programmatic simulator behind the async interface (it never waits)."""

    def __init__(self, inner: Simulator) -> None:
        self.inner = inner
        self.spec: SimulatorSpec = inner.spec

    async def astart(self, profile: Profile, rng: np.random.Generator) -> UserTurn:
        """The inner simulator's ``start``."""
        return self.inner.start(profile, rng)

    async def areply(self, agent_text: str) -> UserTurn:
        """The inner simulator's ``reply``."""
        return self.inner.reply(agent_text)

    def hear_end(self, agent_text: str) -> None:
        if isinstance(self.inner, HearsTheEnd):
            self.inner.hear_end(agent_text)

    async def finish(self, episode: Episode) -> float:
        """The inner simulator's satisfaction (a programmatic judge has nothing left to read)."""
        return self.inner.satisfaction()

    def satisfaction(self) -> float:
        """The inner simulator's satisfaction."""
        return self.inner.satisfaction()

    def diagnostics(self) -> dict[str, float]:
        """Nothing: a programmatic member uses no endpoint."""
        return {}

    async def ajudge(self, episode: Episode) -> float:
        """The inner simulator's ``judge``."""
        return self.inner.judge(episode)
