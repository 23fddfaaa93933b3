"""``Episode.kind``: set from the member that played, and derived for episodes stored before."""

from __future__ import annotations

import json

import pytest

from sim2human.agents.scripted import ScriptedAgent
from sim2human.rollout.conversation import Job
from sim2human.rollout.play import play
from sim2human.scenarios.intake.scenario import IntakeScenario
from sim2human.simulators.base import QuirkPool
from sim2human.simulators.families import get_family
from sim2human.simulators.llm import llm_spec
from sim2human.types import Episode


def test_played_episodes_carry_their_member_s_kind(
    scenario: IntakeScenario, pool: QuirkPool
) -> None:
    spec = get_family("standard").sample(0, pool)
    (episode,) = play(ScriptedAgent(scenario), [Job(spec=spec, seed=1)], scenario, max_turns=20)
    assert episode.kind == "persona"
    assert Episode.model_validate_json(episode.model_dump_json()).kind == "persona"
    assert llm_spec(spec).kind == "llm"


@pytest.mark.parametrize(
    ("family", "kind"),
    [
        ("standard", "persona"),
        ("llm:chatty", "llm"),
        ("aci-heldout", "replay"),
        ("aci-train", "replay"),
        ("human", "human"),
        ("human-replay", "human-replay"),
    ],
)
def test_an_episode_stored_without_kind_reads_back_with_its_family_s(
    family: str, kind: str, scenario: IntakeScenario, pool: QuirkPool
) -> None:
    spec = get_family("standard").sample(0, pool)
    (episode,) = play(ScriptedAgent(scenario), [Job(spec=spec, seed=1)], scenario, max_turns=20)
    old = json.loads(episode.model_dump_json())
    del old["kind"]
    old["family"] = family
    assert Episode.model_validate_json(json.dumps(old)).kind == kind
    old["kind"] = "persona"  # a stored kind is never second-guessed
    assert Episode.model_validate(old).kind == "persona"
