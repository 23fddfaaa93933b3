"""``ConversationEnv``: one simulated-user conversation as a Gymnasium environment.

``reset`` draws a member from the population (the condition's sampler for ``split="train"``,
uniformly among the held-out families for ``split="heldout"``) and opens a conversation;
``step(a)`` says act ``a`` of the scenario's inventory and returns the user's answer. The reward
of a step is the change in the simulator's satisfaction it caused, so an episode's return is the
proxy reward of that episode (what ``sim2human study`` trains on, less the study's
``train.turn_cost`` per agent turn where it sets one: that charge is the built-in trainer's, not
taken off here); ``info["gold"]`` (the graded
outcome, never a reward) and ``info["member"]`` come with the last step. ``terminated`` is a
call the agent closed or the user hung up on; ``truncated`` is the turn limit.

Observations are the built-in policy agent's feature vector (``Box``; its size comes from
``sim2human.agents.features.Featuriser``) or, with ``observation="text"``, the transcript so far.
Needs ``pip install 'sim2human[gym]'``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal, SupportsFloat

import numpy as np

from sim2human.agents.base import AgentTurn, Observation
from sim2human.agents.features import Featuriser
from sim2human.errors import UsageError
from sim2human.integrations._extra import require
from sim2human.integrations.population import Population, Split, check_split, population
from sim2human.integrations.runlog import RunLog
from sim2human.rollout.conversation import AnyConversation
from sim2human.scenarios.capabilities import say_act
from sim2human.scenarios.core import AnyScenario
from sim2human.types import Episode

require("gymnasium", "gym")
import gymnasium  # noqa: E402  (after the extra check)
from gymnasium import spaces  # noqa: E402

ObsKind = Literal["features", "text"]
TEXT_LIMIT = 20_000
"""Longest transcript a text observation holds (characters; older turns are cut first)."""


class TranscriptSpace(spaces.Text):
    """Any string up to ``max_length`` characters: transcripts hold punctuation, accents and
    whatever a perturbation wrote, which ``gymnasium.spaces.Text``'s charset would reject."""

    def contains(self, x: Any) -> bool:
        return isinstance(x, str) and self.min_length <= len(x) <= self.max_length


def render_act(scenario: AnyScenario, index: int, obs: Observation) -> AgentTurn:
    """Act ``index`` said in context, exactly as the built-in policy agent says it."""
    act = scenario.acts[index]
    text = say_act(scenario, act, obs.view)
    field = obs.field_of(act)
    return AgentTurn(text=text, act=act.id, field=field)


def transcript(obs: Observation) -> str:
    text = "\n".join(f"{speaker}: {said}" for speaker, said in obs.transcript)
    return text[-TEXT_LIMIT:]


class ConversationEnv(gymnasium.Env[Any, Any]):
    """A Gymnasium environment over a sim2human population (see the module docstring)."""

    metadata = {"render_modes": ["ansi"]}  # noqa: RUF012  (Gymnasium declares it so)

    def __init__(
        self,
        pop: Population,
        *,
        split: Split = "train",
        observation: ObsKind = "features",
        phase: str | None = None,
        log: RunLog | None = None,
        render_mode: str | None = None,
    ) -> None:
        check_split(split)
        if observation not in ("features", "text"):
            raise UsageError(f"observation must be 'features' or 'text', not {observation!r}")
        if render_mode not in (None, "ansi"):
            raise UsageError(f"render_mode must be None or 'ansi', not {render_mode!r}")
        self.pop = pop
        self.split: Split = split
        self.observation = observation
        self.phase = phase or ("train" if split == "train" else "eval")
        self.log = log
        self.render_mode = render_mode
        self.featurise = Featuriser(pop.scenario)
        self.action_space = spaces.Discrete(len(pop.scenario.acts))
        if observation == "text":
            self.observation_space: spaces.Space[Any] = TranscriptSpace(TEXT_LIMIT, min_length=0)
        else:
            size = self.featurise.size
            self.observation_space = spaces.Box(-np.inf, np.inf, (size,), np.float32)
        self.conv: AnyConversation | None = None
        self.finished: list[Episode] = []
        """Training episodes finished since the sampler was last fed (``feed_every``)."""
        self.feed_every = 32
        """Adaptive samplers learn from finished episodes in batches of this many."""

    @property
    def act_ids(self) -> tuple[str, ...]:
        return tuple(a.id for a in self.pop.scenario.acts)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """Draws the next member (``options={"member": id, "episode_seed": n}`` picks one)."""
        super().reset(seed=seed)
        opts = options or {}
        if "member" in opts:
            spec = self.pop.member(str(opts["member"]))
            ep_seed = int(opts.get("episode_seed", self.np_random.integers(2**31)))
        else:
            spec, ep_seed = self.pop.draw(self.np_random, self.split)
        self.conv = self.pop.open(spec, ep_seed, phase=self.phase)
        return self._obs(), {"member": spec.id, "family": spec.family}

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        conv = self.conv
        if conv is None or conv.done:
            raise RuntimeError("call reset() before step() (the conversation has ended)")
        index = int(action)
        if not 0 <= index < len(self.pop.scenario.acts):
            n = len(self.pop.scenario.acts)
            raise UsageError(f"action {index} is not an act index (0..{n - 1})")
        before = conv.satisfaction[-1] if conv.satisfaction else 0.0
        conv.step(render_act(self.pop.scenario, index, conv.observe()))
        reward = conv.satisfaction[-1] - before
        info: dict[str, Any] = {"member": conv.job.spec.id, "family": conv.job.spec.family}
        if not conv.done:
            return self._obs(), reward, False, False, info
        episode = conv.episode()
        info.update(
            gold=float(episode.gold.success),
            outcome=episode.gold.model_dump(),
            proxy=episode.proxy,
            termination=str(episode.termination),
            sim2human_episode=episode,
        )
        self._finish(episode)
        truncated = episode.termination == "max_turns"
        return self._obs(), reward, not truncated, truncated, info

    def _finish(self, episode: Episode) -> None:
        if self.log is not None:
            self.log.write(episode)
        if self.split == "train" and self.phase == "train":
            self.finished.append(episode)
            if len(self.finished) >= self.feed_every:
                self.pop.update(self.finished)
                self.finished = []

    def _obs(self) -> Any:
        assert self.conv is not None
        obs = self.conv.observe()
        if self.observation == "text":
            return transcript(obs)
        return self.featurise([obs])[0]

    def render(self) -> str | None:
        if self.render_mode != "ansi" or self.conv is None:
            return None
        return transcript(self.conv.observe())


def make_env(
    source: Any = None,
    *,
    split: Split = "train",
    condition: str | None = None,
    sampler: Any = None,
    observation: ObsKind = "features",
    seed: int = 0,
    log_dir: Path | str | None = None,
    max_turns: int | None = None,
) -> ConversationEnv:
    """An environment over a study (YAML path or config) or an ``Ensemble``.

    ``condition`` takes a study condition's sampler (``frozen-small`` trains on the single frozen
    simulator, ``ensemble-randomized`` on fresh trait draws ...), or ``sampler`` names one.
    ``log_dir`` writes every finished episode there as a run directory (close the env's
    ``log`` to finish it).
    """
    pop = population(source, condition=condition, sampler=sampler, seed=seed, max_turns=max_turns)
    log = RunLog(log_dir, pop, trainer="gymnasium") if log_dir is not None else None
    return ConversationEnv(pop, split=split, observation=observation, log=log)


class ActionAgent:
    """A sim2human ``Agent`` from any function of feature vectors to act indices, e.g. an SB3
    model's ``predict``: evaluated with ``sim2human.rollout.evaluate`` like the built-in policy."""

    name = "external"

    def __init__(self, scenario: AnyScenario, predict: Callable[[np.ndarray], np.ndarray]) -> None:
        self.scenario = scenario
        self.featurise = Featuriser(scenario)
        self.predict = predict

    def act(self, observations: Sequence[Observation]) -> list[AgentTurn]:
        actions = np.asarray(self.predict(self.featurise(observations))).reshape(-1)
        return [
            render_act(self.scenario, int(a), o) for a, o in zip(actions, observations, strict=True)
        ]
