"""The trainer's settings and per-update statistics: torch-free, so a study YAML loads (and
``sim2human --help`` answers) without importing torch."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import Field

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
    eval_every: int = Field(0, ge=0, le=1_000_000)
    """Studies only: evaluate on a fixed held-out subset every N updates (0: never). Logged for
    learning curves; never used to train, select or stop."""


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
