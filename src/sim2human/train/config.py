"""The trainer's settings and per-update statistics: torch-free, so a study YAML loads (and
``sim2human --help`` answers) without importing torch."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import Discriminator, Field, Tag, model_validator

from sim2human.rollout.conversation import MAX_TURNS
from sim2human.types import FrozenConfig

MAX_EPISODES = 10_000_000
MAX_BATCH = 100_000
MAX_LR = 1.0
"""Generous (the default is 1e-3). Measured on a 16-update run of the intake policy: Adam at
1e10 still ended finite; at 1e30 the weights overflowed into NaN and the run died mid-update."""


class PPOConfig(FrozenConfig):
    """Every knob bounded: an unbounded one can hang a run or turn its numbers into NaN."""

    episodes: int = Field(
        4096, ge=1, le=MAX_EPISODES, description="training episodes in total (at most 10^7)"
    )
    batch_episodes: int = Field(
        128, ge=1, le=MAX_BATCH, description="episodes per PPO update (at most 10^5)"
    )
    epochs: int = Field(4, ge=1, le=1_000, description="passes over each batch (at most 1,000)")
    minibatch: int = Field(512, ge=1, le=1_000_000, description="steps per gradient step")
    lr: float = Field(1e-3, gt=0, le=MAX_LR, description="Adam's learning rate (at most 1)")
    gamma: float = Field(1.0, ge=0, le=1)
    gae_lambda: float = Field(0.95, ge=0, le=1)
    clip: float = Field(0.2, gt=0, le=10, description="PPO's ratio clip (at most 10)")
    ent_coef: float = Field(0.01, ge=0, le=100, description="entropy bonus (at most 100)")
    vf_coef: float = Field(0.5, ge=0, le=100, description="value-loss weight (at most 100)")
    max_grad_norm: float = Field(0.5, gt=0, le=1e6, description="gradient-norm clip (at most 10^6)")
    per_family_norm: bool = True
    """Normalise advantages within each simulator family, so easy families do not drown out
    hard ones. (Per member would be finer, but a randomized sampler draws a new member every
    episode, and normalising within one episode erases what the episode taught.)"""
    max_turns: int = Field(MAX_TURNS, ge=2, le=1_000, description="agent turns per call")
    turn_cost: float = Field(0.0, ge=0, le=1)
    """Handle time in the proxy: the reward trained on is the simulator's satisfaction less
    this much per agent turn (0.01: a call 10 turns longer must raise satisfaction by 0.1 to
    pay). 0, the default, changes nothing. Reports keep it apart: proxy is the satisfaction
    alone, gold the grade, and agent turns their own table."""
    turn_cost_ramp: float = Field(0.0, ge=0, le=1)
    """A curriculum for ``turn_cost``: it grows linearly from 0 to its full value over this
    share of the training episodes (0: the full cost from the first episode). A policy charged
    for every turn before it has learned the task can settle on closing the call at once: at
    0.03 from the start, both seeds of the quick demo's human-grounded ensemble did."""
    eval_every: int = Field(0, ge=0, le=1_000_000)
    """Studies only: evaluate on a fixed held-out subset every N updates (0: never). Logged for
    learning curves; never used to train, select or stop."""

    @model_validator(mode="after")
    def _ramp_needs_a_cost(self) -> PPOConfig:
        if self.turn_cost_ramp > 0 and self.turn_cost == 0:
            raise ValueError("turn_cost_ramp ramps turn_cost, which is 0: set turn_cost too")
        return self

    def turn_cost_after(self, seen: int) -> float:
        """The cost per agent turn for a batch played after ``seen`` training episodes."""
        ramp = self.turn_cost_ramp * self.episodes
        return self.turn_cost if ramp <= 0 else self.turn_cost * min(1.0, seen / ramp)


@dataclass(frozen=True)
class UpdateStats:
    update: int
    episodes_seen: int
    train_proxy: float
    train_gold: float
    reward_std: float
    entropy: float
    approx_kl: float
    kl_init: float
    grad_norm: float
    per_member: dict[str, tuple[float, float, int]]
    """member id -> (mean proxy, mean gold, episodes) in this update's batch."""


class WarmStartConfig(FrozenConfig):
    """Supervised fine-tuning on the reference agent's calls with training members, before RL."""

    episodes: int = Field(600, ge=1, le=1_000_000, description="reference calls to learn from")
    epochs: int = Field(3, ge=1, le=1_000, description="passes over them")
    lr: float = Field(2e-3, gt=0, le=MAX_LR, description="AdamW's learning rate")
    batch: int = Field(16, ge=1, le=4096, description="calls per gradient step")
    style_rate: float = Field(0.3, ge=0, le=1)
    """The share of the reference's turns that open with a style or courtesy line, drawn
    uniformly from the scenario's: every phrasing appears, none is privileged before RL."""
    copy_drill: int = Field(0, ge=0, le=1_000_000, description="most copying drill steps first")
    """The most gradient steps of ``train.copy_drill``'s drill (copy a run of the caller's words
    into a ``record`` call) before the warm start; it stops sooner once the model copies. For a
    model trained from scratch (``tiny``), which otherwise writes the values it saw most instead
    of the ones it heard."""
    threads: int | None = Field(None, ge=1, le=1_024, description="torch threads making it")
    """Default: every core of the machine. Warm starts are made one at a time, and the sub-runs
    that need one wait for it meanwhile, so its cores would otherwise sit idle (on two cores the
    quick warm start took 1.7-2x less time). Not part of what a warm start *is*: the tiny model's
    drill and fine-tuning gave the same weights, bit for bit, at 1 and 2 threads (measured)."""


class LMAgentConfig(FrozenConfig):
    """A study's language-model agent (``agent: {kind: lm}``), trained by GRPO on the proxy."""

    kind: Literal["lm"] = "lm"
    model: str = Field("tiny", min_length=1, max_length=4096)
    """``tiny`` (a small Llama trained here), ``smollm2`` (SmolLM2-135M-Instruct from the
    shipped GGUF) or the path of a local Hugging Face model."""
    steps: int = Field(40, ge=0, le=1_000_000, description="GRPO steps (at most 10^6)")
    groups: int = Field(4, ge=1, le=10_000, description="groups (callers) per step")
    group_size: int = Field(8, ge=2, le=1_024, description="calls per group, one caller each")
    lr: float = Field(1e-4, gt=0, le=MAX_LR, description="AdamW's learning rate for GRPO")
    """At 5e-4 the tiny model drifted from its warm start (KL 1-3 nats per agent token within
    20 steps) and its own proxy fell on every condition (docs/results/lm-agents.md)."""
    beta: float = Field(0.05, ge=0, le=100, description="weight of the KL to the warm start")
    scale_rewards: bool = True
    """Divide a group's advantages by its reward spread (GRPO); off: Dr. GRPO's plain centring."""
    temperature: float = Field(1.0, ge=0, le=10, description="sampling temperature in training")
    eval_temperature: float = Field(
        0.7, ge=0, le=10, description="sampling temperature in evaluation"
    )
    max_new_tokens: int = Field(64, ge=4, le=4096, description="tokens per agent turn at most")
    micro_batch: int = Field(8, ge=1, le=4096, description="calls per forward pass in a step")
    max_grad_norm: float = Field(1.0, gt=0, le=1e6, description="gradient-norm clip")
    device: str = Field("cpu", pattern=r"^(cpu|cuda(:\d+)?|mps)$")
    warm_start: WarmStartConfig = WarmStartConfig()


class PolicyAgentConfig(FrozenConfig):
    """The default agent: the small policy network over the scenario's acts, trained by PPO."""

    kind: Literal["ppo"] = "ppo"
    ask_once: bool = False
    """Never ask again for a field the agent's record holds (``agents.ask_once``): the asks
    for filled fields leave the policy's choices; it reads back instead. Slot scenarios only."""


def _agent_kind(value: Any) -> str:
    """An agent block's kind; ``ppo`` where it names none (``agent: {ask_once: true}``)."""
    kind = value.get("kind", "ppo") if isinstance(value, dict) else getattr(value, "kind", "ppo")
    return str(kind)


AgentConfig = Annotated[
    Annotated[PolicyAgentConfig, Tag("ppo")] | Annotated[LMAgentConfig, Tag("lm")],
    Discriminator(_agent_kind),
]
"""What a study trains: ``kind: ppo`` (the default, also where no kind is named) or ``kind:
lm``."""


def training_words(agent: PolicyAgentConfig | LMAgentConfig, train: PPOConfig) -> str:
    """What each sub-run trains, in words: PPO's episodes, or the LM agent's GRPO steps."""
    if isinstance(agent, LMAgentConfig):
        calls = agent.groups * agent.group_size
        return f"a {agent.model} language model, {agent.steps} GRPO steps of {calls} calls"
    return f"{train.episodes} training episodes"
