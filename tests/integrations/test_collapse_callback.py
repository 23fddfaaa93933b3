"""The collapse check inside a TRL run: it fires on a policy that buys the frozen simulator's
satisfaction and stays quiet on one that does the task; a real GRPO run stops on it.

The fast tests drive the callback at its boundary (``on_step_end`` with transformers' own
``TrainerState`` and ``TrainerControl``) with two fixed policies: one that says the frozen
simulator's trigger phrase every turn (its satisfaction high, no field ever asked: gold 0), and
the scripted reference agent (asks for every field, clarifies, closes). The slow test runs the
tiny GRPO example on CPU with the callback attached to the real trainer.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("trl")
pytest.importorskip("transformers")

from transformers import TrainerControl, TrainerState

from sim2human.agents.base import Agent, AgentTurn, Observation
from sim2human.agents.scripted import reference_agent
from sim2human.diagnostics.rundir import load_run_dir
from sim2human.integrations.collapse_callback import CollapseCheck, real_callers
from sim2human.integrations.collapse_rule import CollapseRule
from sim2human.integrations.population import Population, population
from sim2human.simulators.kinds import speaks_real_words
from sim2human.store.layout import CHECKS_LOG, RunLayout, check_condition

ROOT = Path(__file__).parents[2]
STUDY = ROOT / "examples" / "collapse.yaml"


class Says:
    """A policy that says one line, whatever it hears."""

    name = "says"

    def __init__(self, text: str) -> None:
        self.text = text

    def act(self, observations: Sequence[Observation]) -> list[AgentTurn]:
        return [AgentTurn(text=self.text) for _ in observations]


def frozen() -> Population:
    return population(STUDY, condition="frozen-small")


def exploit(pop: Population) -> Agent:
    trigger = pop.members("train")[0].traits.quirks.trigger
    assert trigger
    return Says(trigger)


def train(check: CollapseCheck, steps: int) -> tuple[TrainerState, TrainerControl]:
    """The trainer's side of the boundary: ``on_step_end`` after every step until it stops."""
    state, control = TrainerState(), TrainerControl()
    for step in range(1, steps + 1):
        state.global_step = step
        control = check.on_step_end(None, state, control)
        if control.should_training_stop:
            break
    return state, control


def rows(state: TrainerState) -> list[dict[str, Any]]:
    return [r for r in state.log_history if "sim2human/collapse" in r]


def test_fires_on_a_collapsing_policy_and_stops_training(tmp_path: Path) -> None:
    pop = frozen()
    callers = real_callers(STUDY, 4)
    check = CollapseCheck(
        pop, out=tmp_path, every=2, real_callers=callers, agent=lambda m, t: exploit(pop)
    )
    state, control = train(check, 10)
    assert control.should_training_stop and check.stopped_at == 2 and state.global_step == 2
    [row] = rows(state)
    assert row["step"] == 2 and row["sim2human/collapse"] == 1.0
    # the frozen simulator is pleased, no held-out caller is served
    assert row["sim2human/train_proxy"] > 0.5 and row["sim2human/heldout_gold"] == 0.0
    assert row["sim2human/proxy_gap"] > 0.5 and "proxy exceeds" in check.checks[0].reasons[0]
    # the run directory: one condition per check, read as report and diagnose read it
    run = load_run_dir(tmp_path)
    assert run.all_problems() == []  # a trainer's checks are whole without a study.json
    [sub] = run.conditions[check_condition(2)]
    assert {e.split for e in sub.evals} == {"train", "heldout"}
    real = [e for e in sub.evals if speaks_real_words(e)]
    assert len(real) == len(callers) and {s.id for s in sub.heldout} >= {s.id for s in callers}
    logged = [json.loads(x) for x in (tmp_path / CHECKS_LOG).read_text().splitlines()]
    assert [(c["step"], c["collapse"]) for c in logged] == [(2, True)]


def test_stays_quiet_on_a_healthy_policy(tmp_path: Path) -> None:
    pop = frozen()
    agent = reference_agent(pop.scenario)
    check = CollapseCheck(pop, out=tmp_path, every=2, agent=lambda m, t: agent)
    state, control = train(check, 6)
    assert not control.should_training_stop and check.stopped_at is None
    assert [r["step"] for r in rows(state)] == [2, 4, 6]
    assert all(r["sim2human/judged"] == 1.0 and r["sim2human/collapse"] == 0.0 for r in rows(state))
    assert all(r["sim2human/heldout_gold"] > 0.8 for r in rows(state))
    assert sorted(load_run_dir(tmp_path).conditions) == [check_condition(s) for s in (2, 4, 6)]


def test_a_check_with_too_few_heldout_calls_is_not_judged(tmp_path: Path) -> None:
    pop = frozen()
    rule = CollapseRule(min_n=100)  # 12 held-out members x 2 calls: 24
    check = CollapseCheck(pop, out=tmp_path, every=1, rule=rule, agent=lambda m, t: exploit(pop))
    state, control = train(check, 2)
    assert not control.should_training_stop
    assert [r["sim2human/judged"] for r in rows(state)] == [0.0, 0.0]
    assert check.checks[0].headline.startswith("cannot judge step 1: 24 held-out")


def test_patience_and_warn_only(tmp_path: Path) -> None:
    pop = frozen()
    patient = CollapseCheck(
        pop,
        out=tmp_path / "patient",
        every=1,
        rule=CollapseRule(patience=2),
        agent=lambda m, t: exploit(pop),
    )
    assert train(patient, 5)[0].global_step == 2 and patient.stopped_at == 2
    warn = CollapseCheck(
        pop,
        out=tmp_path / "warn",
        every=1,
        rule=CollapseRule(stop=False),
        agent=lambda m, t: exploit(pop),
    )
    _, control = train(warn, 3)
    assert not control.should_training_stop and [c.collapse for c in warn.checks] == [True] * 3


def test_a_floor_fires_where_the_gap_does_not(tmp_path: Path) -> None:
    pop = frozen()
    silent = Says("...")  # pleases nobody and serves nobody: no gap, no drop, gold 0
    quiet = CollapseCheck(pop, out=tmp_path / "a", every=1, agent=lambda m, t: silent)
    assert not train(quiet, 1)[1].should_training_stop
    floor = CollapseRule(max_gap=None, max_drop=None, min_gold=0.5)
    low = CollapseCheck(pop, out=tmp_path / "b", every=1, rule=floor, agent=lambda m, t: silent)
    assert train(low, 1)[1].should_training_stop
    assert "under the 50 floor" in low.checks[0].reasons[0]


def example() -> Any:
    spec = importlib.util.spec_from_file_location(
        "trl_grpo_example", ROOT / "examples" / "trl_grpo.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_inside_a_real_grpo_run_it_logs_stores_and_stops(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from sim2human.cli.app import main

    pytest.importorskip("datasets")
    result = example().main(
        [
            "--steps", "3", "--group", "2", "--tokens", "8", "--out", str(tmp_path),
            "--check-every", "1", "--check-floor", "0.5", "--real-callers", "2",
        ]
    )  # fmt: skip
    # the untrained tiny model calls no tool: held-out gold 0, under the floor at the first check
    assert result["stopped_at"] == 1 and result["steps"] == 1
    logged = [r for r in result["log"] if "sim2human/collapse" in r]
    assert [(r["step"], r["sim2human/collapse"]) for r in logged] == [(1, 1.0)]
    checks = tmp_path / "checks"
    assert RunLayout(checks).sub_run(check_condition(1), 0).is_dir()
    capsys.readouterr()
    for verb in ("report", "diagnose", "view"):
        assert main([verb, str(checks)]) == 0, verb
    assert "step-000001" in capsys.readouterr().out


def test_the_policy_hears_the_call_as_its_grpo_rollouts_do(monkeypatch: pytest.MonkeyPatch) -> None:
    """``PolicyAgent`` rebuilds the chat TRL's tool loop would hold at this turn: the rows'
    system prompt, the opening line as the user message, each turn as a ``reply`` call and its
    answer; a turn without a call is silence."""
    from sim2human.integrations import trl
    from sim2human.integrations.rows import eval_rows
    from sim2human.integrations.trl import PolicyAgent, SimulatedUser, exchange

    pop = frozen()
    seen: list[list[dict[str, Any]]] = []
    answers = iter(["What is your date of birth?", None])

    def fake_reply(model: Any, tok: Any, messages: list[dict[str, Any]], n: int) -> str | None:
        seen.append(messages)
        return next(answers)

    monkeypatch.setattr(trl, "reply_call", fake_reply)
    row = eval_rows(pop, "train", 1)[0]
    env = SimulatedUser(pop, phase="eval")
    opening = env.reset(**row)
    agent = PolicyAgent(None, None, pop)
    first = agent.act([env._conv.observe()])[0]  # type: ignore[union-attr]
    assert first.text == "What is your date of birth?"
    heard = env.reply(first.text)
    second = agent.act([env._conv.observe()])[0]  # type: ignore[union-attr]
    assert second.text == "..."
    prompt = [*row["prompt"][:-1], {"role": "user", "content": opening}]
    assert seen == [prompt, [*prompt, *exchange(first.text, heard)]]
