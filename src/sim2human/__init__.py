"""sim2human: train and test conversational agents against populations of simulated users.

The names a user needs, importable from here; each is loaded on first use, so ``import
sim2human`` costs no torch. ``tests/test_public_api.py`` pins ``__all__``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sim2human.agents.base import Agent, AgentTurn, Observation
    from sim2human.agents.policy import PolicyAgent
    from sim2human.agents.scripted import ScriptedAgent
    from sim2human.errors import Sim2HumanError, UsageError
    from sim2human.experiments.study.config import StudyConfig, load_study
    from sim2human.experiments.study.runner import run_study
    from sim2human.population.ensemble import Ensemble
    from sim2human.rollout.conversation import Conversation, Job
    from sim2human.rollout.evaluate import evaluate
    from sim2human.rollout.play import play
    from sim2human.samplers.build import SAMPLERS, Sampler, build_sampler
    from sim2human.scenarios.core import Scenario
    from sim2human.scenarios.intake.scenario import IntakeScenario
    from sim2human.simulators.base import Simulator, SimulatorSpec, Traits
    from sim2human.simulators.families import FAMILIES, get_family
    from sim2human.simulators.kinds import KINDS, build_simulator
    from sim2human.train.config import PPOConfig
    from sim2human.types import Episode, Outcome, Termination

__version__ = "0.1.0"

_WHERE: dict[str, str] = {
    # what a conversation is
    "Episode": "sim2human.types",
    "Outcome": "sim2human.types",
    "Termination": "sim2human.types",
    "Scenario": "sim2human.scenarios.core",
    "IntakeScenario": "sim2human.scenarios.intake.scenario",
    # who plays the user
    "Simulator": "sim2human.simulators.base",
    "SimulatorSpec": "sim2human.simulators.base",
    "Traits": "sim2human.simulators.base",
    "KINDS": "sim2human.simulators.kinds",
    "build_simulator": "sim2human.simulators.kinds",
    "FAMILIES": "sim2human.simulators.families",
    "get_family": "sim2human.simulators.families",
    # who plays the agent
    "Agent": "sim2human.agents.base",
    "AgentTurn": "sim2human.agents.base",
    "Observation": "sim2human.agents.base",
    "ScriptedAgent": "sim2human.agents.scripted",
    "PolicyAgent": "sim2human.agents.policy",
    # populations and who plays next
    "Ensemble": "sim2human.population.ensemble",
    "Sampler": "sim2human.samplers.build",
    "SAMPLERS": "sim2human.samplers.build",
    "build_sampler": "sim2human.samplers.build",
    # playing and evaluating
    "Job": "sim2human.rollout.conversation",
    "Conversation": "sim2human.rollout.conversation",
    "play": "sim2human.rollout.play",
    "evaluate": "sim2human.rollout.evaluate",
    # training and studies
    "PPOConfig": "sim2human.train.config",
    "StudyConfig": "sim2human.experiments.study.config",
    "load_study": "sim2human.experiments.study.config",
    "run_study": "sim2human.experiments.study.runner",
    # errors
    "Sim2HumanError": "sim2human.errors",
    "UsageError": "sim2human.errors",
}

__all__ = [
    "FAMILIES",
    "KINDS",
    "SAMPLERS",
    "Agent",
    "AgentTurn",
    "Conversation",
    "Ensemble",
    "Episode",
    "IntakeScenario",
    "Job",
    "Observation",
    "Outcome",
    "PPOConfig",
    "PolicyAgent",
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


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(importlib.import_module(_WHERE[name]), name)
    raise AttributeError(f"module 'sim2human' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_WHERE})
