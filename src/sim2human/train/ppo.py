"""PPO for the policy agent, in one readable file (CleanRL style).

Why our own PPO rather than stable-baselines3: conversations of different simulators are stepped
together in one batch, and we need (a) advantages normalised per simulator family, so that easy
families do not drown out hard ones, and (b) the KL divergence to the *initial* policy on a fixed
probe set of observations, which is the optimisation distance of the overoptimisation analysis.
Both need the trainer's insides; the rest is textbook PPO (clipped ratio, GAE, value loss,
entropy bonus). The trainer sees only the proxy reward; gold is logged, never learned from.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import torch

from sim2human import seeding
from sim2human.agents.base import AgentTurn, Observation
from sim2human.agents.policy import PolicyAgent, PolicyNet, entropy, log_prob
from sim2human.rollout.conversation import Conversation, Job
from sim2human.samplers.build import Sampler
from sim2human.samplers.feedback import BatchInfo, draw_level
from sim2human.scenarios.core import AnyScenario
from sim2human.simulators.base import AsyncSimulator, SimulatorSpec
from sim2human.simulators.kinds import build_async_simulator, needs_endpoint
from sim2human.train.config import PPOConfig, UpdateStats
from sim2human.train.phases import PLAY, POLICY, PROBE, START, UPDATE, Phases
from sim2human.types import Episode

if TYPE_CHECKING:
    from sim2human.llm.runtime import LLMRuntime


@dataclass
class _Batch:
    obs: list[np.ndarray]
    actions: list[int]
    logps: list[float]
    values: list[float]
    owner: list[int]  # index of the conversation each step belongs to
    satisfaction: list[list[float]]  # per conversation: satisfaction after each agent turn


def train(
    agent: PolicyAgent,
    sampler: Sampler,
    scenario: AnyScenario,
    cfg: PPOConfig,
    seed: int,
    *,
    condition: str = "",
    on_update: Callable[[UpdateStats, Sequence[Episode]], None] | None = None,
    llm: LLMRuntime | None = None,
    judge: Callable[[Episode, float], float] | None = None,
    phases: Phases | None = None,
) -> list[UpdateStats]:
    """PPO on ``sampler``'s members. ``llm`` serves the batches that hold ``llm`` members (played
    by the async engine). ``judge`` (ensemble judging) maps an episode and its own final
    satisfaction to the score trained on; it replaces the final potential (see judging).
    ``phases``: where the time goes (play, policy inference, updates, logging), added up there."""
    phases = phases if phases is not None else Phases()
    torch.manual_seed(seed)
    rng = seeding.stream(seed, "train")
    with phases.timing(START):  # a process's first optimizer imports torch._dynamo: ~1.5 s
        # fused: one kernel per step instead of a dozen per parameter (a third of an update on CPU)
        optim = torch.optim.Adam(agent.net.parameters(), lr=cfg.lr, eps=1e-5, fused=True)
        init_net = copy.deepcopy(agent.net).requires_grad_(False)
    probe: torch.Tensor | None = None
    history: list[UpdateStats] = []
    n_updates = -(-cfg.episodes // cfg.batch_episodes)
    seen = 0
    for update in range(n_updates):
        n = min(cfg.batch_episodes, cfg.episodes - seen)
        jobs = [
            Job(*draw_level(sampler, rng), "train", condition, "train", update) for _ in range(n)
        ]
        batch, episodes = _play(agent, jobs, scenario, cfg.max_turns, llm, phases)
        step = cfg.model_copy(update={"turn_cost": cfg.turn_cost_after(seen)})
        seen += n
        judged = None
        if judge is not None:  # train on the judged score: it becomes the final potential
            finals = [s[-1] for s in batch.satisfaction]
            judged = tuple(judge(e, f) for e, f in zip(episodes, finals, strict=True))
            for s, j in zip(batch.satisfaction, judged, strict=True):
                s[-1] = j
        raw_adv, returns = _gae(batch, len(episodes), step)
        owner = np.asarray(batch.owner)
        abs_adv = tuple(float(np.abs(raw_adv[owner == i]).mean()) for i in range(len(episodes)))
        if probe is None:  # a fixed probe set for KL(pi || pi_init), from the first batch
            probe = torch.from_numpy(np.stack(batch.obs[:: max(1, len(batch.obs) // 512)]))
        with phases.timing(UPDATE):
            stats = _learn(agent, optim, batch, episodes, step, (raw_adv, returns))
        phases.did(UPDATE, cfg.epochs * -(-len(batch.actions) // cfg.minibatch))
        sampler.update(episodes, BatchInfo(update, seen, abs_adv, judged))
        row = _summarise(update, seen, episodes, _kl_to_init(agent, init_net, probe), *stats)
        history.append(row)
        if on_update is not None:
            with phases.timing(PROBE):
                on_update(row, episodes)
    return history


@torch.no_grad()
def _kl_to_init(agent: PolicyAgent, init_net: PolicyNet, probe: torch.Tensor) -> float:
    """KL(pi || pi_init) on the fixed probe observations: how far training has moved the policy."""
    logp = torch.log_softmax(agent.net.logits(probe), -1)
    logp0 = torch.log_softmax(init_net.logits(probe), -1)
    return float((logp.exp() * (logp - logp0)).sum(-1).mean())


def _play(
    agent: PolicyAgent,
    jobs: Sequence[Job],
    scenario: AnyScenario,
    max_turns: int,
    llm: LLMRuntime | None,
    phases: Phases,
) -> tuple[_Batch, list[Episode]]:
    """One training batch played (by the async engine when it holds ``llm`` members), its
    seconds split between the policy's inference and the rest of play."""
    began = time.perf_counter()
    inference = 0.0
    if llm is not None and any(needs_endpoint(j.spec) for j in jobs):
        batch, episodes = _collect_async(agent, jobs, scenario, max_turns, llm)
    else:
        batch, episodes, inference = _collect(agent, jobs, scenario, max_turns)
    phases.add(PLAY, time.perf_counter() - began - inference)
    phases.add(POLICY, inference)
    phases.did(PLAY, sum(len(e.turns) for e in episodes))
    phases.did(POLICY, len(batch.actions))
    return batch, episodes


def _collect(
    agent: PolicyAgent, jobs: Sequence[Job], scenario: AnyScenario, max_turns: int
) -> tuple[_Batch, list[Episode], float]:
    """The batch played, its episodes, and the seconds of it spent in the policy's inference."""
    convs = [Conversation.open(j, scenario, max_turns) for j in jobs]
    batch = _Batch([], [], [], [], [], [])
    live = list(range(len(convs)))
    inference = 0.0
    while live:
        observations = [convs[i].observe() for i in live]
        began = time.perf_counter()
        x = agent.featurise(observations)
        actions, logps = agent.decide(x)
        values = agent.value(x)
        inference += time.perf_counter() - began
        for k, i in enumerate(live):
            a = int(actions[k])
            convs[i].step(agent.turn(a, observations[k]))
            batch.obs.append(x[k])
            batch.actions.append(a)
            batch.logps.append(float(logps[k]))
            batch.values.append(float(values[k]))
            batch.owner.append(i)
        live = [i for i in live if not convs[i].done]
    batch.satisfaction = [c.satisfaction for c in convs]
    return batch, [c.episode() for c in convs], inference


def _collect_async(
    agent: PolicyAgent, jobs: Sequence[Job], scenario: AnyScenario, max_turns: int, llm: LLMRuntime
) -> tuple[_Batch, list[Episode]]:
    """``_collect`` for batches with members that wait on an endpoint: every conversation runs
    on its own, and the policy answers each observation as it arrives."""
    from sim2human.rollout.play_async import play_jobs

    batch = _Batch([], [], [], [], [], [])

    async def decide(owner: int, obs: Observation) -> AgentTurn:
        x = agent.featurise([obs])
        action, logp = agent.decide(x)
        value = agent.value(x)
        batch.obs.append(x[0])
        batch.actions.append(int(action[0]))
        batch.logps.append(float(logp[0]))
        batch.values.append(float(value[0]))
        batch.owner.append(owner)
        return agent.turn(int(action[0]), obs)

    def simulator(spec: SimulatorSpec) -> AsyncSimulator:
        return build_async_simulator(spec, scenario, llm.clients)

    played = llm.run(
        play_jobs(
            jobs, scenario, simulator, decide, concurrency=llm.conversations, max_turns=max_turns
        )
    )
    steps = np.bincount(np.asarray(batch.owner, dtype=np.int64), minlength=len(jobs))
    # An episode cut short by an endpoint error has one step more than satisfactions: that step
    # earns nothing.
    batch.satisfaction = [
        [
            *p.satisfaction,
            *[p.satisfaction[-1] if p.satisfaction else 0.0] * (n - len(p.satisfaction)),
        ]
        for p, n in zip(played, steps.tolist(), strict=True)
    ]
    return batch, [p.episode for p in played]


def _normalised(
    raw: np.ndarray, batch: _Batch, episodes: Sequence[Episode], cfg: PPOConfig
) -> np.ndarray:
    """The advantages ``raw`` (``_gae``'s), normalised per simulator family or over the batch;
    ``raw`` is left as it was."""
    adv = raw.copy()
    if cfg.per_family_norm:
        families = np.asarray([episodes[i].family for i in batch.owner])
        for f in np.unique(families):
            sel = families == f
            adv[sel] = (adv[sel] - adv[sel].mean()) / (adv[sel].std() + 1e-8)
    else:
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    return adv


def _gae(batch: _Batch, n_episodes: int, cfg: PPOConfig) -> tuple[np.ndarray, np.ndarray]:
    """GAE per conversation over the change in the simulator's satisfaction at each turn.

    Rewarding the change (potential-based shaping) sums to the final satisfaction less the
    opening one, so the optimum is unchanged; credit just reaches the turn that earned it.
    ``turn_cost`` is taken at every agent turn (handle time; none by default).
    """
    owner = np.asarray(batch.owner)
    values = np.asarray(batch.values, dtype=np.float32)
    adv = np.zeros_like(values)
    for i in range(n_episodes):
        steps = np.flatnonzero(owner == i)
        rewards = np.diff(np.asarray([0.0, *batch.satisfaction[i]]))
        if cfg.turn_cost:
            rewards = rewards - cfg.turn_cost
        gae, next_value = 0.0, 0.0
        for j, s in reversed(list(enumerate(steps))):
            delta = rewards[j] + cfg.gamma * next_value - values[s]
            gae = delta + cfg.gamma * cfg.gae_lambda * gae
            adv[s], next_value = gae, values[s]
    return adv, adv + values


def _learn(
    agent: PolicyAgent,
    optim: torch.optim.Optimizer,
    batch: _Batch,
    episodes: Sequence[Episode],
    cfg: PPOConfig,
    gae: tuple[np.ndarray, np.ndarray],
) -> tuple[float, float, float]:
    """PPO's epochs over ``batch``; ``gae`` is ``_gae``'s (advantages, returns), computed once
    per update by the caller, which also reads the raw advantages."""
    raw_adv, ret_np = gae
    adv_np = _normalised(raw_adv, batch, episodes, cfg)
    obs = torch.from_numpy(np.stack(batch.obs))
    actions = torch.as_tensor(batch.actions)
    old_logp = torch.as_tensor(batch.logps, dtype=torch.float32)
    adv, returns = torch.from_numpy(adv_np), torch.from_numpy(ret_np)
    n = len(actions)
    order = torch.Generator().manual_seed(int(old_logp.abs().sum() * 1000) % 2**31)
    params = list(agent.net.parameters())
    for _ in range(cfg.epochs):
        perm = torch.randperm(n, generator=order)
        for start in range(0, n, cfg.minibatch):
            mb = perm[start : start + cfg.minibatch]
            x, a_mb, old_mb = obs[mb], adv[mb], old_logp[mb]  # each row gathered once
            logits = agent.net.logits(x)
            logp = log_prob(logits, actions[mb])
            ratio = (logp - old_mb).exp()
            pg = -torch.min(ratio * a_mb, ratio.clamp(1 - cfg.clip, 1 + cfg.clip) * a_mb).mean()
            v_loss = 0.5 * (agent.net.value(x) - returns[mb]).pow(2).mean()
            ent = entropy(logits).mean()
            loss = pg + cfg.vf_coef * v_loss - cfg.ent_coef * ent
            optim.zero_grad()
            loss.backward()  # type: ignore[no-untyped-call]
            grad = torch.nn.utils.clip_grad_norm_(params, cfg.max_grad_norm)
            optim.step()
    if n == 0:
        return 0.0, 0.0, 0.0
    with torch.no_grad():  # what the last minibatch step saw (the statistics logged per update)
        kl = float(((ratio - 1) - (logp - old_mb)).mean())
        return float(ent.detach()), kl, float(grad)


def _summarise(
    update: int,
    seen: int,
    episodes: Sequence[Episode],
    kl_init: float,
    entropy: float,
    approx_kl: float,
    grad_norm: float,
) -> UpdateStats:
    proxy = np.asarray([e.proxy for e in episodes])
    gold = np.asarray([e.gold.success for e in episodes], dtype=float)
    per_member: dict[str, tuple[float, float, int]] = {}
    for m in sorted({e.simulator_id for e in episodes}):
        sel = [i for i, e in enumerate(episodes) if e.simulator_id == m]
        per_member[m] = (float(proxy[sel].mean()), float(gold[sel].mean()), len(sel))
    return UpdateStats(
        update=update,
        episodes_seen=seen,
        train_proxy=float(proxy.mean()),
        train_gold=float(gold.mean()),
        reward_std=float(proxy.std()),
        entropy=entropy,
        approx_kl=approx_kl,
        kl_init=max(0.0, kl_init),
        grad_norm=grad_norm,
        per_member=per_member,
    )
