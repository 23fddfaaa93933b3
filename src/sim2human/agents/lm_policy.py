"""``lm``: a causal language model as the agent, writing its own words token by token.

It reads the call's transcript as its server would send it (``agents.lm_chat``): an endpoint
agent's prompt and tools (``agents.llm.agent_setup``), each turn's tool calls, what the desk made
of them (``agents.tool_messages``), its words. It plays a turn as an endpoint agent does: calls
without words are answered and it writes again (``MAX_TOOL_ROUNDS``); words end the turn. So a
saved policy served through ``eval-agent`` reads exactly what it trained on.

Why it keeps a trace per call. GRPO trains on the exact tokens the policy sampled; re-tokenising
the transcript afterwards gives other tokens (BPE is not stable under decode and encode), and so
gradients for text the policy never wrote. So each call's context is kept as token ids, grown by
the caller's turns, the tool results and the sampled tokens, with a mask on the agent's own
tokens (``take_trace``). Where the model writes words and calls in one go, the trace keeps what it
wrote, where its server would show the calls and their results before the words: its next turn
reads, in process, a little otherwise than it would be served. Why sampling is written here
rather than ``model.generate``: each call draws from its own generator (``SamplingAgent``), so an
episode does not depend on which other calls share its batch, and a KV-cached loop over a small
model is several times quicker on a CPU than ``generate``'s per-step overhead.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from sim2human import seeding
from sim2human.agents.base import AgentTurn, Observation
from sim2human.agents.llm import MAX_TOOL_ROUNDS, agent_setup
from sim2human.agents.lm_cache import CallCaches, Reuse, batch_cache
from sim2human.agents.lm_chat import (
    AFTER,
    IM_END,
    OPEN_ASSISTANT,
    calls_text,
    results_text,
    system_text,
    user_text,
)
from sim2human.agents.tool_messages import run_calls
from sim2human.scenarios.core import AnyScenario
from sim2human.scenarios.tools import Desk, has_desk, open_desk, split_tool_text
from sim2human.types import ToolCall, Turn

DROP_FINISHED = 0.25
"""A turn's decoding batch sheds the rows that have finished once they are this share of it:
each shedding copies the rest's keys once, each step after it reads and computes fewer rows.
A batch of fewer rows can round a matrix product otherwise (up to 3e-6 in a logit, measured),
so now and then a sampled token differs from an unshed batch's: another draw from the same
distribution, as a batch of other calls would give (docs/results/lm-agents.md)."""


@dataclass
class Trace:
    """One call as the policy saw and wrote it: token ids, and 1 where the policy wrote them."""

    ids: list[int] = field(default_factory=list)
    mask: list[int] = field(default_factory=list)
    seen: int = 0
    """How many transcript entries are already in ``ids``."""
    desk: Desk | None = None
    """What the agent has recorded and submitted so far (its tools' results are read off it)."""

    def add(self, ids: Sequence[int], own: bool) -> None:
        self.ids.extend(ids)
        self.mask.extend([int(own)] * len(ids))


class LMPolicy:
    """A causal LM playing the agent (``SamplingAgent``: each call's draws are its own)."""

    name = "lm"

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        scenario: AnyScenario,
        *,
        temperature: float = 1.0,
        max_new_tokens: int = 64,
        device: str = "cpu",
        keep_traces: bool = False,
        keep_keys: bool = True,
        grow_in_place: bool = True,
    ) -> None:
        self.model = model
        self.tok = tokenizer
        self.scenario = scenario
        setup = agent_setup(scenario, None, "tools")
        self.system_prompt = setup.system_prompt
        self.tools = setup.tools  # None without a desk (a deal made in words)
        self.temperature = temperature
        self.max_new_tokens = max_new_tokens
        self.device = device
        self.keep_traces = keep_traces
        # Reuse each call's keys and values across its turns (``agents.lm_cache``); off, every
        # turn reads its whole context again (the same tokens, up to float rounding).
        self.keep_keys = keep_keys
        # Write each decoded token's keys into room made per turn (``agents.lm_cache``); off,
        # transformers' cache copies every row's keys at each token (the same calls, slower).
        self.grow_in_place = grow_in_place
        self.stop = int(tokenizer.convert_tokens_to_ids(IM_END))
        self.pad = int(tokenizer.pad_token_id if tokenizer.pad_token_id is not None else self.stop)
        self._traces: dict[str, Trace] = {}
        self._caches = CallCaches()
        self._open_assistant = self._encode(OPEN_ASSISTANT)
        self._after = self._encode(AFTER)
        # transformers 5.2x renamed the forward's ``past_key_values`` to ``cache``
        self._cache_arg = (
            "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"
        )

    # -- the Agent protocol -----------------------------------------------------------------

    def act(self, observations: Sequence[Observation]) -> list[AgentTurn]:
        rngs = [seeding.stream(0, "lm-agent", o.call, o.turn) for o in observations]
        return self.act_each(observations, rngs)

    def act_each(
        self, observations: Sequence[Observation], rngs: Sequence[np.random.Generator]
    ) -> list[AgentTurn]:
        """One turn of each call, in rounds: the calls whose round called tools and said
        nothing read the results and write again (each from its own generator, drawn on)."""
        traces = [self._context(o) for o in observations]
        spoken: list[list[str]] = [[] for _ in observations]
        made: list[list[ToolCall]] = [[] for _ in observations]
        pending = list(range(len(observations)))
        for round_ in range(MAX_TOOL_ROUNDS):
            ids_of = [observations[i].call for i in pending] if self.keep_keys else None
            contexts = [traces[i].ids for i in pending]
            written = self.sample(
                contexts, [rngs[i] for i in pending], ids_of, in_flight=len(observations)
            )
            going = []
            for i, ids in zip(pending, written, strict=True):
                said, calls = self._read(traces[i], ids)
                made[i] += calls
                if said:
                    spoken[i].append(said)
                if calls and not said and round_ < MAX_TOOL_ROUNDS - 1:
                    traces[i].add(self._encode(self._results(traces[i], calls)), own=False)
                    traces[i].add(self._open_assistant, own=False)
                    going.append(i)
                elif calls:
                    self._results(traces[i], calls)  # the desk moves; the turn has ended
            pending = going
            if not pending:
                break
        for obs, trace in zip(observations, traces, strict=True):
            trace.seen = len(obs.transcript) + 1
        return [
            AgentTurn(text=" ".join(s) or "...", tool_calls=tuple(m))
            for s, m in zip(spoken, made, strict=True)
        ]

    def take_trace(self, call: str) -> Trace | None:
        """The finished call's trace (and forget it, and its kept keys and values)."""
        self._caches.drop(call)
        return self._traces.pop(call, None)

    def forget(self) -> None:
        """Drop every trace and every kept key (after an evaluation, whose calls are not
        trained on, and after an update, which makes them stale)."""
        self._traces.clear()
        self._caches.clear()

    # -- rendering ----------------------------------------------------------------------------

    def written_trace(
        self, turns: Sequence[Turn], *, system: bool = True, results: bool = True
    ) -> Trace:
        """A whole call (a reference agent's, for the warm start) as this policy would hold it,
        the agent's tool calls and words marked as its own: what supervised fine-tuning trains
        on, in exactly the rendering the policy reads when it plays. Without ``system`` or
        ``results`` (the copying drill's short exchanges) those parts are left out."""
        trace = self._opened(system)
        for turn in turns:
            if turn.speaker == "agent":
                self._agent_turn(trace, turn.tool_calls, turn.text, own=True, results=results)
            else:
                trace.add(self._encode(user_text(turn.text)), False)
        return trace

    def _opened(self, system: bool = True) -> Trace:
        """A new call's trace: the system message, and a fresh desk."""
        trace = Trace(desk=open_desk(self.scenario) if has_desk(self.scenario) else None)
        if system:
            trace.add(self._encode(system_text(self.system_prompt, self.tools)), False)
        return trace

    def _agent_turn(
        self,
        trace: Trace,
        calls: Sequence[ToolCall],
        text: str,
        *,
        own: bool,
        results: bool = True,
    ) -> None:
        """A past agent turn as its server renders it: its tool calls, their results and its
        words, each message in the pieces a played round has (the opening, what the policy
        writes with the closing token, the newline). A drill's turn has no words."""
        if calls:
            trace.add(self._open_assistant, False)
            trace.add([*self._encode(calls_text(calls)), self.stop], own)
            trace.add(self._after, False)
            said = self._results(trace, calls)
            if results:
                trace.add(self._encode(said), False)
        if text or not calls:
            trace.add(self._open_assistant, False)
            trace.add([*self._encode(text), self.stop], own)
            trace.add(self._after, False)

    def _results(self, trace: Trace, calls: Sequence[ToolCall]) -> str:
        """What the desk made of ``calls`` (the desk moves on), as the message that says so."""
        if trace.desk is None:
            return results_text([f"{c.name}: no such tool" for c in calls])
        trace.desk, said = run_calls(self.scenario, trace.desk, calls)
        return results_text(said)

    def _read(self, trace: Trace, ids: Sequence[int]) -> tuple[str, tuple[ToolCall, ...]]:
        """Add a round the policy wrote to ``trace``; what it said and the tools it called
        (none where no tools are offered: its words as written)."""
        trace.add(ids, own=True)
        trace.add(self._after, own=False)
        text = self.tok.decode(ids, skip_special_tokens=True)
        if self.tools is None:
            return " ".join(text.split()), ()
        return split_tool_text(text)

    def _encode(self, text: str) -> list[int]:
        return list(self.tok.encode(text, add_special_tokens=False))

    def _context(self, obs: Observation) -> Trace:
        """The call's trace so far, grown by the turns it has not seen, ending where the agent
        speaks. Kept across turns only when training will read it (``keep_traces``); without,
        the context is rebuilt from the transcript (the agent's turns as its server renders
        them: tool calls, their results, words)."""
        trace = self._traces.get(obs.call) if self.keep_traces else None
        if trace is None:
            trace = self._opened()
            if self.keep_traces:
                self._traces[obs.call] = trace
        agent_turn = sum(1 for s, _ in obs.transcript[: trace.seen] if s == "agent")
        for speaker, text in obs.transcript[trace.seen :]:
            if speaker == "agent":
                calls = obs.tool_calls[agent_turn] if agent_turn < len(obs.tool_calls) else ()
                self._agent_turn(trace, calls, text, own=False)
                agent_turn += 1
            else:
                trace.add(self._encode(user_text(text)), False)
        trace.seen = len(obs.transcript)
        trace.add(self._open_assistant, False)
        return trace

    # -- sampling -----------------------------------------------------------------------------

    @torch.no_grad()
    def sample(
        self,
        contexts: Sequence[Sequence[int]],
        rngs: Sequence[np.random.Generator],
        calls: Sequence[str] | None = None,
        *,
        in_flight: int = 0,
    ) -> list[list[int]]:
        """Each context's continuation up to and including ``<|im_end|>`` (or the token limit),
        drawn at ``temperature`` with each row's own generator (greedy at 0). Given the
        contexts' ``calls``, what each call's earlier turns computed is reused, and kept for its
        next turn or round (``agents.lm_cache``), with the keys of ``in_flight`` calls in all (a
        later round's calls are some of its turn's: the others' keys must stay kept)."""
        n = len(contexts)
        batch = max(n, in_flight)
        reuse = (
            self._caches.reuse(self.model, calls, contexts, self.device)
            if calls is not None
            else Reuse(None, 0, [0] * n)
        )
        out, mask, positions, width = self._prefill(contexts, reuse)
        past, logits = self._past(out), out.logits[:, -1, :]
        written: list[list[int]] = [[] for _ in range(n)]
        done = [False] * n
        rows = list(range(n))  # the context each row of the decoding batch writes
        last = positions[:, -1:]
        for _ in range(self.max_new_tokens):
            chosen = self._draw(logits, [rngs[r] for r in rows], [done[r] for r in rows])
            for r, t in zip(rows, chosen, strict=True):
                if not done[r]:
                    written[r].append(t)
                    done[r] = t == self.stop
            if all(done[r] for r in rows):
                break
            going = [i for i, r in enumerate(rows) if not done[r]]
            if len(rows) - len(going) >= DROP_FINISHED * len(rows):
                if calls is not None:  # keep the finished rows' keys before they leave
                    ended = [i for i, r in enumerate(rows) if done[r]]
                    self._keep(calls, contexts, reuse, width, written, past, rows, ended, batch)
                at = torch.tensor(going, dtype=torch.long, device=self.device)
                past.batch_select_indices(at)
                mask, last, rows = mask[at], last[at], [rows[i] for i in going]
                chosen = [chosen[i] for i in going]
            step = torch.tensor(chosen, dtype=torch.long, device=self.device).unsqueeze(1)
            ones = torch.ones((len(rows), 1), dtype=torch.long, device=self.device)
            mask, last = torch.cat([mask, ones], 1), last + 1
            out = self.model(
                input_ids=step,
                attention_mask=mask,
                position_ids=last,
                use_cache=True,
                **{self._cache_arg: past},
            )
            past, logits = self._past(out), out.logits[:, -1, :]
        if calls is not None:
            self._keep(calls, contexts, reuse, width, written, past, rows, range(len(rows)), batch)
        return [w if w and w[-1] == self.stop else [*w, self.stop] for w in written]

    def _prefill(
        self, contexts: Sequence[Sequence[int]], reuse: Reuse
    ) -> tuple[Any, torch.Tensor, torch.Tensor, int]:
        """One pass over each context's tokens not in ``reuse``, left-padded to a common
        ``width``: (the model's output, the attention mask over the reused and new columns, the
        new tokens' positions, ``width``)."""
        n, kept = len(contexts), reuse.width
        news = [c[p:] for c, p in zip(contexts, reuse.lengths, strict=True)]
        width = max(len(c) for c in news)
        room = kept + width + self.max_new_tokens if self.grow_in_place else 0
        cache = batch_cache(self.model, room, reuse)
        ids = torch.full((n, width), self.pad, dtype=torch.long)
        mask = torch.zeros((n, kept + width), dtype=torch.long)
        for i, (new, p) in enumerate(zip(news, reuse.lengths, strict=True)):
            ids[i, width - len(new) :] = torch.tensor(new, dtype=torch.long)
            mask[i, kept - p : kept] = 1
            mask[i, kept + width - len(new) :] = 1
        ids, mask = ids.to(self.device), mask.to(self.device)
        positions = (mask.cumsum(1) - 1).clamp(min=0)[:, kept:]
        # Only the last position's logits: every position's would hold n x width x vocabulary
        # floats (about 100 GB for SmolLM2 at 256 calls of 2,000 tokens: an H200 ran out).
        out = self.model(
            input_ids=ids,
            attention_mask=mask,
            position_ids=positions,
            use_cache=True,
            logits_to_keep=1,
            **{self._cache_arg: cache},
        )
        return out, mask, positions, width

    def _keep(
        self,
        calls: Sequence[str],
        contexts: Sequence[Sequence[int]],
        reuse: Reuse,
        width: int,
        written: Sequence[list[int]],
        past: Any,
        rows: Sequence[int],
        which: Sequence[int],
        batch: int,
    ) -> None:
        """Keep the keys and values of the decoding batch's rows ``which`` (row ``i`` writes
        context ``rows[i]``) for each one's next turn: its context and what it wrote, less the
        last token written (never fed back); its columns are the reused prefix's, the new
        tokens' (right-aligned in the prefill) and the first decoding steps'."""
        kept, ids, columns = reuse.width, [], []
        for r in (rows[i] for i in which):
            context, p, own = contexts[r], reuse.lengths[r], written[r]
            fresh = len(context) - p
            ids.append([*context, *own[:-1]])
            columns.append(
                [
                    *range(kept - p, kept),
                    *range(kept + width - fresh, kept + width),
                    *range(kept + width, kept + width + len(own) - 1),
                ]
            )
        named = [calls[rows[i]] for i in which]
        self._caches.keep(self.model, named, ids, past, columns, which, batch=batch)

    @staticmethod
    def _past(out: Any) -> Any:
        cache = getattr(out, "cache", None)
        return cache if cache is not None else out.past_key_values

    def _draw(
        self, logits: torch.Tensor, rngs: Sequence[np.random.Generator], done: Sequence[bool]
    ) -> list[int]:
        if self.temperature <= 0:
            return [int(t) for t in logits.argmax(-1).tolist()]
        probs = torch.softmax(logits.float() / self.temperature, -1).cumsum(-1).cpu().numpy()
        chosen = []
        for i, row in enumerate(probs):
            u = 0.0 if done[i] else float(rngs[i].random()) * float(row[-1])
            chosen.append(min(int(np.searchsorted(row, u, side="right")), len(row) - 1))
        return chosen
