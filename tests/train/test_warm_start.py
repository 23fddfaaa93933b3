"""The warm start's corpus: what the reference records (the shortest run of the caller's words
that reads as the value, so the model copies what it heard), and whether the policy's token limit
holds the turns it learns to write."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from sim2human.agents.lm_chat import calls_text
from sim2human.agents.lm_models import tiny
from sim2human.agents.lm_policy import LMPolicy
from sim2human.experiments.study.config import load_study
from sim2human.experiments.study.lm_condition import turns_cut
from sim2human.experiments.study.world import StudyWorld
from sim2human.scenarios.catalog import get_scenario
from sim2human.scenarios.tools import RECORD, open_desk, read_value, use_tools
from sim2human.train.config import WarmStartConfig
from sim2human.train.warm_start import (
    corpus_texts,
    fine_tune,
    reference_calls,
    shortest_span,
    turn_tokens,
    written_value,
)
from sim2human.types import ToolCall, Turn

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.mark.parametrize(
    ("field", "said", "span"),
    [
        (
            "medications",
            "JJust amlodipine and carvedilol, I take those every day.",
            "amlodipine and carvedilol",
        ),
        ("dob", "No, I don't have any conditions. My birthday is 13 June 1942.", "13 June 1942"),
        ("severity", "Prohably 5 out of 10.", "5"),
    ],
)
def test_the_shortest_run_of_the_callers_words_that_reads_as_the_value(
    field: str, said: str, span: str
) -> None:
    intake = get_scenario("intake")
    value = read_value(intake, field, said)  # type: ignore[arg-type]
    assert value is not None
    assert shortest_span(intake, field, said, value) == span  # type: ignore[arg-type]
    assert read_value(intake, field, span) == value  # type: ignore[arg-type]


def test_words_that_do_not_say_the_value_give_no_span() -> None:
    intake = get_scenario("intake")
    assert shortest_span(intake, "medications", "Okay, sure.", ("aspirin",)) is None  # type: ignore[arg-type]


def test_the_reference_records_a_few_of_the_callers_own_words() -> None:
    world = StudyWorld.build(load_study(EXAMPLES / "lm-collapse.yaml", quick=True))
    calls = reference_calls(
        world.scenario, world.ensemble.train, WarmStartConfig(episodes=40), 0, 20
    )
    copied, words = 0, []
    for e in calls:
        heard = ""
        for t in e.turns:
            if t.speaker != "agent":
                heard = t.text
                continue
            for call in t.tool_calls:
                if call.name == RECORD:
                    value = str(call.arguments["value"])
                    assert value.startswith(" ")  # written_value's space
                    value = value.strip()
                    copied += value in heard
                    words.append(len(value.split()))
    assert copied > 0.9 * len(words)  # copied from what the caller just said
    assert np.median(words) <= 3  # a note, not the caller's whole turn (median 9 words before)


def _holds(ids: list[int], run: list[int]) -> bool:
    return any(ids[i : i + len(run)] == run for i in range(len(ids) - len(run) + 1))


def test_a_recorded_value_is_written_in_the_tokens_the_caller_said() -> None:
    """Copying is copying tokens: without the space, the value's first word after the opening
    quote is another token than the one heard ("am" + "lodipine" for " amlodipine")."""
    said = "I take amlodipine and carvedilol every day."
    words = written_value("amlodipine and carvedilol")
    record = ToolCall(name=RECORD, arguments={"field": "medications", "value": words})
    _, tok = tiny([said, calls_text([record])] * 20)
    value = tok.encode(" amlodipine and carvedilol", add_special_tokens=False)
    assert _holds(tok.encode(said, add_special_tokens=False), value)
    assert _holds(tok.encode(calls_text([record]), add_special_tokens=False), value)
    intake = get_scenario("intake")
    desk = use_tools(intake, open_desk(intake), [record])
    assert desk.working["medications"] == ("amlodipine", "carvedilol")  # the space is not read


def test_the_tiny_tokenizer_writes_a_number_digit_by_digit() -> None:
    said = "My birthday is 28/2/1982, and it hurts 7 out of 10."
    _, tok = tiny([said] * 50)
    pieces = [tok.decode([i]) for i in tok.encode(" 1982 10", add_special_tokens=False)]
    assert [p.strip() for p in pieces if p.strip()] == ["1", "9", "8", "2", "1", "0"]


def test_turn_tokens_are_what_the_policy_writes_in_each_round() -> None:
    record = ToolCall(name=RECORD, arguments={"field": "severity", "value": "7"})
    turns = [
        Turn(speaker="user", text="My back hurts."),
        Turn(speaker="agent", text="How bad is it?"),
        Turn(speaker="user", text="Seven."),
        Turn(speaker="agent", text="Thanks, bye.", tool_calls=(record,)),
    ]
    sizes = {"hidden": 32, "layers": 1, "heads": 2, "vocab": 400}
    model, tok = tiny([t.text for t in turns] * 20, seed=0, sizes=sizes)
    policy = LMPolicy(model, tok, get_scenario("intake"))
    said = ["How bad is it?", calls_text([record]), "Thanks, bye."]  # the calls, then the words
    expected = [len(tok.encode(s, add_special_tokens=False)) + 1 for s in said]  # + its end
    assert turn_tokens(policy, [SimpleNamespace(turns=turns)]) == expected  # type: ignore[list-item]


@pytest.mark.parametrize("steps", [1, 9, 10, 11])
def test_fine_tuning_takes_any_number_of_steps(steps: int) -> None:
    # torch's one-cycle schedule, with its rise a tenth of the steps, divides by zero at ten
    turns = [Turn(speaker="user", text="My back hurts."), Turn(speaker="agent", text="How bad?")]
    sizes = {"hidden": 16, "layers": 1, "heads": 2, "vocab": 300}
    model, tok = tiny([t.text for t in turns] * 20, seed=0, sizes=sizes)
    calls = [SimpleNamespace(turns=turns)] * steps
    cfg = WarmStartConfig(episodes=steps, epochs=1, lr=0.01, batch=1)
    losses = fine_tune(LMPolicy(model, tok, get_scenario("intake")), calls, cfg, seed=0)  # type: ignore[arg-type]
    assert len(losses) == 1 and np.isfinite(losses[0])


@pytest.mark.parametrize("example", ["lm-collapse.yaml", "lm-support.yaml"])
def test_the_examples_token_limit_holds_their_warm_starts_turns(example: str) -> None:
    cfg = load_study(EXAMPLES / example, quick=True)
    world = StudyWorld.build(cfg)
    calls = reference_calls(
        world.scenario, world.ensemble.train, WarmStartConfig(episodes=100), 0, world.max_turns
    )
    model, tok = tiny(corpus_texts(calls, world.scenario), seed=0)
    lengths = np.asarray(turn_tokens(LMPolicy(model, tok, world.scenario), calls))
    meta = {"turn_tokens": {"p99": float(np.percentile(lengths, 99)), "max": int(lengths.max())}}
    assert turns_cut(meta, cfg.agent.max_new_tokens) is None  # type: ignore[union-attr]
    cut = turns_cut(meta, 48)  # the examples' limit before: it cut every call's read-back
    assert cut is not None and "max_new_tokens 48" in cut
