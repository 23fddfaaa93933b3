"""``lm``: a causal language model as the agent, writing its own words token by token.

It reads what every free-text agent reads (the call's transcript, ``Observation.transcript``),
rendered as ChatML after the scenario's agent prompt and its tools, and writes each agent turn:
spoken words, with tool calls as ``<tool_call>{json}</tool_call>`` blocks (``scenarios.tools``)
that the caller never hears. The simulators read its text exactly as they read any agent's.

Why it keeps a trace per call. GRPO trains on the exact tokens the policy sampled; re-tokenising
the transcript afterwards gives other tokens (BPE is not stable under decode and encode), and so
gradients for text the policy never wrote. So each call's context is kept as token ids, grown by
the caller's turns and the sampled tokens, with a mask on the agent's own tokens
(``take_trace``). Why sampling is written here rather than ``model.generate``: each call draws
from its own generator (``SamplingAgent``), so an episode does not depend on which other calls
share its batch, and a KV-cached loop over a small model is several times quicker on a CPU than
``generate``'s per-step overhead.
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
from sim2human.agents.lm_cache import CallCaches, Reuse, batch_cache
from sim2human.agents.lm_models import IM_END, IM_START
from sim2human.scenarios.tools import split_tool_text, tool_text
from sim2human.types import ToolCall, Turn

DROP_FINISHED = 0.25
"""A turn's decoding batch sheds the rows that have finished once they are this share of it:
each shedding copies the rest's keys once, each step after it reads and computes fewer rows.
A batch of fewer rows can round a matrix product otherwise (up to 3e-6 in a logit, measured),
so now and then a sampled token differs from an unshed batch's: another draw from the same
distribution, as a batch of other calls would give (docs/results/lm-agents.md)."""

TOOL_PROMPT = (
    " Record each thing you are told with the record tool, written as "
    '<tool_call>{"name": "record", "arguments": {"field": ..., "value": ...}}</tool_call>, and '
    'call <tool_call>{"name": "submit", "arguments": {}}</tool_call> before you close the call: '
    "only what you submit counts."
)
"""What the model is told of its tools (``scenarios.tools``), after the agent prompt."""


@dataclass
class Trace:
    """One call as the policy saw and wrote it: token ids, and 1 where the policy wrote them."""

    ids: list[int] = field(default_factory=list)
    mask: list[int] = field(default_factory=list)
    seen: int = 0
    """How many transcript entries are already in ``ids``."""

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
        system_prompt: str,
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
        self.system_prompt = system_prompt
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
        self._open_assistant = self._encode(f"{IM_START}assistant\n")
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
        traces = [self._context(o) for o in observations]
        ids_of = [o.call for o in observations] if self.keep_keys else None
        written = self.sample([t.ids for t in traces], rngs, ids_of)
        turns = []
        for obs, trace, ids in zip(observations, traces, written, strict=True):
            trace.add(ids, own=True)
            trace.add(self._encode("\n"), own=False)
            trace.seen = len(obs.transcript) + 1
            spoken, calls = split_tool_text(self.tok.decode(ids, skip_special_tokens=True))
            turns.append(AgentTurn(text=spoken or "...", tool_calls=calls))
        return turns

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

    def written_trace(self, turns: Sequence[Turn]) -> Trace:
        """A whole call (a reference agent's, for the warm start) as this policy would hold it,
        the agent's words and tool blocks marked as its own: what supervised fine-tuning trains
        on, in exactly the rendering the policy reads when it plays."""
        trace = Trace()
        trace.add(self._encode(f"{IM_START}system\n{self.system_prompt}{IM_END}\n"), False)
        for turn in turns:
            if turn.speaker == "agent":
                self._agent_turn(trace, turn.tool_calls, turn.text, own=True)
            else:
                trace.add(self._encode(f"{IM_START}user\n{turn.text}{IM_END}\n"), False)
        return trace

    def _agent_turn(self, trace: Trace, calls: Sequence[ToolCall], text: str, *, own: bool) -> None:
        """An agent turn in the pieces a played turn has: the opening, the words and tool
        blocks with the closing token (the part the policy writes), the newline."""
        trace.add(self._open_assistant, False)
        said = " ".join([*(tool_text(c) for c in calls), text])
        trace.add([*self._encode(said), self.stop], own)
        trace.add(self._encode("\n"), False)

    def _encode(self, text: str) -> list[int]:
        return list(self.tok.encode(text, add_special_tokens=False))

    def _context(self, obs: Observation) -> Trace:
        """The call's trace so far, grown by the turns it has not seen, ending where the agent
        speaks. Kept across turns only when training will read it (``keep_traces``); without,
        the context is rebuilt from the transcript (the agent's own turns as it wrote them:
        words and tool blocks)."""
        trace = self._traces.get(obs.call) if self.keep_traces else None
        if trace is None:
            trace = Trace()
            trace.add(self._encode(f"{IM_START}system\n{self.system_prompt}{IM_END}\n"), False)
            if self.keep_traces:
                self._traces[obs.call] = trace
        agent_turn = sum(1 for s, _ in obs.transcript[: trace.seen] if s == "agent")
        for speaker, text in obs.transcript[trace.seen :]:
            if speaker == "agent":
                calls = obs.tool_calls[agent_turn] if agent_turn < len(obs.tool_calls) else ()
                self._agent_turn(trace, calls, text, own=False)
                agent_turn += 1
            else:
                trace.add(self._encode(f"{IM_START}user\n{text}{IM_END}\n"), False)
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
    ) -> list[list[int]]:
        """Each context's continuation up to and including ``<|im_end|>`` (or the token limit),
        drawn at ``temperature`` with each row's own generator (greedy at 0). Given the
        contexts' ``calls``, what each call's earlier turns computed is reused, and kept for its
        next turn (``agents.lm_cache``)."""
        n = len(contexts)
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
                    self._keep(calls, contexts, reuse, width, written, past, rows, ended)
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
            self._keep(calls, contexts, reuse, width, written, past, rows, range(len(rows)))
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
        self._caches.keep(self.model, named, ids, past, columns, which, batch=len(contexts))

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
