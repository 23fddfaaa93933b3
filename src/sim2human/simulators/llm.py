"""``llm``: a chat model plays the caller, over any OpenAI-compatible endpoint.

The persona prompt comes from the hidden profile and the member's traits, in the scenario's
words (``simulators.llm_prompts`` over ``Scenario.voice.role_play``); sampling parameters are
traits (``traits.temperature``, ``llm.top_p``, ``llm.max_tokens``) and so can be randomised per
member. Each reply passes the role guard (``simulators.llm_guard``): an out-of-role reply is
retried up to ``llm.guard_retries`` times at a higher temperature with a fresh seed, and every
retry and failure is counted in the episode's ``diagnostics``. A reply that stays out of role
is passed to the agent as it is (tagged ``out_of_role``): that is what a frozen LLM simulator
does.

Satisfaction is the persona rule (the ``persona`` family's scoring over what this caller
actually got across, or over the scenario's progress measure where it has one:
``simulators.llm_reading``) or an LLM judge's rating parsed to 0-10: of the whole call once it
has ended (``llm``), or of each exchange as it happens, averaged (``llm-turn``: dense, and at
temperature 0 a repeated exchange is a cache hit).
A request above temperature 0 carries a seed derived from the episode seed, and one at
temperature 0 none (the prompt alone decides), so a member at any temperature replays
identically and the client's cache answers repeats for free.

The prompt tells the model the profile's user side (``llm_prompts.user_side``: a slot
scenario's facts per field, or what the scenario says itself, as negotiation's priorities,
reason, walk-away and how to offer, accept and walk away). Replies reach the agent as text, read
by the scenario's ``hear_user`` like any other user's (fair observation); the simulator's noise
traits (typos, ASR confusions...) are applied to its replies too.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from pydantic import Field, field_validator, model_validator

from sim2human import seeding
from sim2human.errors import ConfigError, UsageError
from sim2human.llm.client import ChatClient, ChatResult
from sim2human.perturb import compose
from sim2human.scenarios.capabilities import courtesy
from sim2human.scenarios.core import AnyScenario
from sim2human.simulators.base import (
    MAX_TEMPERATURE,
    Judge,
    LLMParams,
    QuirkPool,
    SimulatorSpec,
    UserTurn,
)
from sim2human.simulators.families import get_family, known_family
from sim2human.simulators.llm_guard import (
    judge_prompt,
    out_of_role,
    parse_rating,
    tidy,
    turn_judge_prompt,
)
from sim2human.simulators.llm_prompts import (
    PROMPT_STYLES,
    hinted,
    persona_name,
    role_play,
    side_prompt,
    side_template,
    user_side,
)
from sim2human.simulators.llm_reading import Reading, reading, unsupported
from sim2human.simulators.llm_templates import check_entries, read_entries
from sim2human.simulators.persona import PersonaSimulator
from sim2human.types import Episode, FrozenConfig, Profile, Range

RETRY_TEMPERATURE = 0.7
"""Out-of-role retries sample at least this hot: at temperature 0 a retry repeats the failure."""
JUDGE_FALLBACK = 0.5
"""Satisfaction when the judge never gives a number (counted in ``judge_failures``)."""


@dataclass
class _Call:
    profile: Profile
    seed: int
    system: str
    reading: Reading
    messages: list[dict[str, str]] = field(default_factory=list)
    agent_texts: list[str] = field(default_factory=list)
    hung_up: bool = False
    score: float = 0.0
    ratings: list[float] = field(default_factory=list)
    """``llm-turn`` judge: the rating of each exchange so far."""


class LLMSimulator:
    """One ``llm`` member for one conversation at a time (see the module docstring)."""

    def __init__(self, spec: SimulatorSpec, scenario: AnyScenario, client: ChatClient) -> None:
        if spec.llm is None:
            raise ValueError(f"simulator {spec.id!r} is not an llm member")
        if (why := unsupported(scenario)) is not None:
            raise UsageError(f"scenario {scenario.name!r} cannot have llm users: {why}")
        self.role_play = role_play(scenario)
        if spec.llm.template is None and spec.llm.prompt not in self.role_play.prompts:
            known = ", ".join(self.role_play.prompts)
            raise ValueError(f"simulator {spec.id!r}: unknown prompt {spec.llm.prompt!r} ({known})")
        self.spec = spec
        self.params: LLMParams = spec.llm
        self.scenario = scenario
        self._courtesy = courtesy(scenario)
        self.lines = scenario.voice.user
        self.client = client
        self.name = persona_name(self.role_play, spec.seed)
        self._rule = PersonaSimulator(spec, scenario)
        self._call: _Call | None = None
        self._counts: Counter[str] = Counter()

    @property
    def call(self) -> _Call:
        if self._call is None:
            raise RuntimeError("astart() the conversation before replying")
        return self._call

    # -- the conversation -------------------------------------------------------------------

    async def astart(self, profile: Profile, rng: np.random.Generator) -> UserTurn:
        rp, side, traits = self.role_play, user_side(self.scenario, profile), self.spec.traits
        if self.params.template is None:
            system = side_prompt(rp, self.params.prompt, self.name, side, traits)
        else:
            system = side_template(rp, self.params, self.scenario.name, self.name, side, traits)
        self._call = _Call(
            profile, int(rng.integers(2**31)), system, reading(self.scenario, rp, profile)
        )
        self._counts = Counter()
        cue = f"{self.role_play.agent_name}: {self.role_play.opening_cue}"
        text = await self._generate(cue, (), turn=0)
        return UserTurn(text=text.text, tags=text.tags)

    async def areply(self, agent_text: str) -> UserTurn:
        c, t = self.call, self.spec.traits
        c.agent_texts.append(agent_text)
        c.reading.hear_agent(agent_text)
        intent = self._courtesy(agent_text)
        if intent.close:
            self._rescore()
            return UserTurn(text=self.lines.closing, done=True)
        if len(c.agent_texts) > t.patience:
            c.hung_up = True
            self._rescore()
            return UserTurn(text=self.lines.hang_up, done=True, tags=("hangup",))
        turn = len(c.agent_texts)
        reply = await self._generate(agent_text, intent.asks, turn)
        if self.params.judge == "llm-turn":
            said = c.messages[-1]["content"]  # the reply as spoken, before any line noise
            prompt = turn_judge_prompt(self.role_play, self.name, agent_text, said)
            c.ratings.append(await self._rate(prompt, c.seed, turn))
            c.score = sum(c.ratings) / len(c.ratings)
        self._rescore()
        return reply

    async def _generate(self, agent_text: str, asks: tuple[str, ...], turn: int) -> UserTurn:
        c, p = self.call, self.params
        history = c.messages[len(c.messages) - 2 * p.history :] if p.history else []
        hint = c.reading.hint(agent_text, asks) if turn else ""
        content = hinted(self.role_play, agent_text, hint) if turn else agent_text
        messages = [
            {"role": "system", "content": c.system},
            *history,
            {"role": "user", "content": content},
        ]
        tags: list[str] = []
        text = ""
        for attempt in range(p.guard_retries + 1):
            result = await self._chat(messages, turn, attempt)
            text = tidy(result.text, self.role_play.guard)
            reason = out_of_role(text, self.role_play.guard, c.system)
            if reason is None:
                break
            self._counts[f"out_of_role.{reason}"] += 1
            if attempt < p.guard_retries:
                self._counts["role_retries"] += 1
        else:
            self._counts["role_failures"] += 1
            tags.append("out_of_role")
            text = text or "..."
        if attempt:
            tags.append(f"retried:{attempt}")
        self._counts["replies"] += 1
        c.messages += [
            {"role": "user", "content": f"{self.role_play.agent_name}: {agent_text}"},
            {"role": "assistant", "content": text},
        ]
        noise, spoken = self.spec.traits.noise, text
        if noise:
            spoken = compose(text, noise, seeding.stream(c.seed, "llm-noise", turn))
        tags += c.reading.hear_user(text, spoken, asks)
        return UserTurn(text=spoken, tags=tuple(tags), done=c.reading.ended())

    async def _chat(self, messages: list[dict[str, str]], turn: int, attempt: int) -> ChatResult:
        """One request. Temperature 0 sends no seed (the prompt alone decides, so identical
        prompts share a cache entry); any other temperature sends one derived from the call."""
        t = self.spec.traits.temperature
        temperature = max(t, RETRY_TEMPERATURE) if attempt else t
        seed = None if temperature == 0 else _api_seed(self.call.seed, "llm-reply", turn, attempt)
        result = await self.client.chat(
            messages,
            temperature=temperature,
            top_p=self.params.top_p,
            max_tokens=self.params.max_tokens,
            seed=seed,
        )
        self._counts["prompt_tokens"] += result.prompt_tokens
        self._counts["completion_tokens"] += result.completion_tokens
        self._counts["cache_hits"] += int(result.cached)
        return result

    # -- satisfaction -----------------------------------------------------------------------

    def hear_end(self, agent_text: str) -> None:
        """The agent's turn that ended the call (it accepted this user's offer): heard, not
        answered (``simulators.base.HearsTheEnd``)."""
        c = self.call
        c.agent_texts.append(agent_text)
        c.reading.hear_agent(agent_text)
        self._rescore()

    def _rescore(self) -> None:
        """The persona rule over what this caller actually got across (cheap, every turn)."""
        if self.params.judge != "persona":
            return
        c = self.call
        c.score = c.reading.score(self._rule, c.agent_texts, c.hung_up)

    def satisfaction(self) -> float:
        return self.call.score

    async def finish(self, episode: Episode) -> float:
        """The final judgement, once the call has ended: the LLM judge reads it now."""
        if self.params.judge == "llm":
            self.call.score = await self.ajudge(episode)
        return self.call.score

    async def ajudge(self, episode: Episode) -> float:
        """This member's judgement of a whole call (``llm-turn`` members judge it whole too)."""
        if self.params.judge == "persona":
            return self._rule.judge(episode)
        turns = [(t.speaker, t.text) for t in episode.turns]
        call_seed = self._call.seed if self._call is not None else episode.seed
        return await self._rate(judge_prompt(self.role_play, self.name, turns), call_seed, -1)

    async def _rate(self, prompt: str, call_seed: int, turn: int) -> float:
        """The judge's 0-10 rating in [0, 1]; retried (hotter) while it gives no number."""
        messages = [
            {"role": "system", "content": self.role_play.judge_system},
            {"role": "user", "content": prompt},
        ]
        for attempt in range(self.params.guard_retries + 1):
            t = self.spec.traits.temperature
            temperature = max(t, RETRY_TEMPERATURE) if attempt else t
            seed = None if temperature == 0 else _api_seed(call_seed, "llm-judge", turn, attempt)
            result = await self.client.chat(
                messages, temperature=temperature, max_tokens=8, seed=seed
            )
            self._counts["judge_prompt_tokens"] += result.prompt_tokens
            self._counts["judge_requests"] += 1
            rating = parse_rating(result.text)
            if rating is not None:
                return rating
        self._counts["judge_failures"] += 1
        return JUDGE_FALLBACK

    def diagnostics(self) -> dict[str, float]:
        return {k: float(v) for k, v in sorted(self._counts.items())}


def _api_seed(call_seed: int, name: str, turn: int, attempt: int) -> int:
    """A request's seed (endpoints take 31 bits) from the call's stream ``name``."""
    return seeding.seed(call_seed, name, turn, attempt, bits=31)


def build_llm_simulator(
    spec: SimulatorSpec, scenario: AnyScenario, clients: dict[str, ChatClient]
) -> LLMSimulator:
    """An ``llm`` member on the client of the endpoint it names."""
    assert spec.llm is not None
    try:
        client = clients[spec.llm.endpoint]
    except KeyError:
        known = ", ".join(sorted(clients)) or "none"
        raise UsageError(
            f"simulator {spec.id!r} names endpoint {spec.llm.endpoint!r}, which is not "
            f"configured (configured: {known})"
        ) from None
    return LLMSimulator(spec, scenario, client)


class LLMMembers(FrozenConfig):
    """How to draw ``llm`` members: persona traits from families, LLM parameters from ranges."""

    families: tuple[str, ...] = Field(min_length=1)
    """Persona families the traits (verbosity, mood, patience, quirks, noise) are drawn from."""
    members: int = Field(
        2, ge=1, le=10_000, description="members in total, spread over the families (<= 10^4)"
    )
    prompts: tuple[str, ...] = Field(("plain",), min_length=1)
    """Built-in prompt styles (``PROMPT_STYLES``) or template files (``llm_templates``)."""
    templates: dict[str, str] = Field(default_factory=dict)
    """Template name -> text, read from the files ``prompts`` named when the study loaded
    (``prompts`` then holds their names); stored with the run, so no worker reads a file."""
    temperature: Range = (0.0, 0.0)
    top_p: Range = (1.0, 1.0)
    max_tokens: int = Field(24, ge=4, le=512)
    judge: Judge = "persona"
    endpoint: str = "local"
    guard_retries: int = Field(2, ge=0, le=10)
    history: int = Field(0, ge=0, le=50)

    @model_validator(mode="before")
    @classmethod
    def _read_templates(cls, data: object) -> object:
        if not isinstance(data, dict) or not isinstance(data.get("prompts"), list | tuple):
            return data
        try:
            prompts, templates = read_entries(data["prompts"], data.get("templates"), PROMPT_STYLES)
        except UsageError as err:
            raise ValueError(str(err)) from None
        return {**data, "prompts": prompts, "templates": templates}

    @model_validator(mode="after")
    def _known_prompts(self) -> LLMMembers:
        try:
            check_entries(self.prompts, self.templates, PROMPT_STYLES)
        except ConfigError as err:
            raise ValueError(str(err)) from None
        return self

    @field_validator("families")
    @classmethod
    def _known_families(cls, names: tuple[str, ...]) -> tuple[str, ...]:
        for name in names:
            known_family(name)
        return names

    @model_validator(mode="after")
    def _ordered(self) -> LLMMembers:
        for name in ("temperature", "top_p"):
            lo, hi = getattr(self, name)
            if lo > hi or lo < 0:
                raise ValueError(f"{name}: range [{lo}, {hi}] is empty or negative")
        if self.temperature[1] > MAX_TEMPERATURE:
            raise ValueError(f"temperature: {self.temperature[1]} is above {MAX_TEMPERATURE}")
        if not 0 < self.top_p[0] <= self.top_p[1] <= 1:
            raise ValueError("top_p must lie in (0, 1]")
        return self

    def draw(self, seed: int, pool: QuirkPool, split: str) -> tuple[SimulatorSpec, ...]:
        """``members`` specs; member k takes family k mod n, prompt k mod m, and its seed,
        temperature and top_p (uniformly from the ranges) from stream ``llm-member`` at
        (``split``, k) under ``seed``."""
        out = []
        for k in range(self.members):
            rng = seeding.stream(seed, "llm-member", split, k)
            family = self.families[k % len(self.families)]
            prompt = self.prompts[k % len(self.prompts)]
            member_seed = int(rng.integers(2**31))
            temperature = round(float(rng.uniform(*self.temperature)), 3)
            top_p = round(float(rng.uniform(*self.top_p)), 3)
            base = get_family(family).sample(member_seed, pool, temperature=temperature)
            out.append(
                llm_spec(
                    base,
                    prompt=prompt,
                    template=self.templates.get(prompt),
                    top_p=top_p,
                    max_tokens=self.max_tokens,
                    judge=self.judge,
                    endpoint=self.endpoint,
                    split=split,
                    guard_retries=self.guard_retries,
                    history=self.history,
                )
            )
        return tuple(out)


def llm_spec(base: SimulatorSpec, *, split: str = "", **params: Any) -> SimulatorSpec:
    """A persona draw turned into an ``llm`` member: same traits, plus LLM parameters.

    Its family is ``llm:<persona family>`` so that reports tell LLM and persona members apart.
    """
    llm = LLMParams(**params)
    t = base.traits.temperature
    tag = f"{split}-" if split else ""
    return base.model_copy(
        update={
            "id": f"llm-{tag}{llm.prompt}-t{t:g}-{base.id}",
            "family": f"llm:{base.family}",
            "kind": "llm",
            "llm": llm,
        }
    )
