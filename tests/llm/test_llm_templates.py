"""A user's own persona prompt template for ``llm`` members (``simulators.llm_templates``).

Loading (paths beside the study file, the text stored in the spec, one clear error per bad
file), rendering (the profile as variables) and a call against a scripted fake endpoint that
checks the system prompt the model was sent. The same against the embedded model is in
test_llm_live.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from sim2human.agents.scripted import ScriptedAgent
from sim2human.cli.app import main
from sim2human.errors import ConfigError
from sim2human.experiments.study.config import load_study
from sim2human.llm.client import EndpointConfig
from sim2human.llm.runtime import LLMRuntime, LLMSettings
from sim2human.rollout.conversation import MAX_TURNS
from sim2human.rollout.evaluate import evaluate
from sim2human.scenarios.intake.scenario import IntakeScenario
from sim2human.simulators.base import LLMParams, QuirkPool
from sim2human.simulators.families import get_family
from sim2human.simulators.llm import LLMMembers, llm_spec
from sim2human.simulators.llm_prompts import role_play as voice_of
from sim2human.simulators.llm_prompts import template_prompt
from sim2human.simulators.llm_templates import read_template
from sim2human.testing import FakeOpenAI, Reply, completion

SCENARIO = IntakeScenario()
POOL = QuirkPool.from_acts(SCENARIO.acts)
TEMPLATE = """You are {{ name }}, calling about {{ scenario }}.
{% if traits.emotion == "anxious" %}You are worried.{% endif %}
Your date of birth is {{ profile.dob }}.
Everything you know:
{{ facts }}
{{ manner }}
"""
STUDY = """name: own-prompt
scenario: intake
seeds: [0]
train: {{episodes: 64, batch_episodes: 32, epochs: 1, minibatch: 64}}
ensemble:
  train: [cooperative]
  heldout: [noisy-line]
  members_per_family: 1
  llm:
    heldout: {{families: [terse-guarded], members: 2, prompts: [{prompts}]}}
eval: {{episodes_per_member: 1, llm_episodes_per_member: 1}}
llm: {{endpoints: {{fake: {{base_url: "http://127.0.0.1:9/v1", model: fake}}}}}}
conditions:
  - name: frozen-mine
    sampler: fixed
    simulator: {{family: standard, seed: 1, temperature: 0, llm: {{prompt: {prompt}}}}}
"""


def write_study(folder: Path, prompt: str, prompts: str) -> Path:
    path = folder / "study.yaml"
    path.write_text(STUDY.format(prompt=prompt, prompts=prompts))
    return path


def test_template_files_beside_the_study_are_read_once_into_the_specs(tmp_path: Path) -> None:
    (tmp_path / "users").mkdir()
    (tmp_path / "users" / "mine.j2").write_text(TEMPLATE)
    cfg = load_study(write_study(tmp_path, "users/mine.j2", "plain, users/mine.j2"))
    fixed = cfg.conditions[0].simulator
    assert fixed is not None and fixed.llm is not None
    assert fixed.llm.prompt == "mine" and fixed.llm.template == TEMPLATE
    heldout = cfg.ensemble.llm.heldout  # type: ignore[union-attr]
    assert heldout is not None and heldout.prompts == ("plain", "mine")
    specs = heldout.draw(0, POOL, "heldout")
    assert [s.llm.template for s in specs if s.llm] == [None, TEMPLATE]
    assert "-mine-" in specs[1].id
    # The stored config needs no file: it validates again after the template is gone.
    (tmp_path / "users" / "mine.j2").unlink()
    again = LLMMembers.model_validate(json.loads(heldout.model_dump_json()))
    assert again == heldout


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("Hi {{ name }\n", "mine.j2:1: unexpected '}'"),
        ("Hi {{ name }}.\nYou live at {{ address }}.\n", "mine.j2:2: unknown variable 'address'"),
        ("{% for f in facts %}\n{{ f }}\n", "mine.j2:2: Unexpected end of template"),
        ("   \n", "mine.j2: the template is empty"),
    ],
)
def test_a_bad_template_is_one_line_naming_file_and_line(
    tmp_path: Path, text: str, message: str
) -> None:
    (tmp_path / "mine.j2").write_text(text)
    with pytest.raises(ConfigError) as err:
        load_study(write_study(tmp_path, "mine.j2", "plain"))
    assert message in str(err.value) and "\n" not in str(err.value)
    assert str(tmp_path) in str(err.value)


def test_a_missing_template_file_is_a_usage_error_of_the_study(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    study = write_study(tmp_path, "plain", "plain, nowhere/mine.j2")
    assert main(["study", str(study), "--out", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert "nowhere/mine.j2: no such prompt template" in err and "Traceback" not in err
    assert not (tmp_path / "run").exists()


def test_two_templates_of_one_name_are_refused(tmp_path: Path) -> None:
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "mine.j2").write_text(TEMPLATE)
    with pytest.raises(ConfigError, match="the name 'mine' is taken"):
        load_study(write_study(tmp_path, "plain", "a/mine.j2, b/mine.j2"))


def test_a_profile_key_the_scenario_lacks_fails_the_call_with_the_template_name() -> None:
    params = LLMParams(prompt="mine", template="{{ profile.favourite_colour }}")
    profile = SCENARIO.sample_profile(np.random.default_rng(0))
    traits = get_family("cooperative").sample(1, POOL).traits
    with pytest.raises(ConfigError, match=r"prompt template mine:.*favourite_colour"):
        template_prompt(
            voice_of(SCENARIO), params, "intake", "Ann", profile, SCENARIO.fields, traits
        )


def test_the_model_is_sent_the_users_own_prompt_with_the_profile_filled_in(
    tmp_path: Path,
) -> None:
    (tmp_path / "mine.j2").write_text(TEMPLATE)
    systems: list[str] = []

    def model(n: int, body: dict[str, Any]) -> Reply:
        systems.append(body["messages"][0]["content"])
        return Reply(body=completion("Yes, that's right."))

    base = get_family("anxious").sample(5, POOL, temperature=0.0)
    spec = llm_spec(base, prompt=str(tmp_path / "mine.j2"), endpoint="fake")
    assert spec.llm is not None and spec.llm.template == read_template(str(tmp_path / "mine.j2"))
    with FakeOpenAI(model) as fake:
        endpoint = EndpointConfig(base_url=fake.base_url, model="fake", timeout_s=5.0)
        settings = LLMSettings(endpoints={"fake": endpoint}, cache=None)
        with LLMRuntime.open(settings, {"fake"}, check=False) as rt:
            (ep,) = evaluate(
                ScriptedAgent(SCENARIO),
                [spec],
                SCENARIO,
                split="heldout",
                per_member=1,
                llm=rt,
                max_turns=MAX_TURNS,
            )
    system = systems[0]
    assert system.startswith("You are ") and "calling about intake" in system
    assert "You are worried." in system  # the anxious family's trait reached the template
    assert ep.profile["dob"] is not None
    assert "{{" not in system and "- " in system  # the facts block was filled in
    assert "Your date of birth is " in system and "{{" not in system
    assert ep.simulator_id == spec.id and ep.error is None


def test_a_fifo_named_as_a_template_is_refused_not_waited_on(tmp_path: Path) -> None:
    """A template path that is a FIFO would block a plain read forever."""
    import os

    os.mkfifo(tmp_path / "mine.j2")
    refused = r"mine\.j2: is a FIFO \(named pipe\), expected a prompt template"
    with pytest.raises(ConfigError, match=refused):
        load_study(write_study(tmp_path, "mine.j2", "plain"))
