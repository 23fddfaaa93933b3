"""Condition roles (defaults, validation) and study.json as a typed ``StudyResult``."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
import yaml

from planted_runs import study_result, study_row
from sim2human.errors import RunDirError, UsageError
from sim2human.experiments.study.config import load_study, parse_study
from sim2human.experiments.study.results import load_study_result, write_study_result


def study(*conditions: dict[str, Any]) -> dict[str, Any]:
    return {"name": "t", "seeds": [0], "conditions": list(conditions)}


FROZEN = {"name": "one", "sampler": "fixed", "simulator": {"family": "standard"}}


def test_roles_default_from_the_sampler_and_can_be_set() -> None:
    cfg = parse_study(
        study(
            FROZEN,
            {"name": "u", "sampler": "uniform"},
            {"name": "r", "sampler": "randomized"},
            {"name": "p", "sampler": "plr"},
            {"name": "j", "sampler": "uniform", "role": "candidate", "compare_to": "u"},
        )
    )
    roles = {c.name: (c.role, c.compare_to) for c in cfg.conditions}
    assert roles == {
        "one": ("frozen", None),
        "u": ("baseline", None),
        "r": ("candidate", None),
        "p": ("candidate", None),
        "j": ("candidate", "u"),
    }


@pytest.mark.parametrize("target", ["nope", "u"])
def test_compare_to_must_name_another_condition(target: str) -> None:
    with pytest.raises(UsageError, match=f"condition 'u': compare_to '{target}' is not another"):
        parse_study(study(FROZEN, {"name": "u", "sampler": "uniform", "compare_to": target}))


def test_an_unknown_role_is_a_config_error() -> None:
    with pytest.raises(UsageError, match=r"conditions\.0\.role"):
        parse_study(study({**FROZEN, "role": "hero"}))


def test_the_examples_say_what_each_condition_is() -> None:
    path = resources.files("sim2human").joinpath("examples", "collapse.yaml")
    with resources.as_file(path) as p:
        cfg = load_study(p, quick=True)
    roles = {c.name: c.role for c in cfg.conditions}
    assert roles == {
        "frozen-small": "frozen",
        "frozen-large": "frozen",
        "ensemble-uniform": "baseline",
        "ensemble-randomized": "candidate",
        "ensemble-randomized+perturb": "candidate",
        "ensemble-randomized+perturb+human": "candidate",
    }


def test_study_result_round_trip(tmp_path: Path) -> None:
    result = study_result(
        study_row("a", sampler="fixed", role="frozen", heldout_curve=[[10, 0.5]]),
        study_row("b", sampler="uniform", role="baseline", compare_to="a"),
        reference=[study_row("scripted", episodes_trained=0)],
    )
    write_study_result(tmp_path, result)
    assert load_study_result(tmp_path) == result
    stored = json.loads((tmp_path / "study.json").read_text())
    assert "llm_accounting" not in stored and "role" not in stored["reference"][0]  # as given
    assert stored["conditions"][0]["heldout_curve"] == [[10, 0.5]]


def test_an_old_study_json_takes_roles_from_its_config(tmp_path: Path) -> None:
    old = study_result(study_row("a", sampler="fixed"), study_row("b", sampler="uniform")).dump()
    assert all("role" not in row for row in old["conditions"])  # as written before roles
    (tmp_path / "study.json").write_text(json.dumps(old))
    assert [r.role for r in load_study_result(tmp_path).conditions] == ["frozen", "baseline"]
    cfg = study(
        {"name": "a", "sampler": "fixed", "simulator": {"family": "standard"}},
        {"name": "b", "sampler": "uniform", "role": "candidate", "compare_to": "a"},
    )
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(cfg))
    b = load_study_result(tmp_path).conditions[1]
    assert (b.role, b.compare_to) == ("candidate", "a")


def test_a_study_json_without_role_or_sampler_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "study.json").write_text(
        json.dumps({**study_result().dump(), "conditions": [study_row("a")]})
    )
    with pytest.raises(RunDirError, match="'a' has neither a role nor a sampler"):
        load_study_result(tmp_path)
    unknown = {**study_row("a", role="frozen"), "x": 1}
    (tmp_path / "study.json").write_text(
        json.dumps({**study_result().dump(), "conditions": [unknown]})
    )
    with pytest.raises(RunDirError, match=r"study\.json: conditions\.0\.x"):
        load_study_result(tmp_path)
