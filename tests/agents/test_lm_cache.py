"""Keys and values kept across a call's turns: the same calls as reading every turn's whole
context again, a fraction of the tokens read, nothing stale after an update, and only the
prefix a context really shares is reused. Keys written into room made ahead (``GrowingLayer``)
give the same calls as transformers' cache, which copies them at every token."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from sim2human.agents import lm_cache, lm_policy
from sim2human.agents.lm_cache import CallCaches, growing_layer
from sim2human.agents.lm_models import IM_END, tiny
from sim2human.agents.lm_policy import LMPolicy
from sim2human.experiments.study.config import load_study
from sim2human.experiments.study.world import StudyWorld
from sim2human.rollout.evaluate import evaluate

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def world() -> StudyWorld:
    return StudyWorld.build(load_study(ROOT / "examples" / "lm-collapse.yaml", quick=True))


@pytest.fixture(scope="module")
def model_and_tok() -> tuple[Any, Any]:
    texts = ["Hi, my back hurts.", "How bad is it, out of 10?", "About seven.", "Bye."] * 20
    return tiny(texts, seed=0, sizes={"hidden": 48, "layers": 2, "heads": 2, "vocab": 400})


def play(world: StudyWorld, model: Any, tok: Any, **settings: Any) -> tuple[list[Any], int]:
    """Four calls on training members: each turn's words and tool calls, and the tokens the
    model read to write them."""
    read: list[int] = []
    hook = model.model.embed_tokens.register_forward_hook(
        lambda _m, inputs, _o: read.append(int(inputs[0].numel()))
    )
    try:
        policy = LMPolicy(model, tok, world.scenario, max_new_tokens=16, **settings)
        episodes = evaluate(
            policy,
            world.ensemble.train[:2],
            world.scenario,
            split="train",
            per_member=2,
            max_turns=world.max_turns,
        )
    finally:
        hook.remove()
    turns = [[(t.speaker, t.text, t.tool_calls) for t in e.turns] for e in episodes]
    return turns, sum(read)


@pytest.mark.parametrize("keep_traces", [False, True])
@pytest.mark.parametrize("temperature", [0.0, 1.0])
def test_kept_keys_write_the_calls_a_whole_reading_writes_from_a_fraction_of_the_tokens(
    world: StudyWorld, model_and_tok: tuple[Any, Any], keep_traces: bool, temperature: float
) -> None:
    model, tok = model_and_tok
    settings = {"keep_traces": keep_traces, "temperature": temperature}
    whole, read_whole = play(world, model, tok, keep_keys=False, **settings)
    kept, read_kept = play(world, model, tok, keep_keys=True, **settings)
    assert kept == whole
    assert sum(len(t) for t in whole) > 4 * 4  # calls of several turns, so reuse was possible
    assert read_kept < read_whole / 3


def test_an_update_makes_every_kept_key_stale(
    world: StudyWorld, model_and_tok: tuple[Any, Any]
) -> None:
    model, tok = model_and_tok
    policy = LMPolicy(model, tok, world.scenario, temperature=0, max_new_tokens=4)
    context = [*policy.written_trace([]).ids, 5, 6, 7]
    policy.sample([context], [np.random.default_rng(0)], ["call-1"])
    assert policy._caches.reuse(model, ["call-1"], [[*context, 9]], "cpu").lengths[0] > 0
    weight = next(model.parameters())
    with torch.no_grad():
        weight.add_(0.0)  # an optimizer's step is an in-place update like this one
    assert policy._caches.reuse(model, ["call-1"], [[*context, 9]], "cpu").lengths == [0]
    assert len(policy._caches) == 0


def test_only_the_prefix_a_context_shares_is_reused_and_its_last_token_is_read_again(
    model_and_tok: tuple[Any, Any],
) -> None:
    model, _ = model_and_tok
    caches = CallCaches(capacity=2)
    out = model(input_ids=torch.tensor([[4, 5, 6, 7]]), use_cache=True)
    caches.keep(model, ["a"], [[4, 5, 6, 7]], out.past_key_values, [[0, 1, 2, 3]])
    lengths = caches.reuse(model, ["a", "b"], [[4, 5, 9, 9], [4, 5]], "cpu").lengths
    assert lengths == [2, 0]  # "b" was never kept
    reuse = caches.reuse(model, ["a"], [[4, 5, 6, 7]], "cpu")
    assert reuse.lengths == [3] and reuse.width == 3  # the last token starts the turn
    key = out.past_key_values.layers[0].keys[0, :, :3]
    assert reuse.layers is not None and torch.equal(reuse.layers[0][0][0], key)
    for call in "bcd":
        caches.keep(model, [call], [[4]], out.past_key_values, [[0]])
    assert len(caches) == 2  # the oldest are dropped past the capacity


@pytest.mark.parametrize("temperature", [0.0, 1.0])
def test_keys_grown_in_place_write_the_calls_transformers_cache_writes(
    world: StudyWorld, model_and_tok: tuple[Any, Any], temperature: float
) -> None:
    model, tok = model_and_tok
    copied, _ = play(world, model, tok, grow_in_place=False, temperature=temperature)
    grown, _ = play(world, model, tok, grow_in_place=True, temperature=temperature)
    assert grown == copied


def _stopping_now_and_then(model: Any, stop: int) -> Any:
    """Make a random tiny model end its turns at scattered steps, as a trained one does: its
    next token is the stop token where the last token's id plus its position is a multiple of
    7 (a function of the row alone, whichever rows share its batch)."""

    def hook(_m: Any, _args: Any, kwargs: dict[str, Any], out: Any) -> None:
        ids = kwargs["input_ids"]
        if ids.shape[1] == 1:  # a decoding step
            logits = out.logits[:, -1]
            now = (ids[:, 0] + kwargs["position_ids"][:, 0]) % 7 == 0
            logits[:, stop] = torch.where(now, logits.max(-1).values + 1, logits[:, stop])

    return model.register_forward_hook(hook, with_kwargs=True)


@pytest.mark.parametrize("grow_in_place", [False, True])
@pytest.mark.parametrize("temperature", [0.0, 1.0])
def test_shedding_finished_rows_from_the_decoding_batch_writes_the_same_calls(
    world: StudyWorld,
    model_and_tok: tuple[Any, Any],
    monkeypatch: pytest.MonkeyPatch,
    grow_in_place: bool,
    temperature: float,
) -> None:
    """Each row keeps its keys, its mask and its positions when others leave: the same calls
    (a shed batch can round a logit otherwise, by 3e-6 at most measured; these draws are not
    that close to a tie)."""
    model, tok = model_and_tok
    settings = {"grow_in_place": grow_in_place, "temperature": temperature, "keep_traces": True}
    rows: list[int] = []  # the rows of each decoding step (one token each)
    hooks = [
        _stopping_now_and_then(model, tok.convert_tokens_to_ids(IM_END)),
        model.model.embed_tokens.register_forward_hook(
            lambda _m, inputs, _o: rows.append(len(inputs[0])) if inputs[0].shape[1] == 1 else None
        ),
    ]
    try:
        monkeypatch.setattr(lm_policy, "DROP_FINISHED", 2.0)  # never: all decode to the end
        whole, _ = play(world, model, tok, **settings)
        decoded_whole = sum(rows)
        rows.clear()
        monkeypatch.setattr(lm_policy, "DROP_FINISHED", 0.01)  # at each row's end
        shed, _ = play(world, model, tok, **settings)
    finally:
        for hook in hooks:
            hook.remove()
    assert sum(rows) < decoded_whole  # finished rows were shed
    assert shed == whole


def test_a_growing_layer_outgrows_its_room_and_survives_its_keys_being_replaced() -> None:
    layer = growing_layer()(room=3)
    parts = [torch.randn(2, 1, n, 4) for n in (2, 1, 2)]  # the third outgrows the room
    for part in parts:
        keys, values = layer.update(part, -part)
    assert torch.equal(keys, torch.cat(parts, 2)) and torch.equal(values, -keys)
    layer.keys, layer.values = keys[:1].clone(), values[:1].clone()  # as a beam search does
    more = torch.randn(1, 1, 1, 4)
    keys, _ = layer.update(more, -more)
    assert torch.equal(keys, torch.cat([k[:1] for k in parts] + [more], 2))


def test_a_batch_kept_in_parts_keeps_every_call_past_the_capacity(
    model_and_tok: tuple[Any, Any],
) -> None:
    """Rows shed from a decoding batch are kept when they finish, the rest at the end: none of
    the batch's calls is dropped to make room for another of them."""
    model, _ = model_and_tok
    caches = CallCaches(capacity=2)
    out = model(input_ids=torch.tensor([[4, 5]] * 4), use_cache=True)
    parts = (["a", "b", "c"], [0, 2, 3]), (["d"], [1])
    for calls, rows in parts:
        ids, columns = [[4, 5]] * len(calls), [[0, 1]] * len(calls)
        caches.keep(model, calls, ids, out.past_key_values, columns, rows, batch=4)
    assert len(caches) == 4


def test_a_later_round_keeps_the_keys_of_every_call_of_its_turn(
    world: StudyWorld, model_and_tok: tuple[Any, Any]
) -> None:
    """A turn's second round plays only the calls that called tools; the others' keys, kept by
    its first round, must stay for their next turn (they were evicted down to 16: a call then
    read its whole context again, 2.4x the tokens of a played call)."""
    model, tok = model_and_tok
    policy = LMPolicy(model, tok, world.scenario, temperature=0, max_new_tokens=2)
    n = lm_cache.KEPT_CALLS + 4
    contexts = [[*policy.written_trace([]).ids, 5 + i] for i in range(n)]
    names = [f"call-{i}" for i in range(n)]
    rngs = [np.random.default_rng(0)] * n
    policy.sample(contexts, rngs, names, in_flight=n)
    policy.sample(contexts[:2], rngs[:2], names[:2], in_flight=n)
    assert len(policy._caches) == n
    policy.sample(contexts[:2], rngs[:2], names[:2])  # a turn of two calls: the rest may go
    assert len(policy._caches) == lm_cache.KEPT_CALLS
