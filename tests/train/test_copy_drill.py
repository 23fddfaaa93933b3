"""The copying drill: exchanges whose only lesson is copying what the caller said, and nothing an
agent says (so no phrasing is privileged before RL)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
import torch

from sim2human.agents.lm_models import tiny
from sim2human.agents.lm_policy import LMPolicy
from sim2human.scenarios.catalog import get_scenario
from sim2human.scenarios.tools import RECORD
from sim2human.train import copy_drill as drill_module
from sim2human.train.config import WarmStartConfig
from sim2human.train.copy_drill import (
    BATCH,
    EXCHANGES,
    copy_drill,
    drill_calls,
    drill_traces,
    read_copies,
    value_bounds,
)
from sim2human.types import ToolCall, Turn

CALLS = [
    SimpleNamespace(
        turns=[
            Turn(speaker="user", text="My back hurts since Tuesday."),
            Turn(speaker="agent", text="How bad is it, out of ten?"),
            Turn(speaker="user", text="Seven, and I take aspirin."),
        ]
    )
]
FIELDS = ("severity", "medications")


def test_each_record_copies_a_run_of_the_callers_words_and_the_agent_says_nothing() -> None:
    drills = drill_calls(CALLS, FIELDS, 50, seed=0)  # type: ignore[arg-type]
    heard = {w for t in CALLS[0].turns if t.speaker == "user" for w in t.text.split()}
    assert len(drills) == 50
    for d in drills:
        assert len(d.turns) == 2 * EXCHANGES
        for said, agent in zip(d.turns[::2], d.turns[1::2], strict=True):
            assert said.speaker == "user" and set(said.text.split()) <= heard
            assert agent.speaker == "agent" and agent.text == ""  # no agent line at all
            (call,) = agent.tool_calls
            assert call.name == RECORD and call.arguments["field"] in FIELDS
            value = str(call.arguments["value"])
            assert value.startswith(" ") and f"{value} " in f" {said.text} "  # a run, whole words


def test_some_exchanges_are_the_callers_own_turns_word_for_word_and_short_ones_fit() -> None:
    calls = [SimpleNamespace(turns=[*CALLS[0].turns, Turn(speaker="user", text="Yes.")])]
    turns = {t.text for t in calls[0].turns if t.speaker == "user"}
    drills = drill_calls(calls, FIELDS, 200, seed=0)  # type: ignore[arg-type]
    said = [t.text for d in drills for t in d.turns if t.speaker == "user"]
    verbatim = sum(s in turns for s in said) / len(said)
    assert abs(verbatim - drill_module.SENTENCES) < 0.1  # a random order is never a turn here
    values = [c.arguments["value"] for d in drills for t in d.turns for c in t.tool_calls]
    assert " Yes." in values  # a one-word turn is copied whole, not skipped or overrun


def test_every_run_copies_past_its_first_word_where_the_caller_said_two() -> None:
    # The words after a run's first are the copying lesson (the first is a choice, the end a
    # guess): one-word runs teach none of it, and the drill draws none from longer turns.
    drills = drill_calls(CALLS, FIELDS, 200, seed=0)  # type: ignore[arg-type]
    runs = [
        (len(said.text.split()), len(str(agent.tool_calls[0].arguments["value"]).split()))
        for d in drills
        for said, agent in zip(d.turns[::2], d.turns[1::2], strict=True)
    ]
    assert all(copied >= min(2, heard) for heard, copied in runs)
    assert max(copied for _, copied in runs) >= 5  # and some runs are long


def test_drills_are_drawn_from_the_seed() -> None:
    def values(seed: int) -> list[object]:
        drills = drill_calls(CALLS, FIELDS, 5, seed=seed)  # type: ignore[arg-type]
        return [c.arguments["value"] for d in drills for t in d.turns for c in t.tool_calls]

    assert values(0) == values(0) and values(0) != values(1)


def _policy() -> LMPolicy:
    texts = [t.text for t in CALLS[0].turns] * 20
    model, tok = tiny(texts, seed=0, sizes={"hidden": 32, "layers": 1, "heads": 2, "vocab": 300})
    return LMPolicy(model, tok, get_scenario("intake"))


def test_the_drill_takes_its_steps_on_the_exchanges_alone() -> None:
    policy = _policy()
    seen: list[int] = []
    log = copy_drill(
        policy,
        CALLS,  # type: ignore[arg-type]
        FIELDS,
        WarmStartConfig(copy_drill=3, lr=0.01),
        seed=0,
        progress=seen.append,
    )
    assert seen == [BATCH] * 3 and log.steps == 3 and len(log.loss) == len(log.copied) == 1
    drills = drill_calls(CALLS, FIELDS, 1, seed=0)  # type: ignore[arg-type]
    text = policy.tok.decode(drill_traces(policy, drills)[0].ids)
    assert text.count("<tool_call>") == drill_module.EXCHANGES  # the callers' words, the calls
    assert "system" not in text and "tool_response" not in text  # no prompt, no results
    assert copy_drill(policy, CALLS, FIELDS, WarmStartConfig(copy_drill=0), 0).steps == 0  # type: ignore[arg-type]


def test_the_drill_stops_at_the_first_reading_that_copies_and_runs_on_until_one_does(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(drill_module, "CHECK", 2)
    monkeypatch.setattr(drill_module, "CHECK_SEQUENCES", 4)
    cfg = WarmStartConfig(copy_drill=7, lr=0.01)
    monkeypatch.setattr(drill_module, "COPIES", 0.0)  # copies at once: one reading, then stop
    log = copy_drill(_policy(), CALLS, FIELDS, cfg, seed=0)  # type: ignore[arg-type]
    assert log.steps == 2 and len(log.copied) == 1
    monkeypatch.setattr(drill_module, "COPIES", 1.01)  # never copies: every step, read each 2
    log = copy_drill(_policy(), CALLS, FIELDS, cfg, seed=0)  # type: ignore[arg-type]
    assert log.steps == 7 and len(log.loss) == len(log.copied) == 4
    assert all(0.0 <= c <= 1.0 for c in log.copied)


def test_a_tokenizer_without_one_token_value_bounds_is_drilled_unread() -> None:
    class Plain:
        def get_vocab(self) -> dict[str, int]:
            return {'", "value": "': 5}  # the opening bound only

    assert value_bounds(Plain()) is None
    assert value_bounds(_policy().tok) is not None


class _Guessing:
    """A stand-in model whose most likely next token is ``guess(position, ids)``."""

    def __init__(self, guess: Any, vocab: int) -> None:
        self.guess, self.vocab = guess, vocab
        self.device = torch.device("cpu")

    def parameters(self) -> Any:
        return iter([torch.zeros(1)])

    def eval(self) -> None:
        pass

    def __call__(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> Any:
        logits = torch.zeros(*input_ids.shape, self.vocab)
        for b, row in enumerate(input_ids.tolist()):
            for i in range(len(row)):
                logits[b, i, self.guess(i, row)] = 1.0
        return SimpleNamespace(logits=logits)


def test_read_copies_counts_values_read_right_past_their_first_token() -> None:
    policy = _policy()
    bounds = value_bounds(policy.tok)
    assert bounds is not None
    record = ToolCall(name=RECORD, arguments={"field": "severity", "value": " take aspirin"})
    seqs = [
        SimpleNamespace(
            turns=[
                Turn(speaker="user", text="Seven, and I take aspirin."),
                Turn(speaker="agent", text="", tool_calls=(record,)),
            ]
        )
    ] * 2
    vocab = len(policy.tok)
    later = len(policy.tok.encode(" take aspirin", add_special_tokens=False)) - 1
    assert later >= 1

    def knowing(i: int, ids: list[int]) -> int:
        return ids[i + 1] if i + 1 < len(ids) else 0

    def first_only(i: int, ids: list[int]) -> int:
        return ids[i + 1] if i < len(ids) - 1 and ids[i] == bounds[0] else 0

    policy.model = _Guessing(knowing, vocab)
    read = read_copies(policy, drill_traces(policy, seqs), bounds)
    assert (read.values, read.first, read.continued, read.later_share) == (2, 2, 2, 1.0)
    policy.model = _Guessing(first_only, vocab)
    # " take" right, what follows it not
    read = read_copies(policy, drill_traces(policy, seqs), bounds)
    assert (read.values, read.first, read.continued, read.later_right) == (2, 2, 0, 0)
    assert read.later == 2 * later


def _record(field: str, value: str) -> ToolCall:
    return ToolCall(name=RECORD, arguments={"field": field, "value": value})


RECORDED = [
    SimpleNamespace(
        turns=[
            Turn(speaker="user", text="My back hurts since Tuesday."),
            Turn(speaker="agent", text="How bad?", tool_calls=(_record("complaint", " back"),)),
            Turn(speaker="user", text="Seven, and I take aspirin."),
            Turn(
                speaker="agent",
                text="Noted.",
                tool_calls=(_record("severity", " Seven"), _record("medications", " aspirin")),
            ),
            Turn(speaker="user", text="Thanks."),
            Turn(speaker="agent", text="Anything else?"),  # no record: not an answer
            Turn(speaker="user", text="No allergies."),
            Turn(speaker="agent", text="", tool_calls=(_record("allergies", " none"),)),
        ]
    )
]


def test_recorded_answers_pair_each_caller_turn_with_the_records_that_followed_it() -> None:
    answers = drill_module.recorded_answers(RECORDED[0])  # type: ignore[arg-type]
    assert [text for text, _ in answers] == [
        "My back hurts since Tuesday.",
        "Seven, and I take aspirin.",
        "No allergies.",
    ]
    assert [len(records) for _, records in answers] == [1, 2, 1]


def test_joined_exchanges_say_a_run_of_recorded_turns_at_once_with_the_references_records() -> None:
    """A caller who says several answers in one turn, recorded as the reference recorded each."""
    answers = drill_module.recorded_answers(RECORDED[0])  # type: ignore[arg-type]
    runs = {
        " ".join(t for t, _ in answers[i : j + 1]): tuple(
            c for _, r in answers[i : j + 1] for c in r
        )
        for i in range(len(answers))
        for j in range(i + 1, len(answers))
    }
    drills = drill_calls(RECORDED, FIELDS, 300, seed=0)  # type: ignore[arg-type]
    exchanges = [
        (said, agent)
        for d in drills
        for said, agent in zip(d.turns[::2], d.turns[1::2], strict=True)
    ]
    joined = [(said, agent) for said, agent in exchanges if said.text in runs]
    assert abs(len(joined) / len(exchanges) - drill_module.JOINED) < 0.05
    for said, agent in joined:
        assert agent.text == "" and agent.tool_calls == runs[said.text]  # in order, no line
    assert {said.text for said, _ in joined} == set(runs)  # every run of 2 or 3 turns is drawn


def test_joined_share_zero_draws_the_drill_of_calls_without_records() -> None:
    """The check sequences (random words only) and warm starts of calls without records are
    drawn as before joined exchanges existed."""
    bare = [SimpleNamespace(turns=[t for t in RECORDED[0].turns if t.speaker == "user"])]

    def turns(calls: Any, joined: float) -> list[tuple[str, tuple[ToolCall, ...]]]:
        drills = drill_calls(calls, FIELDS, 20, seed=3, joined=joined)
        return [(t.text, t.tool_calls) for d in drills for t in d.turns]

    assert turns(RECORDED, 0.0) == turns(bare, drill_module.JOINED)
    assert turns(RECORDED, drill_module.JOINED) != turns(bare, drill_module.JOINED)
