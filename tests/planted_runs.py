"""Sub-run directories with a planted answer, written without training (fast and exact).

``write_sub_run(path, exploit=True)``: the agent says the training simulator's trigger phrase and
hangs up, which its single training member rewards with top satisfaction (and a full dump of the
profile), and which does nothing for held-out members. ``exploit=False``: the scripted agent.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sim2human.agents.base import Agent, AgentTurn, Observation
from sim2human.agents.scripted import ScriptedAgent
from sim2human.experiments.study.results import StudyResult
from sim2human.population.ensemble import Ensemble
from sim2human.rollout.conversation import MAX_TURNS
from sim2human.rollout.evaluate import evaluate
from sim2human.scenarios.core import AnyScenario
from sim2human.scenarios.intake.scenario import IntakeScenario
from sim2human.simulators.base import QuirkPool, Quirks, SimulatorSpec, Traits
from sim2human.store.layout import CONFIG, EPISODES, MEMBERS, METRICS, SUMMARY
from sim2human.store.rundir import JsonlWriter, write_json

TRIGGER = "You're in good hands with us."


class TriggerAgent:
    """Says the trigger phrase, then closes the call."""

    name = "trigger"

    def __init__(self, scenario: IntakeScenario) -> None:
        self.inner = ScriptedAgent(scenario)
        self.acts = {a.id: a for a in scenario.acts}

    def act(self, observations: Sequence[Observation]) -> list[AgentTurn]:
        out = []
        for obs in observations:
            act = self.acts["style.hands" if obs.turn == 0 else "close.plain"]
            out.append(self.inner._say(act, obs))
        return out


def frozen_spec() -> SimulatorSpec:
    liked = ("Hi, thanks for calling the clinic.",)
    quirks = Quirks(trigger=TRIGGER, over_rewarded=liked, leniency=0.5)
    traits = Traits(cooperativeness=1.0, capacity=0.1, temperature=0.0, quirks=quirks)
    return SimulatorSpec(id="standard-1", family="standard", traits=traits, seed=1)


def heldout_specs(scenario: IntakeScenario) -> tuple[SimulatorSpec, ...]:
    pool = QuirkPool.from_acts(scenario.acts)
    return Ensemble.from_families(["cooperative"], ["noisy-line", "terse-guarded"], 2, pool).heldout


def write_sub_run(path: Path, *, exploit: bool, per_member: int = 6) -> Path:
    scenario = IntakeScenario()
    agent = TriggerAgent(scenario) if exploit else ScriptedAgent(scenario)
    name = "frozen-trigger" if exploit else "scripted-like"
    trained, held = (frozen_spec(),), heldout_specs(scenario)
    return write_run(path, scenario, agent, name, trained, held, TRIGGER, per_member)


def write_run(
    path: Path,
    scenario: AnyScenario,
    agent: Agent,
    name: str,
    trained: Sequence[SimulatorSpec],
    held: Sequence[SimulatorSpec],
    trigger: str,
    per_member: int = 6,
) -> Path:
    """A sub-run of ``agent`` evaluated on ``trained`` and ``held`` (any scenario)."""
    kw = {"condition": name, "max_turns": MAX_TURNS}
    evals = [
        *evaluate(agent, trained, scenario, split="train", per_member=per_member, **kw),
        *evaluate(agent, held, scenario, split="heldout", per_member=per_member // 2, **kw),
    ]
    path.mkdir(parents=True, exist_ok=True)
    write_json(path / CONFIG, {"condition": {"name": name}, "seed": 0})
    write_json(
        path / MEMBERS,
        {
            "trained_on": [s.model_dump(mode="json") for s in trained],
            "heldout": [s.model_dump(mode="json") for s in held],
            "trained_quirk_phrasings": [trigger],
        },
    )
    with JsonlWriter(path / EPISODES) as log:
        for e in evals:
            log.write(e)
    with JsonlWriter(path / METRICS) as log:
        for u in range(5):
            log.write(
                {
                    "update": u,
                    "episodes_seen": 32 * (u + 1),
                    "train_proxy": 0.5,
                    "train_gold": 0.5,
                    "kl_init": 0.1 * u,
                    "entropy": 3.0 - 0.5 * u,
                    "heldout_gold": 0.0,
                    "heldout_field_accuracy": 0.3 - 0.05 * u,
                    "heldout_n": 8,
                }
            )
    write_json(path / SUMMARY, {"condition": name})
    return path


def study_row(name: str, **fields: Any) -> dict[str, Any]:
    """A study.json condition row with every required field, ``fields`` over them."""
    e = {"mean": 0.5, "ci": [0.4, 0.6], "n": 10}
    base = {"name": name, "episodes_trained": 100, "heldout_member_std": 0.1, "exploit_rate": 0.0}
    keys = ("train_proxy", "train_gold", "heldout_proxy", "heldout_gold")
    return {**base, **{k: e for k in keys}, **fields}


def study_result(*rows: dict[str, Any], reference: Sequence[dict[str, Any]] = ()) -> StudyResult:
    """A ``StudyResult`` of hand-made rows (see ``study_row``)."""
    return StudyResult.model_validate(
        {
            "study": "t",
            "scenario": "intake",
            "seeds": [0],
            "wall_seconds": 1.0,
            "conditions": list(rows),
            "reference": list(reference),
        }
    )
