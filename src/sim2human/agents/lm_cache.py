"""Each call's keys and values kept between its agent turns, so a turn reads only what is new.

Why: without it the sampler reads the call's whole context again at every agent turn, so a
call's prefill grows with the square of its length (SmolLM2 on two CPU cores: about 4.5 of a
16-call GRPO step's 10 minutes, docs/results/lm-agents.md). With it a turn reads the caller's
new words and the tokens of the agent's last turn that were never fed back.

What a call reuses is decided by token ids, not trust: a turn takes the longest prefix its
context shares with what was kept, and reads at least the context's last token afresh (whose
logits start the turn). So a context rebuilt from the transcript (an evaluation re-encodes the
agent's turns, which need not give the sampled tokens back) reuses what still matches, and a
mismatch costs time, never a wrong key. Kept keys are dropped whenever the model's weights
change (a GRPO update, a warm start), detected by the parameters' in-place version counters.

Why written here rather than with transformers' ``DynamicCache`` alone: one cache holds one
batch whose rows share a length, while the calls in flight have different lengths and come and
go between turns. So each call's keys and values are kept on their own and stacked into a
batch cache per turn, each row left-padded (its padding masked), and read back out after it.

Why a layer of our own (``GrowingLayer``) in that batch cache: transformers' ``DynamicLayer``
grows by ``torch.cat``, copying every row's keys and values whole at each decoded token: half
the time of sampling 48 replayed patients' turns in one batch (cProfile, docs/results/lm-agents.md).
``StaticLayer`` preallocates but attends over its whole length at every step, which changes the
floats (and so, now and then, a sampled token). ``growing_layer()`` writes each step into room
made once per turn and hands attention a view of the filled columns: the same tensors a
``DynamicLayer`` would hand it, without the copy.
"""

from __future__ import annotations

import functools
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

from sim2human.agents.lm_models import need

KEPT_CALLS = 16
"""How many calls' keys and values are kept at least (the calls of a batch always are): a
lockstep batch's calls act together, a served call acts alone between others."""


@dataclass
class Kept:
    """One call's tokens whose keys and values are known, and those keys and values per layer
    (``[kv_heads, len(ids), head_dim]`` each)."""

    ids: list[int]
    layers: list[tuple[torch.Tensor, torch.Tensor]]


@dataclass
class Reuse:
    """A batch's reused prefixes: ``layers`` (keys and values per layer, ``[batch, kv_heads,
    width, head_dim]``) hold ``width`` columns, row ``i``'s last ``lengths[i]`` of them its kept
    keys (the rest masked); ``None`` when nothing is reused."""

    layers: list[tuple[torch.Tensor, torch.Tensor]] | None
    width: int
    lengths: list[int]


@functools.cache
def growing_layer() -> type:
    """``GrowingLayer``, made on first use (transformers is an extra, imported when needed)."""

    class GrowingLayer(need("transformers").cache_utils.DynamicLayer):  # type: ignore[misc]
        """A ``DynamicLayer`` that writes new keys and values into room made ahead (``room``
        columns, more if a turn outgrows it) instead of concatenating: ``keys`` and ``values``
        are views of the filled columns, so whatever reads a ``DynamicLayer`` reads this one
        alike. If something replaces ``keys`` (beam search, cropping), the next update makes
        its room again from what it finds."""

        keys: torch.Tensor
        values: torch.Tensor

        def __init__(self, room: int) -> None:
            super().__init__()
            self.room = room
            self.buffers: tuple[torch.Tensor, torch.Tensor] | None = None

        def update(
            self, key_states: torch.Tensor, value_states: torch.Tensor, *_: Any, **__: Any
        ) -> tuple[torch.Tensor, torch.Tensor]:
            if not self.is_initialized:
                self.lazy_initialization(key_states, value_states)
            filled = self.get_seq_length()
            end = filled + key_states.shape[-2]
            buffers = self.buffers
            if buffers is None or not _holds(buffers, self.keys, filled, end, key_states):
                buffers = (
                    _room_for(self.keys, key_states, max(end, self.room), filled),
                    _room_for(self.values, value_states, max(end, self.room), filled),
                )
                self.buffers = buffers
            keys, values = buffers
            keys[:, :, filled:end] = key_states
            values[:, :, filled:end] = value_states
            self.keys, self.values = keys[:, :, :end], values[:, :, :end]
            return self.keys, self.values

        def batch_select_indices(self, indices: torch.Tensor) -> None:
            """Only the rows ``indices``, each with its room (a batch shedding finished rows)."""
            buffers = self.buffers
            if buffers is None or self.keys.data_ptr() != buffers[0].data_ptr():
                super().batch_select_indices(indices)  # no room, or not the keys' room now
                return
            end = self.keys.shape[-2]
            keys, values = (b.index_select(0, indices) for b in buffers)
            self.buffers = (keys, values)
            self.keys, self.values = keys[:, :, :end], values[:, :, :end]

    return GrowingLayer


def _holds(
    buffers: tuple[torch.Tensor, torch.Tensor],
    keys: torch.Tensor,
    filled: int,
    end: int,
    new: torch.Tensor,
) -> bool:
    """Whether ``buffers`` are still the room ``keys`` views, with space for ``end`` columns."""
    if end > buffers[0].shape[2]:
        return False
    buffer = buffers[0]
    return (
        (filled == 0 or keys.data_ptr() == buffer.data_ptr())
        and buffer.shape[:2] == new.shape[:2]
        and buffer.dtype == new.dtype
    )


def _room_for(old: torch.Tensor, new: torch.Tensor, columns: int, filled: int) -> torch.Tensor:
    """A buffer of ``columns`` columns shaped as ``new``, holding ``old``'s ``filled`` first."""
    batch, heads, _, dim = new.shape
    buffer = new.new_empty((batch, heads, columns, dim))
    if filled:
        buffer[:, :, :filled] = old
    return buffer


def batch_cache(model: Any, room: int, reuse: Reuse) -> Any:
    """A cache for one turn's batch whose plain layers grow in place (``GrowingLayer``, with
    ``room`` columns made ahead; transformers' own with ``room`` 0), holding the reused
    prefixes first; a model whose layers are not all plain (sliding windows) gets transformers'
    own."""
    transformers = need("transformers")
    cache = transformers.DynamicCache(config=model.config)
    plain = transformers.cache_utils.DynamicLayer
    if room > 0 and all(type(layer) is plain for layer in cache.layers):
        cache.layers = [growing_layer()(room) for _ in cache.layers]
    for layer, (keys, values) in zip(cache.layers, reuse.layers or (), strict=False):
        layer.update(keys, values)
    return cache


class CallCaches:
    """Keys and values per call id, valid for the weights they were computed with."""

    def __init__(self, capacity: int = KEPT_CALLS) -> None:
        self.capacity = capacity
        self._kept: OrderedDict[str, Kept] = OrderedDict()
        self._weights: tuple[int, int] | None = None

    def reuse(
        self, model: Any, calls: Sequence[str], contexts: Sequence[Sequence[int]], device: str
    ) -> Reuse:
        """What each context can reuse, stacked into one left-padded batch cache."""
        self._check(model)
        found = [self._kept.get(call) for call in calls]
        lengths = [
            0 if k is None else _shared(k.ids, context, len(context) - 1)
            for k, context in zip(found, contexts, strict=True)
        ]
        width = max(lengths, default=0)
        if width == 0:
            return Reuse(None, 0, lengths)
        first = next(k for k in found if k is not None)
        layers = []
        for layer, pair in enumerate(first.layers):
            stacked = []
            for part, like in enumerate(pair):
                rows = like.new_zeros((len(calls), like.shape[0], width, like.shape[2]))
                for i, (k, n) in enumerate(zip(found, lengths, strict=True)):
                    if k is not None and n:
                        rows[i, :, width - n :] = k.layers[layer][part][:, :n]
                stacked.append(rows.to(device))
            layers.append((stacked[0], stacked[1]))
        return Reuse(layers, width, lengths)

    def keep(
        self,
        model: Any,
        calls: Sequence[str],
        ids: Sequence[list[int]],
        cache: Any,
        columns: Sequence[Sequence[int]],
        rows: Sequence[int] | None = None,
        batch: int = 0,
    ) -> None:
        """Keep row ``rows[i]`` of ``cache`` (row ``i`` by default) for ``calls[i]``: its tokens
        ``ids[i]``, whose keys and values are at the cache columns ``columns[i]`` (the rest of a
        row is padding, or tokens fed after the call's turn had ended). ``batch``: how many
        calls the turn's batch had (its calls are all kept, whether kept at once or in parts)."""
        self._check(model)
        if not _plain(cache):
            return
        rows = range(len(calls)) if rows is None else rows
        for i, call, row_ids, where in zip(rows, calls, ids, columns, strict=True):
            at = torch.tensor(list(where), dtype=torch.long, device=cache.layers[0].keys.device)
            layers = [
                (layer.keys[i].index_select(1, at), layer.values[i].index_select(1, at))
                for layer in cache.layers
            ]
            self._kept[call] = Kept(list(row_ids), layers)
            self._kept.move_to_end(call)
        while len(self._kept) > max(self.capacity, len(calls), batch):
            self._kept.popitem(last=False)

    def _check(self, model: Any) -> None:
        """Forget every kept key if the weights changed since they were computed."""
        now = _weights(model)
        if self._weights != now:
            self._kept.clear()
            self._weights = now

    def drop(self, call: str) -> None:
        self._kept.pop(call, None)

    def clear(self) -> None:
        self._kept.clear()

    def __len__(self) -> int:
        return len(self._kept)


def _shared(kept: Sequence[int], context: Sequence[int], limit: int) -> int:
    """How many leading tokens ``kept`` and ``context`` share, at most ``limit``."""
    n = 0
    for a, b in zip(kept, context[:limit], strict=False):
        if a != b:
            break
        n += 1
    return n


def _weights(model: Any) -> tuple[int, int]:
    """Which weights: the model object and the sum of its parameters' version counters (every
    in-place update, an optimizer's step included, bumps a tensor's ``_version``)."""
    return id(model), sum(int(p._version) for p in model.parameters())


def _plain(cache: Any) -> bool:
    """A cache whose layers are plain growing key/value pairs (sliding-window or state-space
    layers cannot be cut out by column, and are simply not kept)."""
    layers = getattr(cache, "layers", None) or []
    plain = (need("transformers").cache_utils.DynamicLayer, growing_layer())
    return bool(layers) and all(type(layer) in plain for layer in layers)
