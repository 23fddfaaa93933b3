"""``support``: a restaurant, hotel or train booking after MultiWOZ 2.1, written only as a
scenario file shipped in the package; its replay family speaks real MultiWOZ users' turns;
`demo --scenario` runs it."""

from __future__ import annotations

import importlib.util
import re
from importlib import resources
from pathlib import Path

import pytest
import yaml

from sim2human import corpora
from sim2human.checks.crossing import check_everything
from sim2human.cli.app import DEMOS, main
from sim2human.corpora import multiwoz
from sim2human.experiments.study.config import load_study
from sim2human.experiments.study.playable import without_missing_corpus
from sim2human.experiments.study.results import load_study_result
from sim2human.rollout.conversation import Job, job_profile
from sim2human.scenarios.catalog import SCENARIOS, get_scenario
from sim2human.scenarios.files.scenario import FileScenario
from sim2human.simulators.base import QuirkPool
from sim2human.simulators.families import get_family
from sim2human.simulators.kinds import build_simulator
from sim2human.simulators.replay import ReplaySimulator, member_for
from sim2human.simulators.replay_families import unplayable
from sim2human.store.rundir import read_episodes
from tiny_study import TINY

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "multiwoz_support.py"
FILE = resources.files("sim2human.scenarios").joinpath("support", "scenario.yaml")
MULTIWOZ = Path(__file__).resolve().parents[2].parent / "shared" / "data" / multiwoz.FOLDER
needs_multiwoz = pytest.mark.skipif(
    not MULTIWOZ.is_dir(), reason=f"MultiWOZ corpus not at {MULTIWOZ}"
)
NO_POOL = QuirkPool(liked=(), triggers=())


@pytest.fixture
def corpus(monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(corpora.ENV, str(MULTIWOZ.parent))
    return MULTIWOZ


def test_support_is_a_packaged_scenario_file() -> None:
    scenario = get_scenario("support")
    assert isinstance(scenario, FileScenario) and scenario.name == "support"
    assert scenario.fields == (
        "domain",
        "task",
        "area",
        "pricerange",
        "food",
        "destination",
        "departure",
        "day",
        "people",
        "old_time",
        "time",
        "old_stay",
        "stay",
    )
    assert "support" in SCENARIOS
    text = FILE.read_text(encoding="utf-8")
    assert "MultiWOZ 2.1" in text and "CC BY 4.0" in text  # attribution in the file
    # the goals are rows, and no row is a test-split goal (those are the replay family's)
    rows = yaml.safe_load(text)["profiles"]["rows"]
    assert 200 <= len(rows) <= 400
    assert {r["domain"] for r in rows} == {"restaurant", "hotel", "train"}


@needs_multiwoz
@pytest.mark.usefixtures("corpus")
def test_the_profile_rows_are_what_the_script_writes_from_the_val_goals() -> None:
    """``scripts/multiwoz_support.py`` regenerates the rows (val goals only, every domain) and
    the station fields' say wordings (val user turns)."""
    spec = importlib.util.spec_from_file_location("multiwoz_support", SCRIPT)
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    found = script.goals()
    written = FILE.read_text(encoding="utf-8").split(script.BEGIN + "\n")[1]
    rows = written.split(script.END)[0].splitlines()[2:]
    assert rows == script.rows(found, script.vocabularies(found))
    # the stations' say wordings are the val split's commonest user turns that carry a marker
    support = get_scenario("support")
    assert isinstance(support, FileScenario)
    for field in script.STATIONS:
        says = script.say_forms(support, field)
        assert len(says) == 3 and list(support.spec.fields[field].say) == says


def test_the_support_file_passes_scenario_check(capsys: pytest.CaptureFixture[str]) -> None:
    with resources.as_file(FILE) as path:
        assert main(["scenario", "check", str(path)]) == 0
    assert "agent reference agent on support: every check passed" in capsys.readouterr().out


@needs_multiwoz
@pytest.mark.usefixtures("corpus")
def test_support_is_in_the_contract_crossing() -> None:
    """Every persona family, every kind (replay: a MultiWOZ member) and the reference agent."""
    reports = check_everything(get_scenario("support"))
    assert all(r.ok for r in reports), [f for r in reports for f in r.violations()]
    subjects = {r.subject for r in reports}
    assert {"cooperative on support", "reference agent on support"} <= subjects
    [kinds] = [r for r in reports if r.kind == "kinds"]
    checked = " ".join(f.check for f in kinds.findings)
    assert "multiwoz-heldout-" in checked and "multiwoz-val-" in checked


def test_a_tiny_support_study_runs_end_to_end(tmp_path: Path) -> None:
    study = tmp_path / "support.yaml"
    study.write_text(yaml.safe_dump({**TINY, "name": "support-tiny", "scenario": "support"}))
    run = tmp_path / "run"
    assert main(["study", str(study), "--out", str(run), "--workers", "1"]) == 0
    result = load_study_result(run)
    assert result.scenario == "support"
    episodes = list(read_episodes(next(run.rglob("episodes.jsonl"))))
    support = get_scenario("support")
    assert isinstance(support, FileScenario)
    assert episodes and all(set(e.profile) == set(support.applicable(e.profile)) for e in episodes)
    [reference] = result.reference
    assert reference.heldout_gold.mean > 0.5  # the task is solvable as written
    # times are said and read back as written ("19:30"), never as the vocabulary's name "19 30"
    said = [t.text for p in run.rglob("episodes.jsonl") for e in read_episodes(p) for t in e.turns]
    assert not [t for t in said if re.search(r"\b\d{1,2} \d\d\b", t)]
    assert any(re.search(r"\b\d{1,2}:\d\d\b", t) for t in said)


@needs_multiwoz
@pytest.mark.usefixtures("corpus")
def test_replay_members_speak_real_multiwoz_turns() -> None:
    scenario = get_scenario("support")
    assert unplayable(scenario) is None
    spec = get_family("multiwoz-heldout").sample(3, NO_POOL, temperature=0.0)
    member = member_for(spec, scenario)
    test_ids = {d.dialogue_id for d in multiwoz.load("test")}
    assert member.card.encounter_id in test_ids  # held out: a test-split call
    dialogue = next(d for d in multiwoz.load("test") if d.dialogue_id == member.card.encounter_id)
    real = {t.text for t in dialogue.turns if t.speaker == "user"}
    sim = build_simulator(spec, scenario)
    assert isinstance(sim, ReplaySimulator)
    profile = job_profile(Job(spec=spec, seed=0), scenario)
    assert profile == dict(member.card.values)
    opening = sim.start(profile, __import__("numpy").random.default_rng(0))
    assert opening.text in real and opening.tags == ("verbatim",)
    food = sim.reply("What type of food would you like?")
    assert food.tags[0] in ("verbatim", "adapted", "fallback")
    assert food.text in real or food.tags == ("adapted",)


def test_replay_of_multiwoz_refuses_intake_in_one_line() -> None:
    from sim2human.scenarios.intake.scenario import IntakeScenario
    from sim2human.scenarios.support.replay import unplayable as multiwoz_unplayable

    why = multiwoz_unplayable(IntakeScenario())
    assert why is not None and "support" in why and "\n" not in why


def test_demo_knows_each_scenarios_study() -> None:
    assert DEMOS["intake"] == "collapse.yaml" and DEMOS["support"] == "support.yaml"
    for study in DEMOS.values():
        assert resources.files("sim2human").joinpath("examples", study).is_file()
    here = Path(__file__).resolve().parents[2] / "examples" / "support.yaml"
    packaged = resources.files("sim2human").joinpath("examples", "support.yaml")
    assert here.read_text() == packaged.read_text()


def test_demo_refuses_an_unknown_scenario_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--scenario", "hotel", "--out", "/nonexistent/never"]) == 2
    err = capsys.readouterr().err.strip()
    known = "intake, support, negotiation"
    assert err == f"error: demo --scenario: no demo for 'hotel' (known: {known})"
    assert not Path("/nonexistent/never").exists()


def test_a_study_leaves_out_a_replay_family_whose_own_corpus_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ACI-Bench there, MultiWOZ not: support's real callers are left out with MultiWOZ's line
    (before, the check asked ACI-Bench only, and the study went on to fail on the corpus)."""
    (tmp_path / "aci-bench").mkdir()
    (tmp_path / "aci-bench" / "train.csv").write_text("dataset,encounter_id,dialogue,note\n")
    monkeypatch.setenv(corpora.ENV, str(tmp_path))
    with resources.as_file(resources.files("sim2human").joinpath("examples", "support.yaml")) as p:
        cfg = load_study(p)
    kept, line = without_missing_corpus(cfg)
    assert "multiwoz-heldout" in cfg.ensemble.heldout
    assert (
        "multiwoz-heldout" not in kept.ensemble.heldout
        and "multiwoz-heldout" not in kept.ensemble.members
    )
    assert line is not None and "MultiWOZ 2.1 corpus" in line and "\n" not in line
