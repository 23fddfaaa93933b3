"""TRL: a simulated-user environment for ``GRPOTrainer(environment_factory=...)``.

TRL (>= 1.16) makes one environment per rollout, calls ``reset(**row)`` with the dataset row
(its return is appended to the prompt's last user message: here the caller's opening line),
offers the environment's public methods as tools (here ``reply``: what the agent says; it
returns what the caller says next) and scores the rollout with ``get_reward()`` (here the
simulator's satisfaction, the proxy). Gold outcomes are never a reward: ``log_gold`` logs them
as extra columns and metrics, and ``log_dir`` stores every episode in a run directory for
``sim2human report`` / ``diagnose``.

    pop = population("examples/collapse.yaml", condition="ensemble-randomized")
    trainer = GRPOTrainer(model=..., train_dataset=grpo_dataset(pop, 256),
                          environment_factory=env_factory(pop, log_dir="runs/grpo"),
                          reward_funcs=[log_gold], args=GRPOConfig(...))

Needs ``pip install 'sim2human[trl]'``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from sim2human import seeding
from sim2human.agents.base import AgentTurn, Observation
from sim2human.integrations._extra import require
from sim2human.integrations.chat import system_prompt
from sim2human.integrations.population import Population, Split
from sim2human.integrations.rows import TOOL_HINT, draw_rows, eval_rows, iter_rows
from sim2human.integrations.runlog import RunLog
from sim2human.rollout.conversation import AnyConversation
from sim2human.types import Episode, Termination


class SimulatedUser:
    """One conversation with one member of a sim2human population (one per TRL rollout)."""

    def __init__(
        self,
        pop: Population,
        *,
        log: RunLog | None = None,
        feed_every: int = 8,
        phase: str = "train",
    ) -> None:
        self._pop = pop
        self._log = log
        self._feed_every = feed_every
        self._phase = phase
        self._conv: AnyConversation | None = None
        self._episode: Episode | None = None
        self._finished: list[Episode] = []

    def reset(
        self,
        member: str | None = None,
        seed: int | None = None,
        split: Split = "train",
        spec: str | None = None,
        **row: Any,
    ) -> str:
        """Opens the conversation the row names; returns the caller's opening line."""
        if seed is None:  # a row without a member: draw one
            drawn, ep_seed = self._pop.draw(np.random.default_rng(), split)
        else:
            drawn, ep_seed = self._pop.resolve(member, spec), int(seed)
        phase = "eval" if split == "heldout" else self._phase
        self._conv = self._pop.open(drawn, ep_seed, phase=phase)
        self._episode = None
        return self._conv.turns[-1].text

    def reply(self, message: str) -> str:
        """Say something to the caller and hear their answer.

        Args:
            message: What you say to the caller, in plain words (one question or statement).

        Returns:
            What the caller says next. After the caller has hung up or the call has ended, a
            note saying so.
        """
        conv = self._conv
        if conv is None:
            raise RuntimeError("reset() first")
        if conv.done:
            return "(the call has ended)"
        conv.step(AgentTurn(text=message.strip() or "..."))
        if conv.done:
            self._end()
            return f"{conv.turns[-1].text}\n(the call has ended)"
        return conv.turns[-1].text

    def get_reward(self) -> float:
        """The proxy: the simulator's satisfaction when the rollout ends."""
        return self.episode.proxy

    @property
    def ended(self) -> bool:
        """Whether the call is over (the caller hung up, the agent closed, or turns ran out)."""
        return self._conv is not None and self._conv.done

    @property
    def episode(self) -> Episode:
        """The finished episode (a property, so TRL does not offer it as a tool). A rollout that
        stopped calling ``reply`` before the call ended is graded as a call that ran out of
        turns without a close."""
        if self._episode is None:
            if self._conv is None:
                raise RuntimeError("reset() first")
            if not self._conv.done:
                self._conv.termination = Termination.MAX_TURNS
            self._end()
        assert self._episode is not None
        return self._episode

    def _end(self) -> None:
        assert self._conv is not None
        self._episode = self._conv.episode()
        if self._log is not None:
            self._log.write(self._episode)
        if self._episode.phase == "train":
            self._finished.append(self._episode)
            if len(self._finished) >= self._feed_every:
                self._pop.update(self._finished)
                self._finished = []


def env_factory(
    pop: Population, *, log_dir: Path | str | None = None, log: RunLog | None = None
) -> Callable[[], SimulatedUser]:
    """TRL's ``environment_factory``: fresh ``SimulatedUser`` objects over one population,
    all writing to one run directory (``log_dir``, or an open ``log``)."""
    shared = (
        log
        if log is not None
        else (RunLog(log_dir, pop, trainer="trl") if log_dir is not None else None)
    )

    class Environment(SimulatedUser):
        __doc__ = SimulatedUser.__doc__

        def __init__(self) -> None:
            super().__init__(pop, log=shared)

    Environment.__name__ = Environment.__qualname__ = "SimulatedUser"
    Environment.run_log = shared  # type: ignore[attr-defined]
    return Environment


def log_gold(
    environments: list[SimulatedUser] | None = None,
    log_extra: Callable[[str, list[Any]], None] | None = None,
    log_metric: Callable[[str, float], None] | None = None,
    **_: Any,
) -> list[float | None]:
    """A ``reward_funcs`` entry that rewards nothing (returns ``None``) and logs gold: per
    rollout in the completions table (``gold``, ``member``, ``family``) and as metrics."""
    envs = environments or []
    episodes = [e.episode for e in envs]
    if log_extra is not None:
        log_extra("gold", [float(e.gold.success) for e in episodes])
        log_extra("gold_fields", [e.gold.field_accuracy for e in episodes])
        log_extra("member", [e.simulator_id for e in episodes])
        log_extra("family", [e.family for e in episodes])
    if log_metric is not None and episodes:
        log_metric("gold", float(np.mean([e.gold.success for e in episodes])))
        log_metric("gold_fields", float(np.mean([e.gold.field_accuracy for e in episodes])))
        log_metric("agent_turns", float(np.mean([e.n_turns for e in episodes])))
    return [None] * len(envs)


def grpo_dataset(
    pop: Population, n: int | None = None, *, split: Split = "train", seed: int = 0
) -> Any:
    """Rows naming member and seed, as a ``datasets.Dataset`` of ``n`` rows drawn now, or
    (``n=None``) an endless ``datasets.IterableDataset`` drawn as training goes, which lets an
    adaptive sampler (``must``, ``plr``, ``evolve``) steer by finished episodes (set
    ``max_steps``)."""
    datasets = require("datasets", "trl")
    if n is not None:
        return datasets.Dataset.from_list(draw_rows(pop, n, split=split, seed=seed))

    def rows() -> Any:
        yield from iter_rows(pop, seeding.stream(seed, "rows"), split)

    return datasets.IterableDataset.from_generator(rows)


def play_rows(
    model: Any,
    tokenizer: Any,
    pop: Population,
    *,
    splits: tuple[Split, ...] = ("train", "heldout"),
    per_member: int = 4,
    max_new_tokens: int = 64,
    out: Path | str | None = None,
) -> list[Episode]:
    """Evaluate a (trained) causal LM as GRPO trained it: greedy turns, ``reply`` tool calls
    parsed by TRL, on every member of ``splits`` at the study's evaluation seeds; ``out``
    writes a run directory for ``sim2human report`` / ``diagnose``. A turn without a ``reply``
    call ends the rollout, as it ends TRL's."""
    log = RunLog(out, pop, trainer="trl") if out is not None else None
    episodes: list[Episode] = []
    for split in splits:
        for r in eval_rows(pop, split, per_member):
            env = SimulatedUser(pop, log=log, phase="eval")
            messages = [*r["prompt"][:-1], {"role": "user", "content": env.reset(**r)}]
            for _ in range(pop.max_turns):
                text = reply_call(model, tokenizer, messages, max_new_tokens)
                if text is None:
                    break
                answer = env.reply(text)
                messages += exchange(text, answer)
                if env.ended:
                    break
            episodes.append(env.episode)
    if log is not None:
        log.close()
    return episodes


def exchange(said: str, heard: str) -> list[dict[str, Any]]:
    """One ``reply`` round as TRL appends it to a rollout: the assistant's tool call and the
    tool's answer (what the caller said)."""
    call = {"type": "function", "function": {"name": "reply", "arguments": {"message": said}}}
    return [
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "name": "reply", "content": heard},
    ]


def reply_call(
    model: Any, tokenizer: Any, messages: list[dict[str, Any]], max_new_tokens: int = 64
) -> str | None:
    """What the model says through ``reply`` next, greedy, parsed by TRL's own response parser;
    None when its turn calls no ``reply`` (TRL ends the rollout there)."""
    torch = require("torch", "trl")
    utils = require("trl.chat_template_utils", "trl")
    if (
        getattr(tokenizer, "response_template", None) is None
        and getattr(tokenizer, "response_schema", None) is None
    ):
        utils.add_response_schema(tokenizer)
    prompt = tokenizer.apply_chat_template(
        messages,
        tools=[SimulatedUser.reply],
        add_generation_prompt=True,
        return_dict=True,
        return_tensors="pt",
    ).to(model.device)
    n = prompt["input_ids"].shape[1]
    with torch.no_grad():
        ids = model.generate(**prompt, max_new_tokens=max_new_tokens, do_sample=False)
    parsed = utils.parse_response(
        tokenizer, ids[0][n:].tolist(), prefix=prompt["input_ids"][0].tolist()
    )
    calls = [
        c for c in parsed.get("tool_calls") or [] if c.get("function", {}).get("name") == "reply"
    ]
    if not calls:
        return None
    said = calls[0]["function"].get("arguments", {})
    return str(said.get("message", "") if isinstance(said, dict) else said)


class PolicyAgent:
    """The model under training as a sim2human ``Agent``, speaking the way its GRPO rollouts
    do: the rows' system prompt, the caller's opening line as the user message, each earlier
    turn as a ``reply`` call and its answer, and a greedy ``reply_call`` for the next turn. So
    ``rollout.evaluate`` (held-out families, replayed real callers) plays the policy as the
    trainer sees it. A turn without a ``reply`` call is silence to the caller ("..."): TRL ends
    its rollout there, an evaluation plays the call on, so a policy that stops talking is
    graded on a caller left waiting."""

    name = "trl-policy"

    def __init__(self, model: Any, tokenizer: Any, pop: Population, max_new_tokens: int = 64):
        self.model = model
        self.tokenizer = tokenizer
        self.max_new_tokens = max_new_tokens
        self.system = system_prompt(pop.scenario.name) + TOOL_HINT

    def act(self, observations: Sequence[Observation]) -> list[AgentTurn]:
        return [AgentTurn(text=self._say(o) or "...") for o in observations]

    def _say(self, obs: Observation) -> str | None:
        turns = list(obs.transcript)
        opening = turns.pop(0)[1] if turns and turns[0][0] == "user" else ""
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": self.system},
            {"role": "user", "content": opening},
        ]
        for (_, said), (_, heard) in zip(turns[0::2], turns[1::2], strict=False):
            messages += exchange(said, heard)
        text = reply_call(self.model, self.tokenizer, messages, self.max_new_tokens)
        return text.strip() if text is not None else None
