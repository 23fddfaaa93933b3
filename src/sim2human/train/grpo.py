"""GRPO for the language-model agent: groups of calls with one caller, advantages on the proxy.

Each step draws ``groups`` callers from the condition's sampler (a member and a seed, so a hidden
profile) and plays each ``group_size`` times with the current policy; a call's reward is the
caller's satisfaction (the proxy: gold is never seen here), and its advantage is its reward
against its own group's (GRPO; ``scale_rewards`` off gives Dr. GRPO's plain centring). The loss
is on the agent's own tokens only (``Trace.mask``: the caller's turns are context, never
trained), averaged over every such token of the step, plus ``beta`` times the k3 estimate of the
KL to the warm start on the same tokens.

Why the loop is written here rather than TRL's ``GRPOTrainer``: TRL (1.16) plays multi-turn
conversations only through tool calls (its ``environment_factory`` offers the environment's
methods as tools and masks the tool responses), so a plain-chat agent that speaks to the caller
and records through tools of its own would have to wrap every spoken turn in a ``reply`` call,
which is not the agent a user deploys; and its rollouts run through ``generate``, which cannot
give each call its own sampling stream (``agents.lm_policy``). The pieces are the same: one
gradient step per batch of groups, so the sampled tokens are the current policy's and no
importance ratio is needed (GRPO with μ = 1), token-level averaging (DAPO), the k3 KL.
``integrations.trl`` agrees on the units: an episode is one call with one member and profile, a
group is the calls of one row (member and seed), the reward is the episode's proxy.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from sim2human import seeding
from sim2human.agents.lm_policy import LMPolicy, Trace
from sim2human.metrics.task_pay import group_lift, training_groups
from sim2human.rollout.conversation import Job, job_id
from sim2human.rollout.play import play
from sim2human.samplers.build import Sampler
from sim2human.samplers.feedback import draw_level, spread_by_level
from sim2human.scenarios.core import AnyScenario
from sim2human.simulators.base import SimulatorSpec
from sim2human.train.config import LMAgentConfig
from sim2human.types import Episode

if TYPE_CHECKING:
    from sim2human.llm.runtime import LLMRuntime


@dataclass(frozen=True)
class StepStats:
    """One GRPO step, as ``metrics.jsonl`` stores it."""

    update: int
    episodes_seen: int
    train_proxy: float
    train_gold: float
    group_reward_std: float
    """Mean spread of the proxy within a group: zero means no call of the step taught anything."""
    kl_init: float
    """Mean per-token KL to the warm start (k3 estimate) on the agent's tokens."""
    loss: float
    grad_norm: float
    agent_tokens: int
    agent_turns: float
    seconds: float
    play_seconds: float
    """Of ``seconds``, playing the step's calls (the rest is the update)."""
    per_member: dict[str, tuple[float, float, int]]
    task_pay: float | None = None
    """Mean over the step's groups whose calls differed in gold of the proxy the better calls
    earned over the worse (``metrics.task_pay``); None when no group's calls differed."""


def group_advantages(rewards: Sequence[float], size: int, *, scale: bool = True) -> np.ndarray:
    """Each reward minus its group's mean (groups are consecutive runs of ``size``), divided by
    the group's standard deviation when ``scale`` (a group with no spread gets zeros)."""
    r = np.asarray(rewards, dtype=np.float64)
    if r.size % size:
        raise ValueError(f"{r.size} rewards do not make groups of {size}")
    g = r.reshape(-1, size)
    centred = g - g.mean(axis=1, keepdims=True)
    if scale:
        std = g.std(axis=1, keepdims=True)
        centred = np.where(std > 1e-8, centred / np.maximum(std, 1e-8), 0.0)
    out: np.ndarray = centred.reshape(-1)
    return out


def padded(traces: Sequence[Trace], pad: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(ids, attention mask, loss mask), right-padded to the longest trace."""
    width = max(len(t.ids) for t in traces)
    ids = torch.full((len(traces), width), pad, dtype=torch.long)
    attn = torch.zeros((len(traces), width), dtype=torch.long)
    own = torch.zeros((len(traces), width), dtype=torch.float32)
    for i, t in enumerate(traces):
        n = len(t.ids)
        ids[i, :n] = torch.tensor(t.ids, dtype=torch.long)
        attn[i, :n] = 1
        own[i, :n] = torch.tensor(t.mask, dtype=torch.float32)
    return ids, attn, own


def token_logprobs(
    model: Any, ids: torch.Tensor, attn: torch.Tensor, where: torch.Tensor | None = None
) -> torch.Tensor:
    """log p(token t | tokens < t) for t >= 1: shape (batch, length - 1).

    With ``where`` (that shape; the agent's own tokens), only those positions go through the
    output layer and the rest are 0: the vocabulary-wide logits of every position are what
    memory goes on (SmolLM2's 49,152-token head over 16 calls of 1,500 tokens is 4.7 GB a copy,
    and a backward pass keeps several; the agent's tokens are a fifth of a call). A model whose
    forward changes its logits after the head (a soft cap, a scale) is computed whole."""
    parts = _decoder_and_head(model) if where is not None else None
    if parts is None or where is None:
        logits = model(input_ids=ids, attention_mask=attn).logits[:, :-1, :].float()
        out = torch.log_softmax(logits, -1).gather(-1, ids[:, 1:].unsqueeze(-1)).squeeze(-1)
        return out if where is None else out * (where != 0)
    decoder, head = parts
    hidden = decoder(input_ids=ids, attention_mask=attn).last_hidden_state[:, :-1, :]
    chosen = where != 0
    logits = head(hidden[chosen]).float()
    picked = torch.log_softmax(logits, -1).gather(-1, ids[:, 1:][chosen].unsqueeze(-1))
    zeros = torch.zeros(chosen.shape, dtype=picked.dtype, device=picked.device)
    return zeros.masked_scatter(chosen, picked.squeeze(-1))


def _decoder_and_head(model: Any) -> tuple[Any, Any] | None:
    """(the transformer body, the output layer) of a causal LM whose logits are the head's
    output unchanged; None when that cannot be known."""
    config = getattr(model, "config", None)
    if any(getattr(config, k, None) for k in ("final_logit_softcapping", "logit_scale")):
        return None
    get_decoder = getattr(model, "get_decoder", None)
    decoder = get_decoder() if callable(get_decoder) else None
    head = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
    if decoder is None or head is None or decoder is model:
        return None
    return decoder, head


def kl_k3(logp: torch.Tensor, ref_logp: torch.Tensor) -> torch.Tensor:
    """The k3 estimator of KL(policy || reference) per token: unbiased, never negative."""
    diff = ref_logp - logp
    return torch.exp(diff) - diff - 1


def grpo_loss(
    model: Any,
    ref: Any | None,
    traces: Sequence[Trace],
    advantages: Sequence[float],
    *,
    pad: int,
    beta: float,
    total_tokens: int,
) -> tuple[torch.Tensor, float]:
    """The step's loss on ``traces`` (a micro-batch), summed over the agent's tokens and divided
    by ``total_tokens`` (the whole step's), and the summed KL to ``ref`` on those tokens."""
    ids, attn, own = padded(traces, pad)
    device = next(model.parameters()).device
    ids, attn, own = ids.to(device), attn.to(device), own.to(device)
    mask = own[:, 1:]
    logp = token_logprobs(model, ids, attn, mask)
    adv = torch.tensor(advantages, dtype=torch.float32, device=device).unsqueeze(1)
    # exp(logp - logp.detach()) is 1 with logp's gradient: the on-policy ratio, written as PPO's
    loss = -(torch.exp(logp - logp.detach()) * adv * mask).sum()
    kl_sum = 0.0
    if ref is not None:
        with torch.no_grad():
            ref_logp = token_logprobs(ref, ids, attn, mask)
        kl = kl_k3(logp, ref_logp) * mask
        kl_sum = float(kl.detach().sum())
        if beta > 0:
            loss = loss + beta * kl.sum()
    return loss / max(1, total_tokens), kl_sum


def train_grpo(
    policy: LMPolicy,
    ref: Any | None,
    sampler: Sampler,
    scenario: AnyScenario,
    cfg: LMAgentConfig,
    seed: int,
    *,
    max_turns: int,
    condition: str = "",
    on_step: Callable[[StepStats, Sequence[Episode]], None] | None = None,
    start: int = 0,
    llm: LLMRuntime | None = None,
) -> list[StepStats]:
    """``cfg.steps`` GRPO steps on ``sampler``'s members (from step ``start``: a resumed run);
    ``llm`` serves members that are language models (a frozen LLM caller that also judges)."""
    optim = torch.optim.AdamW(
        [p for p in policy.model.parameters() if p.requires_grad], lr=cfg.lr, weight_decay=0.0
    )
    history: list[StepStats] = []
    policy.keep_traces = True
    for step in range(start, cfg.steps):
        began = time.perf_counter()
        rng = seeding.stream(seed, "grpo", step)
        torch.manual_seed(seeding.seed(seed, "grpo-torch", step, bits=31))
        policy.temperature = cfg.temperature
        levels = [draw_level(sampler, rng) for _ in range(cfg.groups)]
        jobs = [
            Job(spec, s, "train", condition, "train", step, tag=f"{again}g{k}")
            for (spec, s), again in zip(levels, _repeats(levels), strict=True)
            for k in range(cfg.group_size)
        ]
        policy.model.eval()
        episodes = play(policy, jobs, scenario, max_turns=max_turns, batch_size=len(jobs), llm=llm)
        played = time.perf_counter() - began
        by_id = {e.id: e for e in episodes}
        ordered = [by_id[job_id(j)] for j in jobs]
        traces = [policy.take_trace(e.id) for e in ordered]
        policy.forget()
        advantages = group_advantages(
            [e.proxy for e in ordered], cfg.group_size, scale=cfg.scale_rewards
        )
        loss, kl, norm, tokens = _update(policy, ref, optim, traces, advantages, cfg)
        sampler.update(ordered, spread_by_level(ordered, step + 1, (step + 1) * len(ordered)))
        seconds = (time.perf_counter() - began, played)
        stats = _stats(step, cfg, ordered, loss, kl, norm, tokens, seconds)
        history.append(stats)
        if on_step is not None:
            on_step(stats, ordered)
    policy.keep_traces = False
    return history


def _repeats(levels: Sequence[tuple[SimulatorSpec, int]]) -> list[str]:
    """Per group, a tag prefix that tells apart the groups of one step that play the same level:
    '' for a level's first group, 'r1', 'r2'... for the next. A sampler that replays levels
    (PLR) may draw one twice in a step; without it their calls would share ids and, as the
    agent's sampling stream keys on the tag, their samples too. Levels drawn once (every
    sampler that draws fresh profile seeds) keep the plain tags, and so their streams."""
    seen: Counter[tuple[str, int]] = Counter()
    out = []
    for spec, seed in levels:
        n = seen[(spec.id, seed)]
        seen[(spec.id, seed)] += 1
        out.append(f"r{n}" if n else "")
    return out


def _update(
    policy: LMPolicy,
    ref: Any | None,
    optim: torch.optim.Optimizer,
    traces: Sequence[Trace | None],
    advantages: np.ndarray,
    cfg: LMAgentConfig,
) -> tuple[float, float, float, int]:
    """One optimiser step over the step's calls, in micro-batches; (loss, KL/token, grad norm,
    agent tokens)."""
    kept = [(t, float(a)) for t, a in zip(traces, advantages, strict=True) if t is not None]
    tokens = sum(sum(t.mask) for t, _ in kept)
    policy.model.train()
    optim.zero_grad(set_to_none=True)
    loss_sum, kl_sum = 0.0, 0.0
    for i in range(0, len(kept), cfg.micro_batch):
        part = kept[i : i + cfg.micro_batch]
        loss, kl = grpo_loss(
            policy.model,
            ref,
            [t for t, _ in part],
            [a for _, a in part],
            pad=policy.pad,
            beta=cfg.beta,
            total_tokens=tokens,
        )
        loss.backward()  # type: ignore[no-untyped-call]
        loss_sum += float(loss.detach())
        kl_sum += kl
    params = [p for p in policy.model.parameters() if p.requires_grad]
    norm = float(torch.nn.utils.clip_grad_norm_(params, cfg.max_grad_norm))
    optim.step()
    policy.model.eval()
    return loss_sum, kl_sum / max(1, tokens), norm, tokens


def _stats(
    step: int,
    cfg: LMAgentConfig,
    episodes: Sequence[Episode],
    loss: float,
    kl: float,
    norm: float,
    tokens: int,
    seconds: tuple[float, float],
) -> StepStats:
    proxy = np.array([e.proxy for e in episodes])
    lifts = [x for g in training_groups(episodes) if (x := group_lift(g)) is not None]
    members: dict[str, list[Episode]] = {}
    for e in episodes:
        members.setdefault(e.simulator_id, []).append(e)
    return StepStats(
        update=step,
        episodes_seen=(step + 1) * cfg.groups * cfg.group_size,
        train_proxy=float(proxy.mean()),
        train_gold=float(np.mean([e.gold.score for e in episodes])),
        group_reward_std=float(proxy.reshape(-1, cfg.group_size).std(axis=1).mean()),
        kl_init=kl,
        loss=loss,
        grad_norm=norm,
        agent_tokens=tokens,
        agent_turns=float(np.mean([e.n_turns for e in episodes])),
        seconds=round(seconds[0], 3),
        play_seconds=round(seconds[1], 3),
        per_member={
            m: (
                float(np.mean([e.proxy for e in es])),
                float(np.mean([e.gold.score for e in es])),
                len(es),
            )
            for m, es in members.items()
        },
        task_pay=float(np.mean(lifts)) if lifts else None,
    )
