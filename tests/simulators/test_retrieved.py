"""``retrieved-aci``: persona members saying real train patients' turns for their lines, read
from ACI-Bench in place through the pointers its cache holds, and ``sim2human retrieve-family``,
which picks the turns (the acceptance rule on handmade turns)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import numpy as np
import pytest

from aci_data import aci_env, needs_aci
from sim2human.agents.scripted import ScriptedAgent
from sim2human.checks.crossing import check_family
from sim2human.cli.app import main
from sim2human.errors import ConfigError, UsageError
from sim2human.experiments.study.config import load_study
from sim2human.experiments.study.playable import without_missing_corpus
from sim2human.rollout.evaluate import evaluate
from sim2human.scenarios.intake.grounding import restyle_family as rf
from sim2human.scenarios.intake.grounding import retrieve_family as rt
from sim2human.scenarios.intake.scenario import IntakeScenario
from sim2human.simulators.base import QuirkPool, SimulatorSpec
from sim2human.simulators.families import get_family
from sim2human.simulators.kinds import build_simulator, is_programmatic
from sim2human.simulators.replay_families import corpus_missing
from sim2human.simulators.restyle_entries import SLOT, Pointer, Restyle
from sim2human.simulators.restyled import (
    RestyledFamily,
    RestyledPersona,
    Voice,
    load_restyled,
    read_restyled,
    same_reading,
    voice_of,
)

__all__ = ["aci_env"]
SCENARIO = IntakeScenario()
SHIPPED = Path(str(resources.files("sim2human.simulators") / "data" / "retrieved-aci.yaml"))
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "collapse.yaml"
POOL = QuirkPool.of(SCENARIO)
OKAY = rf.Line("Okay.", None, "small_talk")
I_TAKE = rf.Line("I take {v}.", "medications", "medications")
TURNS = (
    "okay then.",
    "okay, i take aspirin.",  # states a medicine: not "Okay." (but "I take {v}.")
    "i've been taking metformin every day",
    "i take metformin, and i have asthma",  # a history too: read differently, never kept
    "no i don't take anything",  # "none" is no value's slot
)


def test_a_turn_the_extractor_reads_differently_is_never_kept() -> None:
    got = rt.retrieve_from(TURNS, rt.RetrieveSettings(), (OKAY, I_TAKE))
    okay, take = got.results
    assert okay.rewrites == ["okay then."]
    assert take.rewrites == ["okay, i take {v}.", "i've been taking {v} every day"]
    values = rf.fillers(SCENARIO, (I_TAKE,), 0)[I_TAKE]
    for w in take.rewrites:  # whatever field the agent expects, for every value checked
        assert all(same_reading(SCENARIO, f"I take {v}.", w.replace(SLOT, v)) for v in values)
    # and were one in a cache by hand, a member would not say it: the play-time check
    bad = Voice.of((Restyle(line="Okay.", rewrites=("okay, i take aspirin.",)),))
    assert bad.restyle("Okay.", None, np.random.default_rng(0), SCENARIO) == "Okay."


def test_a_value_becomes_the_slot_only_where_its_words_are_found_once() -> None:
    assert rt.delexicalise(SCENARIO, "it's been about three days now", "onset") == (
        "it's been about {v} now"
    )
    assert rt.delexicalise(SCENARIO, "i take metformin and lisinopril, that's it", "medications")
    assert rt.delexicalise(SCENARIO, "no i don't take anything", "medications") is None
    assert rt.delexicalise(SCENARIO, "okay", "medications") is None


def test_the_cap_word_limits_and_ranking_pick_among_the_kept_turns() -> None:
    many = [f"okay then {w}." for w in ("so", "well", "right", "sure thing")]
    settings = rt.RetrieveSettings(per_line=2, max_words=3, rank="random")
    (okay,) = rt.retrieve_from(many, settings, (OKAY,)).results
    assert okay.passed == 3 and len(okay.rewrites) == 2  # "sure thing" makes four words
    again = rt.retrieve_from(many, settings, (OKAY,)).results[0]
    assert again.rewrites == okay.rewrites  # seeded
    ranked = rt.retrieve_from(
        ["fine, i guess.", "okay okay.", "all good then."],
        rt.RetrieveSettings(per_line=1, rank="lexical"),
        (OKAY,),
        rt.embedder("lexical"),
    )
    assert ranked.results[0].rewrites == ["okay okay."]  # the nearest the original's words


def test_the_shipped_cache_holds_pointers_into_the_corpus_not_its_words() -> None:
    family, lines = read_restyled(SHIPPED.read_text(encoding="utf-8"), SHIPPED)
    assert family.corpus == "aci-bench" and "read in place" in family.description
    pointers = [p for r in lines for p in r.rewrites]
    assert len(pointers) > len(lines) and all(isinstance(p, Pointer) for p in pointers)
    assert all((p.span is not None) == (SLOT in r.line) for r in lines for p in r.rewrites)


@needs_aci
@pytest.mark.usefixtures("aci_env")
def test_the_shipped_family_plays_and_every_cached_turn_reads_as_its_line() -> None:
    family = get_family("retrieved-aci")
    assert isinstance(family, RestyledFamily)
    assert family.cooperativeness == get_family("fitted-aci").cooperativeness
    _, lines = load_restyled(SHIPPED.read_text(encoding="utf-8"), SHIPPED)
    assert sum(bool(r.rewrites) for r in lines) > len(lines) // 2
    values = rf.fillers(SCENARIO, [rf.Line(r.line, r.field, r.field or "") for r in lines], 0)
    for r in lines:
        vals = values.get(rf.Line(r.line, r.field, r.field or ""), [""])[:3]
        for w in r.rewrites:
            for v in vals:
                original, said = r.line.replace(SLOT, v), w.replace(SLOT, v)
                assert same_reading(SCENARIO, original, said), (r.line, w, v)
    specs = [family.sample(k, POOL) for k in range(2)]
    assert all(s.kind == "restyled" and is_programmatic(s) for s in specs)
    assert isinstance(build_simulator(specs[0], SCENARIO), RestyledPersona)


def _quiet(spec: SimulatorSpec) -> SimulatorSpec:
    """Noise off: it garbles different words differently."""
    return spec.model_copy(update={"traits": spec.traits.model_copy(update={"noise": {}})})


@needs_aci
@pytest.mark.usefixtures("aci_env")
def test_members_say_other_words_with_the_same_gold_as_the_persona_they_restyle() -> None:
    fitted, retrieved = get_family("fitted-aci"), get_family("retrieved-aci")
    plain = [_quiet(fitted.sample(k, POOL)) for k in range(4)]
    said = [s.model_copy(update={"kind": "restyled", "family": retrieved.name}) for s in plain]
    agent = ScriptedAgent(SCENARIO)
    a = evaluate(agent, plain, SCENARIO, split="t", per_member=2, max_turns=20)
    b = evaluate(agent, said, SCENARIO, split="t", per_member=2, max_turns=20)
    assert [e.gold for e in a] == [e.gold for e in b]
    assert [e.termination for e in a] == [e.termination for e in b]
    # a turn of several lines may still take the call another way (each line is checked alone)
    words = {t.text for e in a for t in e.turns if t.speaker == "user"}
    other = {t.text for e in b for t in e.turns if t.speaker == "user"}
    assert len(other - words) > len(other) // 2
    voice = voice_of(retrieved.name)
    assert voice.fixed and voice.templates and voice_of(retrieved.name) is voice  # read once


@needs_aci
@pytest.mark.usefixtures("aci_env")
def test_a_pointer_whose_turn_is_not_the_one_hashed_is_one_error_naming_file_and_entry(
    tmp_path: Path,
) -> None:
    text = SHIPPED.read_text(encoding="utf-8")
    _, lines = read_restyled(text, SHIPPED)
    first = next(r for r in lines if r.rewrites)
    changed = tmp_path / "changed.yaml"
    changed.write_text(text.replace(f"hash: {first.rewrites[0].hash}", "hash: 0000beef", 1))
    with pytest.raises(ConfigError) as err:
        load_restyled(changed.read_text(encoding="utf-8"), changed)
    message = str(err.value)
    assert str(changed) in message and repr(first.line) in message and "rewrite 1" in message
    assert f"encounter {first.rewrites[0].encounter}" in message and "\n" not in message
    assert "another version of ACI-Bench" in message


@pytest.mark.parametrize("name", ["retrieved-aci", "refitted-aci"])
def test_without_the_corpus_the_family_is_one_clear_error_and_a_study_leaves_it_out(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both families that point into the corpus need it, as ``aci-train`` does."""
    monkeypatch.setenv("SIM2HUMAN_DATA", str(tmp_path))  # an empty folder: no corpus there
    spec = get_family(name).sample(0, POOL)  # drawing needs no corpus
    with pytest.raises(UsageError) as err:
        build_simulator(spec, SCENARIO)
    assert "reads ACI-Bench in place" in str(err.value) and "SIM2HUMAN_DATA" in str(err.value)
    assert "\n" not in str(err.value)
    assert corpus_missing([name]) is not None
    assert corpus_missing(["fitted-aci", "restyled-aci"]) is None  # their words are shipped
    report = check_family(name, SCENARIO, POOL)
    assert report.ok and all(f.skipped for f in report.findings)
    cfg = load_study(EXAMPLE, quick=True)
    ensemble = cfg.ensemble.model_copy(update={"train": (*cfg.ensemble.train, name), "members": {}})
    kept, line = without_missing_corpus(cfg.model_copy(update={"ensemble": ensemble}))
    assert name not in kept.ensemble.train and kept.ensemble.train
    assert line is not None and name in line and "left out" in line


@needs_aci
@pytest.mark.usefixtures("aci_env")
def test_the_command_writes_a_cache_a_member_can_play(tmp_path: Path) -> None:
    out = tmp_path / "mine.yaml"
    args = ["--name", "mine", "--rank", "random", "--per-line", "2", "--max-words", "12"]
    assert main(["retrieve-family", "--out", str(out), *args]) == 0
    text = out.read_text(encoding="utf-8")
    assert "sim2human retrieve-family --out" in text and "--per-line 2" in text
    assert "CC BY 4.0" in text
    assert all(isinstance(p, Pointer) for r in read_restyled(text, out)[1] for p in r.rewrites)
    family, lines = load_restyled(text, out)
    assert family.name == "mine" and len(lines) == len(rf.intake_lines())
    assert all(len(r.rewrites) <= 2 for r in lines) and any(r.rewrites for r in lines)
    assert all(len(w.split()) <= 12 for r in lines for w in r.rewrites)
    again = tmp_path / "again.yaml"
    assert main(["retrieve-family", "--out", str(again), *args]) == 0
    assert load_restyled(again.read_text(encoding="utf-8"), again)[1] == lines  # reproducible


def test_bad_input_to_the_command_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "x.yaml"
    assert main(["retrieve-family", "--out", str(out), "--data", str(tmp_path / "none")]) == 2
    err = capsys.readouterr().err.strip()
    assert "ACI-Bench corpus" in err and len(err.splitlines()) == 1
    for bad in (["--rank", "nearest"], ["--lines", "some"], ["--name", "chatty"]):
        assert main(["retrieve-family", "--out", str(out), *bad]) == 2
        assert len(capsys.readouterr().err.strip().splitlines()) == 1
    assert not out.exists()
