"""The copying drill: exchanges whose only lesson is copying what the caller said, and nothing an
agent says (so no phrasing is privileged before RL)."""

from __future__ import annotations

from types import SimpleNamespace

from sim2human.agents.lm_models import tiny
from sim2human.agents.lm_policy import LMPolicy
from sim2human.scenarios.tools import RECORD
from sim2human.train import copy_drill as drill_module
from sim2human.train.config import WarmStartConfig
from sim2human.train.copy_drill import BATCH, EXCHANGES, copy_drill, drill_calls
from sim2human.types import Turn

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


def test_the_drill_takes_its_steps_without_the_system_prompt_and_gives_it_back() -> None:
    texts = [t.text for t in CALLS[0].turns] * 20
    model, tok = tiny(texts, seed=0, sizes={"hidden": 32, "layers": 1, "heads": 2, "vocab": 300})
    policy = LMPolicy(model, tok, "You are a nurse.")
    seen: list[int] = []
    losses = copy_drill(
        policy,
        CALLS,  # type: ignore[arg-type]
        FIELDS,
        WarmStartConfig(copy_drill=3, lr=0.01),
        seed=0,
        progress=seen.append,
    )
    assert seen == [BATCH] * 3 and len(losses) == 1
    assert policy.system_prompt == "You are a nurse."
    assert copy_drill(policy, CALLS, FIELDS, WarmStartConfig(copy_drill=0), 0) == []  # type: ignore[arg-type]
