"""GRPO's pieces on cases that fail when they are wrong: group advantages, the agent-token mask
(no caller token ever carries loss), the KL term, and the warm start's neutrality."""

from __future__ import annotations

import copy
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
import torch

from sim2human.agents.lm_models import tiny
from sim2human.agents.lm_policy import LMPolicy, Trace
from sim2human.samplers.plr import PLRArgs, PLRSampler
from sim2human.scenarios.catalog import get_scenario
from sim2human.simulators.base import SimulatorSpec, Traits
from sim2human.train.config import LMAgentConfig, WarmStartConfig
from sim2human.train.grpo import (
    group_advantages,
    grpo_loss,
    kl_k3,
    padded,
    token_logprobs,
    train_grpo,
)
from sim2human.train.warm_start import fine_tune
from sim2human.types import Episode, ToolCall, Turn

INTAKE = get_scenario("intake")


def test_advantages_compare_each_call_with_its_own_group_only() -> None:
    adv = group_advantages([1.0, 0.0, 0.5, 0.5, 0.2, 0.4], size=2)
    assert adv == pytest.approx([1, -1, 0, 0, -1, 1])
    plain = group_advantages([1.0, 0.0, 0.9, 0.3], size=2, scale=False)
    assert plain == pytest.approx([0.5, -0.5, 0.3, -0.3])
    with pytest.raises(ValueError, match="groups of 3"):
        group_advantages([1.0, 2.0], size=3)


def call_turns() -> list[Turn]:
    record = ToolCall(name="record", arguments={"field": "severity", "value": "7"})
    return [
        Turn(speaker="user", text="Hi, my back hurts."),
        Turn(speaker="agent", text="How bad is it, out of 10?"),
        Turn(speaker="user", text="About seven."),
        Turn(speaker="agent", text="Thanks, bye.", tool_calls=(record, ToolCall(name="submit"))),
        Turn(speaker="user", text="Bye."),
    ]


@pytest.fixture(scope="module")
def policy() -> LMPolicy:
    texts = [t.text for t in call_turns()] * 20 + ["system prompt"]
    model, tok = tiny(texts, seed=0, sizes={"hidden": 32, "layers": 1, "heads": 2, "vocab": 400})
    return LMPolicy(model, tok, INTAKE)


def test_only_the_agents_own_tokens_are_marked(policy: LMPolicy) -> None:
    trace = policy.written_trace(call_turns())
    own = [i for i, m in zip(trace.ids, trace.mask, strict=True) if m]
    text = policy.tok.decode(own, skip_special_tokens=False)
    assert "How bad is it" in text and "Thanks, bye." in text and '"submit"' in text
    assert "seven" not in text and "back hurts" not in text and "system" not in text
    assert "recorded" not in text and "tool_response" not in text  # the desk's, not its own
    # it learns to end its messages (words; calls), not the caller's or the desk's
    assert text.count("<|im_end|>") == 3


class LogitsModel:
    """A 'model' whose logits are one leaf tensor, so the loss's gradient per position shows."""

    def __init__(self, batch: int, length: int, vocab: int) -> None:
        self.logits = torch.zeros((batch, length, vocab), requires_grad=True)

    def __call__(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> Any:
        return SimpleNamespace(logits=self.logits)

    def parameters(self) -> Any:
        return iter([self.logits])


def test_no_caller_token_carries_loss(policy: LMPolicy) -> None:
    traces = [policy.written_trace(call_turns()), policy.written_trace(call_turns()[:3])]
    ids, _, own = padded(traces, policy.pad)
    fake = LogitsModel(ids.shape[0], ids.shape[1], len(policy.tok))
    loss, _ = grpo_loss(fake, None, traces, [1.0, -0.5], pad=policy.pad, beta=0.0, total_tokens=9)
    loss.backward()
    assert fake.logits.grad is not None
    # position t predicts token t + 1: its gradient is non-zero exactly where t + 1 is the agent's
    moved = fake.logits.grad.abs().sum(-1)[:, :-1] > 0
    assert torch.equal(moved, own[:, 1:] > 0)


def test_the_k3_kl_is_zero_at_home_and_estimates_the_kl_elsewhere() -> None:
    same = torch.tensor([-1.0, -2.0])
    assert torch.equal(kl_k3(same, same), torch.zeros(2))
    p, q = np.array([0.7, 0.2, 0.1]), np.array([0.3, 0.3, 0.4])
    draws = np.random.default_rng(0).choice(3, size=200_000, p=p)
    logp, logq = torch.tensor(np.log(p[draws])), torch.tensor(np.log(q[draws]))
    assert float(kl_k3(logp, logq).mean()) == pytest.approx(
        float(np.sum(p * np.log(p / q))), rel=0.02
    )
    assert bool((kl_k3(logp, logq) >= 0).all())


def test_the_kl_term_pulls_towards_the_warm_start(policy: LMPolicy) -> None:
    traces = [policy.written_trace(call_turns())]
    ref = copy.deepcopy(policy.model)
    with torch.no_grad():
        for p in ref.parameters():
            p.add_(0.5 * torch.randn_like(p))
    _, kl_self = grpo_loss(
        policy.model, policy.model, traces, [0.0], pad=policy.pad, beta=1.0, total_tokens=1
    )
    assert kl_self == pytest.approx(0.0, abs=1e-5)
    loss_far, kl_far = grpo_loss(
        policy.model, ref, traces, [0.0], pad=policy.pad, beta=1.0, total_tokens=1
    )
    assert kl_far > 0 and float(loss_far.detach()) == pytest.approx(kl_far, rel=1e-4)


def test_a_trace_grows_by_what_the_policy_wrote(policy: LMPolicy) -> None:
    trace = Trace()
    trace.add([1, 2], own=False)
    trace.add([3], own=True)
    assert trace.ids == [1, 2, 3] and trace.mask == [0, 0, 1]


def test_the_warm_start_says_every_phrasing_none_privileged() -> None:
    from pathlib import Path

    from sim2human.experiments.study.config import load_study
    from sim2human.experiments.study.world import StudyWorld
    from sim2human.train.config import WarmStartConfig
    from sim2human.train.warm_start import reference_calls

    example = Path(__file__).resolve().parents[2] / "examples" / "collapse.yaml"
    world = StudyWorld.build(load_study(example, quick=True))
    calls = reference_calls(
        world.scenario, world.ensemble.train, WarmStartConfig(episodes=300), 0, 20
    )
    turns = [t.text for e in calls for t in e.agent_turns]
    styles = [a.text for a in get_scenario("intake").acts if a.kind == "style"]
    counts = [sum(s in t for t in turns) for s in styles]
    assert min(counts) > 0
    assert max(counts) < 2 * np.mean(counts)  # the frozen simulator's favourite is not favoured
    assert all(e.record_source == "submitted" for e in calls)
    assert np.mean([e.gold.score for e in calls]) > 0.7  # it records what it heard, and submits


def test_own_token_log_probs_are_the_full_ones_there_and_zero_elsewhere(policy: LMPolicy) -> None:
    """Only the agent's tokens go through the output layer (memory: a 49k-token head over every
    position is gigabytes), with the same values and gradients as the whole computation."""
    model = policy.model
    torch.manual_seed(0)
    ids = torch.randint(0, 200, (3, 40))
    attn = torch.ones_like(ids)
    attn[2, 30:] = 0
    where = (torch.rand(3, 39) > 0.6).float()
    full = token_logprobs(model, ids, attn)
    part = token_logprobs(model, ids, attn, where)
    assert torch.equal(part[where == 0], torch.zeros(int((where == 0).sum())))
    assert torch.allclose(part[where != 0], full[where != 0], atol=1e-6)
    (g_full,) = torch.autograd.grad((full * where).sum(), [model.lm_head.weight])
    (g_part,) = torch.autograd.grad(part.sum(), [model.lm_head.weight])
    assert torch.allclose(g_full, g_part, atol=1e-5)


def test_a_model_that_changes_its_logits_after_the_head_is_computed_whole(
    policy: LMPolicy, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = policy.model
    monkeypatch.setattr(model.config, "final_logit_softcapping", 30.0, raising=False)
    seen: list[str] = []
    real = model.get_decoder

    def spy() -> Any:
        seen.append("decoder")
        return real()

    monkeypatch.setattr(model, "get_decoder", spy)
    ids = torch.randint(0, 200, (1, 12))
    token_logprobs(model, ids, torch.ones_like(ids), torch.ones((1, 11)))
    assert seen == []  # never split into body and head


def test_sampling_keeps_the_last_logits_only_and_writes_what_a_full_pass_would(
    policy: LMPolicy,
) -> None:
    """The prefill computes one position's logits (every position's held calls x width x
    vocabulary floats: SmolLM2 ran a GPU out of memory), and the cached, left-padded, batched
    decoding writes what a plain greedy pass over each context alone writes."""
    greedy = LMPolicy(policy.model, policy.tok, INTAKE, temperature=0, max_new_tokens=6)
    contexts = [
        greedy.written_trace(call_turns()).ids,
        greedy.written_trace(call_turns()[:3]).ids,
    ]
    widths: list[int] = []
    hook = policy.model.lm_head.register_forward_hook(
        lambda _m, _i, out: widths.append(int(out.shape[1]))
    )
    try:
        written = greedy.sample(contexts, [np.random.default_rng(0)] * 2)
    finally:
        hook.remove()
    assert widths[0] == 1 and set(widths) == {1}
    for context, got in zip(contexts, written, strict=True):
        ids = list(context)
        expected: list[int] = []
        with torch.no_grad():
            while len(expected) < 6 and (not expected or expected[-1] != greedy.stop):
                logits = policy.model(input_ids=torch.tensor([ids])).logits[0, -1]
                expected.append(int(logits.argmax()))
                ids.append(expected[-1])
        if expected[-1] != greedy.stop:
            expected.append(greedy.stop)
        assert got == expected


def test_the_warm_start_in_micro_batches_takes_the_whole_batchs_step(policy: LMPolicy) -> None:
    """Memory holds ``micro_batch`` calls a pass, and the gradient step is still the batch's:
    one pass or one call a pass end on the same weights."""
    calls = [SimpleNamespace(turns=call_turns()[:n]) for n in (2, 3, 4, 5)]
    cfg = WarmStartConfig(episodes=4, epochs=2, lr=0.01, batch=4)
    weights = []
    for micro_batch in (None, 1):
        model = copy.deepcopy(policy.model)
        tuned = LMPolicy(model, policy.tok, INTAKE)
        losses = fine_tune(tuned, calls, cfg, 0, micro_batch=micro_batch)  # type: ignore[arg-type]
        weights.append(torch.cat([p.detach().flatten() for p in model.parameters()]))
        assert len(losses) == 2
    moved = weights[0] - torch.cat([p.detach().flatten() for p in policy.model.parameters()])
    assert moved.abs().max() > 1e-3
    assert torch.allclose(weights[0], weights[1], atol=1e-5)


def test_an_adaptive_sampler_scores_each_level_by_its_group_s_reward_spread(
    policy: LMPolicy,
) -> None:
    """PLR (score ``gae``) reads the trainer's advantages: GRPO gives every call of a group the
    group's mean |reward - its mean| (before scaling), so a level whose calls all earn the same
    (no gradient) scores 0 and one whose calls differ scores their spread. The second step
    replays the first's levels, and every call keeps an id of its own (the run's log stores
    each once)."""
    members = [
        SimulatorSpec(id=f"m{i}", family="standard", traits=Traits(), seed=i) for i in range(2)
    ]
    sampler = PLRSampler(members, PLRArgs(min_levels=1, replay_prob=1.0))
    cfg = LMAgentConfig(steps=2, groups=2, group_size=3, max_new_tokens=8, beta=0)
    steps: list[list[Episode]] = []
    train_grpo(
        copy.deepcopy(policy),
        None,
        sampler,
        INTAKE,
        cfg,
        seed=0,
        max_turns=4,
        on_step=lambda _, calls: steps.append(list(calls)),
    )
    scores = dict(zip(sampler.levels, sampler.scores, strict=True))
    assert len(steps) == 2 and max(scores.values()) > 0  # some group's calls differed
    replayed = {(e.simulator_id, e.seed) for e in steps[1]}
    assert replayed <= {(e.simulator_id, e.seed) for e in steps[0]}
    ids = [e.id for calls in steps for e in calls]
    assert len(set(ids)) == len(ids) == 2 * cfg.groups * cfg.group_size
    for k in range(cfg.groups):
        group = steps[-1][k * cfg.group_size : (k + 1) * cfg.group_size]
        assert len({(e.simulator_id, e.seed) for e in group}) == 1  # a group is one level
        proxies = np.asarray([e.proxy for e in group])
        spread = float(np.abs(proxies - proxies.mean()).mean())
        assert scores[(group[0].simulator_id, group[0].seed)] == pytest.approx(spread)


class _OneLevel:
    """A level sampler that draws one level for every group: PLR's worst case."""

    name = "one-level"

    def __init__(self, spec: SimulatorSpec) -> None:
        self.spec = spec

    def next(self, rng: np.random.Generator) -> SimulatorSpec:
        return self.spec

    def next_level(self, rng: np.random.Generator) -> tuple[SimulatorSpec, int]:
        return self.spec, 7

    def update(self, episodes: Any, info: Any = None) -> None:
        pass


def test_groups_that_play_one_level_in_one_step_are_stored_and_sampled_apart(
    policy: LMPolicy,
) -> None:
    """Two groups of a step on the same member and profile, and the same level again the next
    step: every call has its own id, and the second group samples its own words (its tags, on
    which the agent's sampling stream keys, differ from the first's)."""
    spec = SimulatorSpec(id="m0", family="standard", traits=Traits(), seed=0)
    cfg = LMAgentConfig(steps=2, groups=2, group_size=2, max_new_tokens=8, beta=0)
    steps: list[list[Episode]] = []
    train_grpo(
        copy.deepcopy(policy),
        None,
        _OneLevel(spec),  # type: ignore[arg-type]
        INTAKE,
        cfg,
        seed=0,
        max_turns=4,
        on_step=lambda _, calls: steps.append(list(calls)),
    )
    ids = [e.id for calls in steps for e in calls]
    assert len(set(ids)) == len(ids) == 8
    first, second = steps[0][:2], steps[0][2:]
    assert [[t.text for t in e.turns] for e in first] != [[t.text for t in e.turns] for e in second]
