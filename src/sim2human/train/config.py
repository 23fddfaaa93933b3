"""The trainer's settings and per-update statistics: torch-free, so a study YAML loads (and
``sim2human --help`` answers) without importing torch."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import Field

from sim2human.rollout.conversation import MAX_TURNS
from sim2human.types import Frozen


class PPOConfig(Frozen):
    episodes: int = Field(4096, ge=1, description="training episodes in total")
    batch_episodes: int = Field(128, ge=1, description="episodes per PPO update")
    epochs: int = Field(4, ge=1)
    minibatch: int = Field(512, ge=1)
    lr: float = Field(1e-3, gt=0)
    gamma: float = Field(1.0, ge=0, le=1)
    gae_lambda: float = Field(0.95, ge=0, le=1)
    clip: float = Field(0.2, gt=0)
    ent_coef: float = Field(0.01, ge=0)
    vf_coef: float = Field(0.5, ge=0)
    max_grad_norm: float = Field(0.5, gt=0)
    per_family_norm: bool = True
    """Normalise advantages within each simulator family, so easy families do not drown out
    hard ones. (Per member would be finer, but a randomized sampler draws a new member every
    episode, and normalising within one episode erases what the episode taught.)"""
    max_turns: int = Field(MAX_TURNS, ge=2)
    eval_every: int = Field(0, ge=0)
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
