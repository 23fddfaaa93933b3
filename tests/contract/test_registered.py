"""Every registered piece keeps its contract (``sim2human.checks``), and ``sim2human check``
reports a user's broken class with exit 1."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from sim2human.agents.policy import PolicyAgent
from sim2human.agents.scripted import ScriptedAgent
from sim2human.checks import check_agent, check_scenario, check_simulator
from sim2human.cli.app import main
from sim2human.scenarios.catalog import SCENARIOS, get_scenario
from sim2human.simulators import KINDS, build_simulator
from sim2human.simulators.base import QuirkPool, UserTurn
from sim2human.simulators.families import FAMILIES, get_family
from sim2human.simulators.persona import PersonaSimulator
from sim2human.types import Profile

SCENARIO = get_scenario("intake")
POOL = QuirkPool.from_acts(SCENARIO.acts)
PERSONA_FAMILIES = [n for n in FAMILIES if get_family(n).sample(0, POOL).kind == "persona"]


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_registered_scenarios(name: str) -> None:
    assert check_scenario(get_scenario(name)) == []


@pytest.mark.parametrize("family", PERSONA_FAMILIES)
def test_registered_persona_families(family: str) -> None:
    spec = get_family(family).sample(3, POOL)
    assert KINDS[spec.kind].build is not None
    assert check_simulator(lambda: build_simulator(spec, SCENARIO), SCENARIO) == []


def test_built_in_agents() -> None:
    spec = get_family("cooperative").sample(0, POOL)
    for agent in (ScriptedAgent(SCENARIO), PolicyAgent(SCENARIO, seed=0)):
        assert check_agent(agent, SCENARIO, lambda: build_simulator(spec, SCENARIO)) == []


class Moody(PersonaSimulator):
    """Breaks the contract: its satisfaction is outside [0, 1] and it answers at random."""

    def start(self, profile: Profile, rng: np.random.Generator) -> UserTurn:
        super().start(profile, rng)
        return UserTurn(text=str(np.random.default_rng().integers(10**9)))

    def satisfaction(self) -> float:
        return 1.5


def test_check_command_reports_a_broken_simulator(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "mine.py").write_text(
        "from test_registered import Moody as MyUser\n"
        "from sim2human.scenarios.intake.scenario import IntakeScenario as MyScenario\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    assert main(["check", "mine:MyUser"]) == 1
    out = capsys.readouterr().out
    assert "breaks the simulator contract" in out and "outside [0, 1]" in out
    assert main(["check", "mine:MyScenario"]) == 0
    assert "keeps the scenario contract" in capsys.readouterr().out
    assert main(["check", "mine:Nobody"]) == 2
    assert main(["check", "no_colon"]) == 2
    sys.modules.pop("mine", None)
