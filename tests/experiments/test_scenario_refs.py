"""A study's ``scenario:``: a registered name, a scenario file beside the study, ``module:Name``
of a Python class outside the package, or a packaged entry point; every bad value one line."""

from __future__ import annotations

import json
import sys
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
import yaml

from sim2human.agents.scripted import ScriptedAgent
from sim2human.cli.app import main
from sim2human.experiments.study.config import load_study
from sim2human.experiments.study.world import StudyWorld
from sim2human.integrations.gym import make_env
from sim2human.rollout.conversation import Job
from sim2human.rollout.play import play
from sim2human.scenarios.catalog import get_scenario, known_scenario
from sim2human.scenarios.refs import allowing
from sim2human.types import Episode
from sim2human.webapp.card import card_lines
from tiny_study import TINY

SKELETON = resources.files("sim2human.scenarios").joinpath("skeleton")
MODULE = '''
from sim2human.scenarios.intake.scenario import IntakeScenario
from sim2human.testing import TinyScenario


class MyIntake(IntakeScenario):
    """Intake, as a user's own class."""


class Pizza(TinyScenario):
    pass


def not_a_class():
    return None


class NotAScenario:
    pass
'''
SMALL: dict[str, Any] = {
    **TINY,
    "train": {"episodes": 32, "batch_episodes": 32, "epochs": 1},
    "eval": {"episodes_per_member": 1, "bootstrap": 100},
}


def scenario_file(folder: Path, name: str = "booking") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    text = SKELETON.joinpath("scenario.yaml").read_text(encoding="utf-8")
    (folder / "areas.txt").write_text(SKELETON.joinpath("areas.txt").read_text(encoding="utf-8"))
    path = folder / f"{name}.yaml"
    path.write_text(text.replace("__NAME__", name), encoding="utf-8")
    return path


def study_file(folder: Path, scenario: str, **over: Any) -> Path:
    path = folder / "study.yaml"
    path.write_text(yaml.safe_dump({**SMALL, "scenario": scenario, **over}))
    return path


@pytest.fixture
def my_tasks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A module of the user's own, importable from the working directory (as for python -m)."""
    folder = tmp_path / "work"
    folder.mkdir()
    (folder / "my_tasks.py").write_text(MODULE)
    monkeypatch.chdir(folder)
    yield folder
    sys.modules.pop("my_tasks", None)


def test_a_file_beside_the_study_is_stored_absolute(tmp_path: Path) -> None:
    scenario_file(tmp_path / "tasks")
    cfg = load_study(study_file(tmp_path, "tasks/booking.yaml"))
    assert cfg.scenario == str((tmp_path / "tasks" / "booking.yaml").resolve())
    world = StudyWorld.build(cfg)
    assert world.scenario.name == cfg.scenario
    # the file's two triggers, held apart: the first for training and frozen members
    assert world.pool.triggers == ("It's an absolute delight to help you today!",)
    assert world.heldout_pool is not None
    assert world.heldout_pool.triggers == ("You're one of our most valued guests.",)
    assert known_scenario(cfg.scenario) == cfg.scenario  # a stored reference resolves again


def test_quick_overrides_name_a_file_beside_the_study_too(tmp_path: Path) -> None:
    scenario_file(tmp_path / "tasks")
    path = study_file(tmp_path, "intake", quick={"scenario": "tasks/booking.yaml"})
    assert load_study(path).scenario == "intake"
    cfg = load_study(path, quick=True)
    assert cfg.scenario == str((tmp_path / "tasks" / "booking.yaml").resolve())


def test_a_python_class_is_known_by_module_and_name(my_tasks: Path) -> None:
    with allowing(my_tasks):  # a reader's --scenario-path; a study file allows its cwd itself
        assert known_scenario("my_tasks:Pizza") == "my_tasks:Pizza"
        pizza = get_scenario("my_tasks:Pizza")
    assert pizza.name == "my_tasks:Pizza" and pizza.fields == ("size", "topping", "mode")
    cfg = load_study(study_file(my_tasks, "my_tasks:MyIntake"))
    world = StudyWorld.build(cfg)
    jobs = [Job(spec=s, seed=k) for s in world.ensemble.heldout[:2] for k in range(2)]
    played = play(ScriptedAgent(world.scenario), jobs, world.scenario, max_turns=30)
    assert {e.scenario for e in played} == {"my_tasks:MyIntake"}
    assert sum(e.gold.success for e in played) >= 2


def test_a_packaged_scenario_is_found_by_its_entry_point(
    my_tasks: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    info = my_tasks / "my_tasks-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: my-tasks\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[sim2human.scenarios]\nmy-intake = my_tasks:MyIntake\n")
    monkeypatch.syspath_prepend(str(my_tasks))
    assert known_scenario("my-intake") == "my-intake"
    assert get_scenario("my-intake").name == "my-intake"


@pytest.mark.parametrize(
    ("scenario", "message"),
    [
        (
            "hotel-booking",
            "unknown scenario 'hotel-booking' (known: intake, negotiation, pizza, support); "
            "or give a",
        ),
        ("nowhere.yaml", "scenario: {work}/nowhere.yaml: no such scenario file"),
        ("bad.yaml", "scenario: {work}/bad.yaml:1: schema_version: 7 is not supported"),
        ("no_such_module:X", "scenario: scenario 'no_such_module:X': cannot import"),
        ("my_tasks:Nope", "scenario: scenario 'my_tasks:Nope': 'my_tasks' has no 'Nope'"),
        ("my_tasks:not_a_class", "a scenario class, got function"),
        ("my_tasks:NotAScenario", "NotAScenario is not a scenario class (it has no"),
        ("my_tasks:", "scenario: scenario 'my_tasks:': expected module:Name"),
    ],
)
def test_a_bad_scenario_value_is_one_line(
    my_tasks: Path, capsys: pytest.CaptureFixture[str], scenario: str, message: str
) -> None:
    (my_tasks / "bad.yaml").write_text("schema_version: 7\n")
    path = study_file(my_tasks, scenario)
    assert main(["study", str(path), "--check"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert err.startswith(f"error: {path}: ")
    assert message.format(work=my_tasks.resolve()) in err


def test_a_yaml_scenario_outside_the_package_runs_a_study_end_to_end(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The issue's test: a scenario written only as a YAML file in a temporary folder:
    ``scenario check``, a tiny study, its report, its diagnosis, stress, the call page's card,
    an export, the gym env."""
    path = scenario_file(tmp_path / "tasks")
    assert main(["scenario", "check", str(path)]) == 0
    out = tmp_path / "run"
    study = study_file(tmp_path, "tasks/booking.yaml")
    assert main(["study", str(study), "--out", str(out), "--workers", "1"]) == 0
    summary = json.loads((out / "study.json").read_text())
    assert summary["scenario"] == str(path.resolve())
    rows = {r["name"]: r for r in summary["reference"]}
    assert rows["scripted"]["heldout_gold"]["mean"] >= 0.8  # the task is solvable
    assert main(["report", str(out)]) == 0
    assert "booking.yaml" in (out / "report.md").read_text()
    assert main(["diagnose", str(out)]) == 0
    stressed(out, tmp_path / "stress")
    card = card_lines(get_scenario(str(path.resolve())), job_of(out).profile)
    assert [label for label, _ in card][:2] == ["Part of town", "Party size"]
    assert main(["export", str(out), "--format", "sb3-buffer", "--out", str(tmp_path / "b")]) == 0
    assert main(["export", str(out), "--format", "openai-chat", "--out", str(tmp_path / "c")]) == 0
    first = json.loads((tmp_path / "c").read_text().splitlines()[0])["messages"][0]
    assert first["role"] == "system" and first["content"].startswith("You are Host")
    env = make_env(study, condition="ensemble-uniform")
    assert env.act_ids[0] == "greet.plain"
    env.reset(seed=0)
    for act in ("greet.plain", "ask.area.plain", "close.plain"):
        *_, term, _, info = env.step(env.act_ids.index(act))
    assert term and info["gold"] == 0.0  # closed before most fields were asked
    assert info["termination"] == "completed"
    capsys.readouterr()


def test_a_python_scenario_as_module_and_name_runs_the_same_way(
    my_tasks: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same commands on ``module:Name`` of a class in the user's own module."""
    out = my_tasks / "run"
    study = study_file(my_tasks, "my_tasks:MyIntake")
    assert main(["study", str(study), "--out", str(out), "--workers", "1"]) == 0
    assert json.loads((out / "study.json").read_text())["scenario"] == "my_tasks:MyIntake"
    assert main(["report", str(out)]) == 0 and main(["diagnose", str(out)]) == 0
    stressed(out, my_tasks / "stress")
    card = dict(card_lines(get_scenario("my_tasks:MyIntake"), job_of(out).profile))
    assert "Date of birth" in card
    assert main(["export", str(out), "--format", "openai-chat", "--out", str(my_tasks / "c")]) == 0
    env = make_env(study, condition="ensemble-uniform")
    env.reset(seed=0)
    *_, info = env.step(env.act_ids.index("close.plain"))
    assert info["termination"] in ("completed", "hung_up")
    capsys.readouterr()


def stressed(run: Path, out: Path) -> None:
    """``stress RUN`` at its smallest: one perturbation, one severity, one episode a member."""
    argv = ["stress", str(run), "--out", str(out), "--workers", "1", "--grid", "1"]
    argv += ["--perturbations", "typos", "--episodes-per-member", "1"]
    assert main(argv) == 0
    assert "scripted" in json.loads((out / "stress.json").read_text())["agents"]


def job_of(run: Path) -> Episode:
    """The first held-out episode a run stored (its hidden profile is a card to play)."""
    episodes = next((run / "conditions").glob("*/seed-0/episodes.jsonl"))
    return Episode.model_validate_json(episodes.read_text().splitlines()[0])
