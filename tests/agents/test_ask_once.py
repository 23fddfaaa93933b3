"""The ask-once rule: a policy never asks again for a field its record holds, in play, in PPO's
loss and in a saved checkpoint; a scenario without fields refuses it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from sim2human.agents.ask_once import AskOnce
from sim2human.agents.policy import PolicyAgent, entropy
from sim2human.rollout.conversation import Conversation, Job
from sim2human.scenarios.catalog import get_scenario
from sim2human.scenarios.intake.scenario import IntakeScenario
from sim2human.simulators.base import QuirkPool
from sim2human.simulators.families import get_family


def _asks_for_filled(agent: PolicyAgent, family: str, calls: int) -> tuple[int, int]:
    """(asks for a field the record already held, agent turns) over ``calls`` calls."""
    scenario = agent.scenario
    spec = get_family(family).sample(0, QuirkPool.from_acts(scenario.acts))
    again = turns = 0
    for seed in range(calls):
        conv = Conversation.open(Job(spec=spec, seed=seed), scenario, 20)
        while not conv.done:
            obs = conv.observe()
            turn = agent.act([obs])[0]
            act = next(a for a in agent.acts if a.id == turn.act)
            about = act.about_in(obs.view) if act.kind in ("ask", "clarify") else None
            again += about is not None and obs.record[about] is not None
            turns += 1
            conv.step(turn)
    return again, turns


@pytest.mark.parametrize("name", ["intake", "support"])
def test_an_untrained_policy_with_the_rule_never_asks_again_for_a_filled_field(name: str) -> None:
    scenario = get_scenario(name)
    again, turns = _asks_for_filled(PolicyAgent(scenario, seed=3, ask_once=True), "chatty", 12)
    assert turns > 100 and again == 0
    again, _ = _asks_for_filled(PolicyAgent(scenario, seed=3), "chatty", 12)
    assert again > 0  # without it, the same untrained policy does


def test_held_back_acts_are_the_asks_and_clarifies_of_filled_fields() -> None:
    scenario = IntakeScenario()
    agent = PolicyAgent(scenario, seed=0, ask_once=True)
    rule = agent.net.ask_once
    assert isinstance(rule, AskOnce)
    nf = len(agent.featurise.fields)
    x = torch.zeros((2, agent.featurise.size))
    x[:, 1] = 1  # the second field filled, in both rows
    x[0, 3 * nf + 1 + 1] = 1  # row 0: that field asked last; row 1: the first (empty) one
    x[1, 3 * nf + 1 + 0] = 1
    held = rule(x)
    second = agent.featurise.fields[1]
    for j, act in enumerate(agent.acts):
        want_row0 = (act.kind == "ask" and act.field == second) or act.kind == "clarify"
        want_row1 = act.kind == "ask" and act.field == second
        assert bool(held[0, j]) == want_row0, act.id
        assert bool(held[1, j]) == want_row1, act.id


def test_held_back_acts_get_no_probability_no_gradient_and_the_rest_keep_their_odds() -> None:
    scenario = IntakeScenario()
    with_rule = PolicyAgent(scenario, seed=4, ask_once=True).net
    without = PolicyAgent(scenario, seed=4).net  # the same seeded weights
    x = torch.zeros((3, PolicyAgent(scenario).featurise.size))
    x[:, :3] = 1  # three fields filled
    held = with_rule.ask_once(x)  # type: ignore[misc]
    logits = with_rule.logits(x)
    p = torch.softmax(logits, -1)
    assert torch.all(p[held] == 0)
    q = torch.softmax(without.logits(x).masked_fill(held, float("-inf")), -1)
    torch.testing.assert_close(p, q)
    ent = entropy(logits)
    assert torch.isfinite(ent).all()
    ent.sum().backward()  # type: ignore[no-untyped-call]
    last = with_rule.actor[-1]
    assert isinstance(last, torch.nn.Linear) and last.weight.grad is not None
    rows_held = held.all(0)  # acts held back in every row get no gradient at all
    assert torch.all(last.weight.grad[rows_held] == 0)
    assert torch.any(last.weight.grad[~rows_held] != 0)


def test_a_saved_policy_keeps_the_rule_and_one_without_it_loads_without(tmp_path: Path) -> None:
    scenario = IntakeScenario()
    PolicyAgent(scenario, seed=2, ask_once=True).save(tmp_path / "a.pt")
    PolicyAgent(scenario, seed=2).save(tmp_path / "b.pt")
    assert PolicyAgent.load(tmp_path / "a.pt", scenario).net.ask_once is not None
    assert PolicyAgent.load(tmp_path / "b.pt", scenario).net.ask_once is None
    x = np.zeros((1, PolicyAgent(scenario).featurise.size), dtype=np.float32)
    x[0, 0] = 1
    shared = PolicyAgent(scenario, net=PolicyAgent.load(tmp_path / "a.pt", scenario).net)
    actions, _ = shared.decide(np.repeat(x, 500, 0))  # a player sharing the net shares the rule
    first = scenario.fields[0]
    assert not any(
        scenario.acts[int(a)].kind == "ask" and scenario.acts[int(a)].field == first
        for a in actions
    )


def test_a_study_of_a_scenario_without_fields_refuses_the_rule(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import yaml

    from sim2human.cli.app import main
    from tiny_study import TINY

    study = tmp_path / "s.yaml"
    study.write_text(
        yaml.safe_dump({**TINY, "scenario": "negotiation", "agent": {"ask_once": True}})
    )
    assert main(["study", str(study), "--out", str(tmp_path / "run"), "--check"]) == 2
    err = capsys.readouterr().err
    assert "agent.ask_once" in err and "negotiation" in err and "Traceback" not in err
    study.write_text(yaml.safe_dump({**TINY, "agent": {"ask_once": True}}))  # intake: fields
    assert main(["study", str(study), "--out", str(tmp_path / "run"), "--check"]) == 0
