"""The language-model agent's warm start: supervised fine-tuning on the reference agent's calls.

Before RL the model must already do the task in the scenario's words, or GRPO has nothing to
compare within a group. It learns from the scenario's reference agent playing the *training*
members only (never a held-out family or a real caller), with two changes that keep the warm
start neutral about what RL will later find:

- every phrasing of the scenario's agent voice appears: each turn says an act of the kind and
  field the reference chose, in a style drawn uniformly (plain, its second wording, jargon);
- style and courtesy lines appear at one rate (``style_rate``), drawn uniformly from the
  scenario's: the line a frozen simulator over-rewards is in the corpus exactly as often as any
  other, so no phrasing is privileged before RL.

It records through the tools as the policy must: each turn opens with ``record`` calls for what
the caller said since its last turn (in words the scenario reads back exactly,
``scenarios.tools.value_text``), and its close with a ``submit``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import numpy as np
import torch

from sim2human import seeding
from sim2human.agents.base import Agent, AgentTurn, Observation
from sim2human.agents.llm import agent_setup
from sim2human.agents.lm_chat import IM_END, IM_START, calls_text, results_text, system_text
from sim2human.agents.lm_policy import LMPolicy, Trace
from sim2human.agents.scripted import reference_agent
from sim2human.agents.tool_messages import run_calls
from sim2human.rollout.conversation import Job
from sim2human.rollout.play import play
from sim2human.scenarios.capabilities import say_act
from sim2human.scenarios.core import Act, AnyScenario
from sim2human.scenarios.tools import (
    RECORD,
    SUBMIT,
    ReadsFields,
    has_desk,
    open_desk,
    read_value,
    value_text,
)
from sim2human.simulators.base import SimulatorSpec
from sim2human.train.config import WarmStartConfig
from sim2human.train.grpo import padded, token_logprobs
from sim2human.types import Episode, ToolCall

Progress = Callable[[int], None]
_CHATML = re.compile("|".join(re.escape(t) for t in (IM_START, IM_END)))


class VariedReference:
    """The reference agent's choices in every phrasing, recording through tools."""

    name = "reference-varied"

    def __init__(self, scenario: AnyScenario, style_rate: float) -> None:
        self.scenario = scenario
        self.inner: Agent = reference_agent(scenario)
        self.style_rate = style_rate
        self.by_id = {a.id: a for a in scenario.acts}
        self.styles = [a for a in scenario.acts if a.kind == "style"]
        self.recorded: dict[str, dict[str, object]] = {}

    def act_each(
        self, observations: Sequence[Observation], rngs: Sequence[np.random.Generator]
    ) -> list[AgentTurn]:
        chosen = self.inner.act(observations)
        return [self._vary(o, t, r) for o, t, r in zip(observations, chosen, rngs, strict=True)]

    def act(self, observations: Sequence[Observation]) -> list[AgentTurn]:
        rngs = [seeding.stream(0, "varied", o.call, o.turn) for o in observations]
        return self.act_each(observations, rngs)

    def _vary(self, obs: Observation, turn: AgentTurn, rng: np.random.Generator) -> AgentTurn:
        act = self.by_id.get(turn.act or "")
        text = turn.text
        if act is not None:
            twins = [a for a in self.scenario.acts if a.kind == act.kind and a.field == act.field]
            pick: Act = twins[int(rng.integers(len(twins)))]
            text = say_act(self.scenario, pick, obs.view)
            act = pick
        if self.styles and rng.random() < self.style_rate:
            style = self.styles[int(rng.integers(len(self.styles)))]
            text = f"{say_act(self.scenario, style, obs.view)} {text}"
        calls = self._records(obs, rng)
        if act is not None and act.kind == "close":
            calls.append(ToolCall(name=SUBMIT))
        return AgentTurn(
            text=text, act=act.id if act else turn.act, field=turn.field, tool_calls=tuple(calls)
        )

    def _records(self, obs: Observation, rng: np.random.Generator) -> list[ToolCall]:
        """``record`` calls for what the record holds now that was not recorded yet."""
        done = self.recorded.setdefault(obs.call, {})
        calls = []
        record = getattr(obs.view, "record", {})
        for field, value in record.items():
            if value is None or done.get(field) == value:
                continue
            words = self._words(obs.user_text, field, value, rng)
            if words is not None:
                value_words = written_value(words)
                calls.append(
                    ToolCall(name=RECORD, arguments={"field": field, "value": value_words})
                )
                done[field] = value
        return calls

    def _words(self, said: str, field: str, value: object, rng: np.random.Generator) -> str | None:
        """What to record for ``field``: the shortest run of the caller's last words the
        scenario reads as ``value`` (so the model learns to copy what it heard, as a person
        taking notes does, and a turn that records two fields still fits the policy's token
        limit), else plain words for the value."""
        scenario = self.scenario
        if isinstance(scenario, ReadsFields):
            span = shortest_span(scenario, field, said, value)
            if span is not None:
                return span
        say = getattr(scenario, "say", None)
        return value_text(scenario, field, value, say, rng)  # type: ignore[arg-type]


def written_value(words: str) -> str:
    """``words`` as the warm start writes a ``record`` value: after one space.

    Why: a byte-level BPE tokenizer joins a word to the space before it, so a word the caller
    said mid-sentence (" amlodipine") and the same word right after the value's opening quote
    ("amlodipine", then "am" + "lodipine" in the tiny tokenizer) are different tokens, and a model
    that must learn to copy would have to learn every value's first word twice. With the space,
    the value's first word is the token it heard. The scenario reads a value with the spaces
    around it stripped (``scenarios.tools.read_value``), so the space changes no record."""
    return f" {words}"


SPAN_WORDS = 12
"""The longest run of a caller's words ``shortest_span`` tries: a value longer than that is
recorded whole (a caller's whole turn, when it reads as the value)."""


def shortest_span(scenario: ReadsFields, field: str, said: str, value: object) -> str | None:
    """The shortest run of words in ``said`` that the scenario reads as ``value`` for ``field``
    (the earliest of equal length; punctuation at its ends dropped), ``said`` whole when only
    all of it does, or None. The words copied are the caller's, typos included: the reader
    takes them as it took the caller's turn."""
    words = said.split()
    for n in range(1, min(SPAN_WORDS, len(words)) + 1):
        for i in range(len(words) - n + 1):
            span = " ".join(words[i : i + n]).strip(_EDGE)
            if span and read_value(scenario, field, span) == value:
                return span
    return said if read_value(scenario, field, said) == value else None


_EDGE = " ,.;:!?\"'()"


def reference_calls(
    scenario: AnyScenario,
    members: Sequence[SimulatorSpec],
    cfg: WarmStartConfig,
    seed: int,
    max_turns: int,
) -> list[Episode]:
    """``cfg.episodes`` calls of the varied reference with training members, drawn uniformly."""
    rng = seeding.stream(seed, "warm-start")
    jobs = [
        Job(
            members[int(rng.integers(len(members)))],
            int(rng.integers(2**62)),
            "train",
            "warm-start",
            "train",
        )
        for _ in range(cfg.episodes)
    ]
    return play(VariedReference(scenario, cfg.style_rate), jobs, scenario, max_turns=max_turns)


def fine_tune(
    policy: LMPolicy,
    calls: Sequence[Episode],
    cfg: WarmStartConfig,
    seed: int,
    progress: Progress | None = None,
    *,
    micro_batch: int | None = None,
) -> list[float]:
    """Supervised fine-tuning on ``calls``' agent tokens; the mean loss of each epoch.

    A gradient step over ``cfg.batch`` calls is taken ``micro_batch`` calls per forward and
    backward pass (the agent's ``micro_batch``: what memory holds), each pass's loss divided by
    the whole batch's agent tokens, so the step's gradient is the whole batch's."""
    traces = [policy.written_trace(e.turns) for e in calls]
    params = [p for p in policy.model.parameters() if p.requires_grad]
    optim = torch.optim.AdamW(params, lr=cfg.lr, weight_decay=0.0)
    steps = cfg.epochs * -(-len(traces) // cfg.batch)
    sched = torch.optim.lr_scheduler.OneCycleLR(
        optim, max_lr=cfg.lr, total_steps=max(1, steps), pct_start=_warm_up_share(steps)
    )
    rng = seeding.stream(seed, "warm-start-order")
    losses: list[float] = []
    policy.model.train()
    for _ in range(cfg.epochs):
        order = rng.permutation(len(traces))
        total, count = 0.0, 0
        for i in range(0, len(order), cfg.batch):
            part = [traces[int(k)] for k in order[i : i + cfg.batch]]
            total += supervised_step(policy, part, optim, micro_batch or cfg.batch)
            sched.step()
            count += 1
            if progress is not None:
                progress(len(part))
        losses.append(total / max(1, count))
    policy.model.eval()
    return losses


def _warm_up_share(steps: int) -> float:
    """The share of ``steps`` the learning rate rises over: a tenth, except at exactly ten
    steps, where torch's one-cycle schedule would end its rise at step 0 and divide by zero."""
    return 0.1 if steps != 10 else 0.15


def supervised_step(
    policy: LMPolicy, part: Sequence[Trace], optim: torch.optim.Optimizer, per_pass: int
) -> float:
    """One gradient step on ``part``'s agent tokens (``per_pass`` traces per forward and
    backward pass, each pass's loss divided by the whole part's agent tokens, so the step's
    gradient is the whole part's; the gradient's norm clipped to 1); the step's mean loss."""
    params = [p for group in optim.param_groups for p in group["params"]]
    device = next(policy.model.parameters()).device
    tokens = max(1, sum(sum(t.mask[1:]) for t in part))
    optim.zero_grad(set_to_none=True)
    loss_sum = 0.0
    for j in range(0, len(part), per_pass):
        ids, attn, own = (x.to(device) for x in padded(part[j : j + per_pass], policy.pad))
        mask = own[:, 1:]
        loss = -(token_logprobs(policy.model, ids, attn, mask) * mask).sum() / tokens
        loss.backward()  # type: ignore[no-untyped-call]
        loss_sum += float(loss.detach())
    torch.nn.utils.clip_grad_norm_(params, 1.0)
    optim.step()
    return loss_sum


def turn_tokens(policy: LMPolicy, calls: Sequence[Episode]) -> list[int]:
    """The length in tokens of every agent turn of ``calls`` as ``policy`` writes it (its words,
    tool blocks and closing token): what its ``max_new_tokens`` must hold for it to say them."""
    lengths: list[int] = []
    for e in calls:
        run = 0
        for own in [*policy.written_trace(e.turns).mask, 0]:
            if own:
                run += 1
            elif run:
                lengths.append(run)
                run = 0
    return lengths


def corpus_texts(calls: Sequence[Episode], scenario: AnyScenario) -> list[str]:
    """The words a tiny model's tokenizer is trained on: the system message and every message
    of ``calls`` as the policy reads them (``agents.lm_chat``: tool calls, their results and
    words), ChatML's own tokens apart."""
    setup = agent_setup(scenario, None, "tools")
    texts = [system_text(setup.system_prompt, setup.tools)]
    for e in calls:
        desk = open_desk(scenario) if has_desk(scenario) else None
        for t in e.turns:
            if t.tool_calls and desk is not None:
                desk, said = run_calls(scenario, desk, t.tool_calls)
                texts += [calls_text(t.tool_calls), results_text(said)]
            texts.append(t.text)
    return [piece for text in texts for piece in _CHATML.split(text) if piece.strip()]
