"""The contract checks: everything registered passes them, and each check catches its fault."""

from __future__ import annotations

import random
import textwrap
from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest

from aci_data import aci_env, needs_aci
from sim2human.agents.policy import PolicyAgent
from sim2human.agents.scripted import Plan, ScriptedAgent
from sim2human.checks import check_agent, check_sampler, check_scenario, check_simulator
from sim2human.checks.crossing import check_everything
from sim2human.cli.app import main
from sim2human.population.ensemble import Ensemble
from sim2human.rollout.solvability import solvability
from sim2human.samplers.build import SAMPLERS, build_sampler
from sim2human.scenarios.catalog import SCENARIOS
from sim2human.scenarios.intake.scenario import IntakeScenario
from sim2human.simulators.base import QuirkPool, SimulatorSpec, UserTurn
from sim2human.simulators.families import FAMILIES, REPLAY_FAMILIES, get_family
from sim2human.simulators.kinds import build_simulator
from sim2human.simulators.persona import PersonaSimulator
from sim2human.simulators.replay_families import corpus_missing, playable_families
from sim2human.testing import ScriptedUser, TinyScenario, scripted_spec
from sim2human.types import Episode, Record

MAX_TURNS = 20
__all__ = ["aci_env"]


def failed(report: object) -> list[str]:
    return [f.check for f in report.violations()]  # type: ignore[attr-defined]


@pytest.mark.parametrize("scenario", [IntakeScenario(), TinyScenario()], ids=lambda s: s.name)
def test_every_scenario_passes(scenario: object) -> None:
    report = check_scenario(scenario)  # type: ignore[arg-type]
    assert report.ok, "\n".join(report.lines())


@pytest.mark.parametrize("family", sorted(set(FAMILIES) - set(REPLAY_FAMILIES)))
def test_every_persona_family_passes(family: str, scenario: IntakeScenario) -> None:
    if (why := corpus_missing([family])) is not None:  # retrieved-aci reads ACI-Bench in place
        pytest.skip(why)
    pool = QuirkPool.from_acts(scenario.acts)
    for seed in range(2):
        spec = get_family(family).sample(seed, pool)
        report = check_simulator(lambda spec=spec: build_simulator(spec, scenario), scenario)
        assert report.ok, "\n".join(report.lines())


@needs_aci
@pytest.mark.usefixtures("aci_env")
def test_replay_families_pass(scenario: IntakeScenario) -> None:
    families = [f.name for f in playable_families(scenario)]  # MultiWOZ's play support
    assert {"aci-train", "aci-heldout"} <= set(families)
    for family in families:
        spec = get_family(family).sample(0, QuirkPool(liked=(), triggers=()))
        report = check_simulator(lambda spec=spec: build_simulator(spec, scenario), scenario)
        assert report.ok, "\n".join(report.lines())


def test_the_scripted_user_passes_on_the_tiny_scenario() -> None:
    tiny = TinyScenario()
    report = check_simulator(lambda: ScriptedUser(tiny), tiny)
    assert report.ok, "\n".join(report.lines())


@pytest.mark.parametrize("make", [ScriptedAgent, PolicyAgent], ids=["scripted", "policy"])
def test_every_agent_passes(make: type, scenario: IntakeScenario) -> None:
    pool = QuirkPool.from_acts(scenario.acts)
    specs = [get_family(f).sample(0, pool) for f in ("cooperative", "noisy-line")]
    report = check_agent(make(scenario), scenario, specs, max_turns=MAX_TURNS)
    assert report.ok, "\n".join(report.lines())


@pytest.mark.parametrize("name", SAMPLERS)
def test_every_sampler_passes(name: str, scenario: IntakeScenario) -> None:
    pool = QuirkPool.from_acts(scenario.acts)
    ensemble = Ensemble.from_families(["cooperative", "chatty"], [], 2, pool, 0)
    fixed = get_family("standard").sample(1, pool)
    args = {
        "must": {"warmup_episodes": 8, "every_episodes": 8},
        "evolve": {"every_updates": 1},
    }.get(name)

    def make() -> object:
        return build_sampler(
            name,
            ensemble,
            pool,
            fixed,
            args=args,
            scenario=scenario,
            seed=3,
            solvable=solvability(scenario, MAX_TURNS),
        )

    report = check_sampler(make, scenario, max_turns=MAX_TURNS)  # type: ignore[arg-type]
    assert report.ok, "\n".join(report.lines())


# ------------------------------------------------------------------ each check catches a fault


class PeekingSimulator(PersonaSimulator):
    """Scores a transcript by its gold outcome: a judge that rewards what it cannot know."""

    def judge(self, episode: Episode) -> float:
        return float(episode.gold.success)


class MoodySimulator(PersonaSimulator):
    """Answers from the process-wide random module: the same seed does not give the same call."""

    def reply(self, agent_text: str) -> UserTurn:
        turn = super().reply(agent_text)
        return turn.model_copy(update={"text": turn.text + "!" * random.randint(0, 3)})


class EndlessSimulator(PersonaSimulator):
    def reply(self, agent_text: str) -> UserTurn:
        return super().reply(agent_text).model_copy(update={"done": False})


class UnhappySimulator(PersonaSimulator):
    def satisfaction(self) -> float:
        return 1.5


@pytest.mark.parametrize(
    ("cls", "fault"),
    [
        (PeekingSimulator, "judge never reads the gold outcome"),
        (MoodySimulator, "the same seed and agent turns give the same call"),
        (EndlessSimulator, "a closing agent turn ends the call"),
        (UnhappySimulator, "replies are UserTurns; satisfaction a number in [0, 1] after each"),
    ],
)
def test_each_simulator_fault_is_caught(cls: type, fault: str, scenario: IntakeScenario) -> None:
    spec = get_family("cooperative").sample(0, QuirkPool.from_acts(scenario.acts))
    report = check_simulator(lambda: cls(spec, scenario), scenario)
    assert fault in failed(report)  # an out-of-range score also breaks the call it judges


class ForgetfulScenario(TinyScenario):
    def extract(self, user_text: str, record: Record, expecting: str | None) -> Record:
        record.update(super().extract(user_text, record, expecting))  # mutates the caller's
        return record


class DeafScenario(TinyScenario):
    def extract(self, user_text: str, record: Record, expecting: str | None) -> Record:
        return dict(record)


def test_each_scenario_fault_is_caught() -> None:
    assert failed(check_scenario(ForgetfulScenario())) == [
        "hear_user, hear_agent: a new state, the given one untouched",
        "extract: a new record, input untouched",
    ]
    assert failed(check_scenario(DeafScenario())) == [
        "say then extract: the scenario hears its own users"
    ]


class SilentAgent:
    name = "silent"

    def act(self, observations: list[object]) -> list[object]:
        from sim2human.agents.base import AgentTurn

        return [AgentTurn(text="  ") for _ in observations]


def test_an_agent_fault_is_caught(scenario: IntakeScenario) -> None:
    spec = get_family("cooperative").sample(0, QuirkPool.from_acts(scenario.acts))
    report = check_agent(SilentAgent(), scenario, [spec], max_turns=4)  # type: ignore[arg-type]
    assert failed(report) == ["every agent turn is non-empty text"]


# ------------------------------------------------------------------------- sim2human check


def test_the_command_passes_fails_and_refuses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "my_sims.py").write_text(
        textwrap.dedent("""
        from sim2human.simulators.persona import PersonaSimulator

        class Peeking(PersonaSimulator):
            def judge(self, episode):
                return float(episode.gold.success)
    """)
    )
    monkeypatch.chdir(tmp_path)
    assert main(["check", "sim2human.testing:TinyScenario"]) == 0
    assert main(["check", "sim2human.agents.scripted:ScriptedAgent"]) == 0
    assert main(["check", "my_sims:Peeking"]) == 1
    assert "FAIL judge never reads the gold outcome" in capsys.readouterr().out
    assert main(["check", "no_such_module:X"]) == 2
    assert main(["check", "my_sims"]) == 2
    assert main(["check", "my_sims:Nope"]) == 2
    capsys.readouterr()
    # another task: the piece is checked on the scenario named, which must exist
    on_support = ["check", "sim2human.agents.scripted:ScriptedAgent", "--scenario", "support"]
    assert main(on_support) == 0 and "violation" not in capsys.readouterr().out
    assert main([*on_support[:2], "--scenario", "no-such-task"]) == 2


def test_scripted_spec_is_a_plain_member() -> None:
    spec = scripted_spec(3)
    assert isinstance(spec, SimulatorSpec) and spec.seed == 3
    user = ScriptedUser(TinyScenario(), spec)
    user.start({"size": "large", "topping": "cheese", "mode": "pickup"}, np.random.default_rng(0))
    user.reply("What size would you like?")
    assert user.satisfaction() == pytest.approx(1 / 3)


# --------------------------------------------------- every piece on every registered scenario


class BareScenario(TinyScenario):
    """Asks and a close only: no greeting, clarification, prompt or read-back to say."""

    acts = tuple(a for a in TinyScenario.acts if a.kind in ("ask", "close"))


class NamedPlanScenario(TinyScenario):
    """Names the scripted agent's read-back itself, wrongly (no act has that id)."""

    reference_plan: ClassVar[dict[str, str]] = {"confirm": "confirm.readback"}


@pytest.mark.parametrize(
    "scenario",
    [*(make() for make in SCENARIOS.values()), BareScenario()],
    ids=[*SCENARIOS, "bare"],
)
def test_every_piece_passes_on_every_registered_scenario(scenario: object) -> None:
    """Every persona family, every kind that plays without a person or a network, and the
    reference agent, on each scenario (pizza's family draws and scripted agent crashed)."""
    reports = check_everything(scenario)
    assert all(r.ok for r in reports), "\n".join(line for r in reports for line in r.lines())
    families = {r.subject.split(" on ")[0] for r in reports if r.kind == "family"}
    assert families == set(FAMILIES) - set(REPLAY_FAMILIES)
    assert any(r.kind == "agent" and r.findings for r in reports)


def test_the_scripted_agent_reads_intakes_plan_off_its_acts(scenario: IntakeScenario) -> None:
    """The plan by kind picks the acts the agent always said on intake (its episodes stay)."""
    plan = Plan.of(scenario)
    said = [plan.greet, plan.clarify, plan.repeat, plan.prompt, plan.confirm, plan.close]
    assert [a.id for a in said if a is not None] == [
        "greet.plain",
        "clarify.simple",
        "clarify.repeat",
        "prompt.silence",
        "confirm.readback",
        "close.plain",
    ]
    assert {f: a.id for f, a in plan.ask.items()} == {f: f"ask.{f}.plain" for f in scenario.fields}


def test_a_bad_reference_plan_is_caught() -> None:
    reports = check_everything(NamedPlanScenario())
    agent = next(r for r in reports if r.kind == "agent")
    assert failed(agent) == ["the scenario gives a reference agent"]
    assert "no act 'confirm.readback'" in agent.findings[0].detail


def test_the_command_checks_every_piece_on_a_scenario(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["check", "sim2human.testing:TinyScenario"]) == 0
    out = capsys.readouterr().out
    assert "family cooperative on pizza: every check passed" in out
    assert "agent reference agent on pizza: every check passed" in out
    assert "skip llm: the scenario cannot have llm users: it has no voice for llm users" in out
