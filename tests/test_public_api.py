"""The curated public API: ``sim2human.__all__`` is pinned, every name resolves to the object
its home module defines, and importing the package imports no torch."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

import sim2human

PUBLIC = [
    "AgentTurn",
    "Agent",
    "Conversation",
    "Ensemble",
    "Episode",
    "FAMILIES",
    "IntakeScenario",
    "Job",
    "KINDS",
    "Observation",
    "Outcome",
    "PPOConfig",
    "PolicyAgent",
    "SAMPLERS",
    "Sampler",
    "Scenario",
    "ScriptedAgent",
    "Sim2HumanError",
    "Simulator",
    "SimulatorSpec",
    "StudyConfig",
    "Termination",
    "Traits",
    "UsageError",
    "__version__",
    "build_sampler",
    "build_simulator",
    "evaluate",
    "get_family",
    "load_study",
    "play",
    "run_study",
]


def test_all_is_pinned() -> None:
    assert sorted(sim2human.__all__) == sorted(PUBLIC)
    assert len(set(sim2human.__all__)) == len(sim2human.__all__)
    assert set(sim2human.__all__) == {"__version__", *sim2human._WHERE}


@pytest.mark.parametrize("name", [n for n in PUBLIC if n != "__version__"])
def test_every_public_name_is_its_home_modules_object(name: str) -> None:
    home = importlib.import_module(sim2human._WHERE[name])
    assert getattr(sim2human, name) is getattr(home, name)
    assert name in dir(sim2human)


def test_unknown_names_are_attribute_errors() -> None:
    with pytest.raises(AttributeError, match="no_such_name"):
        _ = sim2human.no_such_name  # type: ignore[attr-defined]


def test_importing_the_package_imports_no_torch() -> None:
    code = "import sys, sim2human; print('torch' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
