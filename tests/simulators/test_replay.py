"""``replay`` members: real patients' words, a card derived from the encounter, determinism."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from aci_data import aci_env, needs_aci
from sim2human.agents.scripted import ScriptedAgent
from sim2human.corpora import aci_bench
from sim2human.experiments.study.config import parse_study
from sim2human.population.ensemble import Ensemble
from sim2human.rollout.conversation import MAX_TURNS, Job, job_profile
from sim2human.rollout.evaluate import evaluate
from sim2human.scenarios.intake.scenario import IntakeScenario
from sim2human.simulators.base import QuirkPool, SimulatorSpec
from sim2human.simulators.families import get_family
from sim2human.simulators.kinds import build_simulator
from sim2human.simulators.persona import PersonaSimulator
from sim2human.simulators.replay import REPLY_KINDS, ReplaySimulator, reply_shares

pytestmark = [needs_aci, pytest.mark.usefixtures("aci_env")]
__all__ = ["aci_env"]


def member(encounter: str, family: str = "aci-train", temperature: float = 0.0) -> SimulatorSpec:
    spec = get_family(family).sample(0, QuirkPool(liked=(), triggers=()), temperature=temperature)
    return spec.model_copy(update={"id": f"{family}-{encounter}"})


def test_card_for_a_known_encounter(scenario: IntakeScenario, aci_env: Path) -> None:
    from sim2human.simulators.replay import member_for

    card = member_for(member("D2N001"), scenario).card
    assert card.encounter_id == "D2N001"
    # 2nd_complaints "congestive heart failure;depression;hypertension": history's vocabulary
    # names all three; a card keeps the scenario's two, sorted, as the extractor would.
    assert card.values["history"] == ("depression", "heart failure")
    assert card.sources["history"] == "from-metadata"
    # "The patient denies any chest pain, shortness of breath ..." in the note.
    assert (card.values["red_flag"], card.sources["red_flag"]) == (False, "from-note")
    # 50 years old at the reference date (2023-01-01): born in 1972.
    assert str(card.values["dob"]).startswith("1972-") and card.sources["dob"] == "from-metadata"
    # cc "annual exam" names no complaint the scenario knows; the note's first complaint word
    # or, failing that, a draw seeded by the encounter id.
    assert card.sources["complaint"] in ("from-note", "sampled")
    assert set(card.sources) == set(scenario.fields)
    again = member_for(member("D2N001", "aci-train", 1.0), scenario).card
    assert again == card  # one patient is always the same person


def test_answers_a_medications_question_with_the_real_patients_turn(
    scenario: IntakeScenario,
) -> None:
    spec = member("D2N028")
    sim = build_simulator(spec, scenario)
    assert isinstance(sim, ReplaySimulator)
    profile = job_profile(Job(spec=spec, seed=0), scenario)
    assert profile["medications"] == ("acetaminophen", "rosuvastatin")  # from the note
    sim.start(profile, np.random.default_rng(0))
    reply = sim.reply("Are you taking any medicines at the moment?")
    # The visit's own answer: crestor = rosuvastatin, tylenol = acetaminophen.
    assert reply.text == (
        "i take crestor and olmesartan daily and then tylenol for occasion- occasional pain."
    )
    assert reply.tags == ("verbatim",)
    heard = scenario.extract(reply.text, scenario.empty_record(), "medications")
    assert heard["medications"] == profile["medications"]
    real = next(t for t in aci_bench.load() if t.encounter_id == "D2N028")
    assert any(aci_bench.detokenize(p) == reply.text for p in real.patient_turns)


def test_temperature_zero_is_deterministic(scenario: IntakeScenario) -> None:
    agent = ScriptedAgent(scenario)
    specs = [member(e) for e in ("D2N001", "D2N028")]
    runs = [
        evaluate(agent, specs, scenario, per_member=2, split="heldout", max_turns=MAX_TURNS)
        for _ in range(2)
    ]
    assert [e.turns for e in runs[0]] == [e.turns for e in runs[1]]
    assert [e.proxy for e in runs[0]] == [e.proxy for e in runs[1]]
    spec = specs[0]
    replies = []
    for _ in range(2):
        sim = build_simulator(spec, scenario)
        sim.start(job_profile(Job(spec=spec, seed=0), scenario), np.random.default_rng(7))
        replies.append([sim.reply(t).text for t in ("Hello.", "Any allergies?", "Any allergies?")])
    assert replies[0] == replies[1]


def test_every_reply_is_tagged_and_satisfaction_is_the_persona_rule_without_quirks(
    scenario: IntakeScenario,
) -> None:
    spec = member("D2N028", temperature=1.0)
    [episode] = evaluate(
        ScriptedAgent(scenario),
        [spec],
        scenario,
        per_member=1,
        split="heldout",
        max_turns=MAX_TURNS,
    )
    user = [t for t in episode.turns if t.speaker == "user"]
    assert all(len(t.tags) == 1 and t.tags[0] in REPLY_KINDS for t in user)
    shares = reply_shares([episode])
    assert set(shares) == set(REPLY_KINDS) and abs(sum(shares.values()) - 1) < 1e-9
    rule = PersonaSimulator(spec.model_copy(update={"kind": "persona"}), scenario)
    assert episode.proxy == pytest.approx(rule.judge(episode))
    assert build_simulator(spec, scenario).judge(episode) == pytest.approx(rule.judge(episode))


def test_families_split_by_the_corpus_splits_and_enter_a_study_config(pool: QuirkPool) -> None:
    cfg = parse_study(
        {
            "name": "real",
            "seeds": [0],
            "conditions": [{"name": "u", "sampler": "uniform"}],
            "ensemble": {
                "train": ["cooperative", "aci-train"],
                "heldout": ["noisy-line", "aci-heldout"],
                "members_per_family": 3,
            },
        }
    )
    e = cfg.ensemble
    ensemble = Ensemble.from_families(e.train, e.heldout, e.members_per_family, pool)
    train_ids = {s.id.removeprefix("aci-train-") for s in ensemble.train if s.kind == "replay"}
    held_ids = {s.id.removeprefix("aci-heldout-") for s in ensemble.heldout if s.kind == "replay"}
    splits = {t.encounter_id: t.split for t in aci_bench.load()}
    assert len(train_ids) == len(held_ids) == 3
    assert {splits[i] for i in train_ids} == {"train"}
    assert {splits[i] for i in held_ids} <= {"valid", "test"}


def test_satisfaction_kept_turn_by_turn_equals_the_rule_over_the_whole_call(
    scenario: IntakeScenario,
) -> None:
    """The incremental reading gives what re-reading the call and judging it would give."""
    from sim2human.simulators.manner import Manner

    acts = scenario.acts
    for encounter in ("D2N001", "D2N028"):
        spec = member(encounter)
        sim = build_simulator(spec, scenario)
        assert isinstance(sim, ReplaySimulator)
        profile = job_profile(Job(spec=spec, seed=0), scenario)
        sim.start(profile, np.random.default_rng(0))
        rng = np.random.default_rng(3)
        for _ in range(8):
            act = acts[int(rng.integers(len(acts)))]
            reply = sim.reply(scenario.render_act(act, None, scenario.empty_record()))
            record, expecting, manner = scenario.empty_record(), None, Manner()
            for t in sim.call.turns:
                if t.speaker == "agent":
                    intent = scenario.interpret(t.text)
                    manner = manner.then(intent)
                    expecting = (
                        intent.asks[0] if intent.asks else (None if intent.confirm else expecting)
                    )
                else:
                    record = scenario.extract(t.text, record, expecting)
            across = {f for f, v in record.items() if v is not None and v == profile[f]}
            confusions = sum("confused" in t.tags for t in sim.call.turns)
            expected = sim._rule.score_manner(manner, across, confusions, dropped=False)
            assert sim.satisfaction() == pytest.approx(expected)
            if reply.done:
                break
