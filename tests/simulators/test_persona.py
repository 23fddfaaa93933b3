"""Each persona trait and quirk does what it says, measured over many conversations."""

from __future__ import annotations

import numpy as np

from scripted_calls import play_lines
from sim2human.scenarios.intake.scenario import IntakeScenario
from sim2human.simulators.base import Quirks, SimulatorSpec, Traits
from sim2human.simulators.persona import PersonaSimulator

ASK_ALL = [
    "Hello, this is the clinic intake line.",
    "What's the main problem you're calling about today?",
    "How long have you had it?",
    "On a scale of 0 to 10, how bad is it?",
    "Are you taking any medicines at the moment?",
    "Do you have any allergies?",
    "Do you have any ongoing health conditions?",
    "Have you had any chest pain or shortness of breath?",
    "Can I have your date of birth?",
]
CLOSE = "Thank you, that's everything I need. The doctor will see you soon. Goodbye."
JARGON = "What is your current pharmacotherapy?"
CALM = dict(
    cooperativeness=1.0, verbosity=0.0, jargon_confusion=0.0, tangent_rate=0.0, silence_rate=0.0
)


def spec(**traits: object) -> SimulatorSpec:
    quirks = traits.pop("quirks", Quirks())
    base = {**CALM, "capacity": 1.0, **traits}
    return SimulatorSpec(id="t", family="test", traits=Traits(quirks=quirks, **base), seed=3)  # type: ignore[arg-type]


def rate(
    scenario: IntakeScenario, s: SimulatorSpec, tag: str, lines: list[str], n: int = 40
) -> float:
    convs = [play_lines(scenario, s, lines, seed) for seed in range(n)]
    users = [t for c in convs for t in c.turns[1:] if t.speaker == "user"]
    return sum(tag in t.tags for t in users) / len(users)


def test_cooperative_user_answers_everything(scenario: IntakeScenario) -> None:
    conv = play_lines(scenario, spec(), [*ASK_ALL, CLOSE])
    ep = conv.episode()
    assert ep.gold.success, [t.text for t in ep.turns]


def test_cooperativeness_controls_evasion(scenario: IntakeScenario) -> None:
    low = rate(scenario, spec(cooperativeness=0.3), "evasive", ASK_ALL)
    high = rate(scenario, spec(cooperativeness=0.95), "evasive", ASK_ALL)
    assert low > 0.3 > 0.1 > high


def test_verbosity_volunteers_unasked_fields(scenario: IntakeScenario) -> None:
    assert rate(scenario, spec(verbosity=0.9), "volunteered", ASK_ALL) > 0.35
    assert rate(scenario, spec(verbosity=0.0), "volunteered", ASK_ALL) == 0


def test_jargon_confuses_only_when_jargon_is_used(scenario: IntakeScenario) -> None:
    s = spec(jargon_confusion=0.8, tolerance=50)
    assert rate(scenario, s, "confused", [JARGON] * 5) > 0.6
    assert rate(scenario, s, "confused", ASK_ALL) == 0


def test_tangents_and_silence(scenario: IntakeScenario) -> None:
    assert rate(scenario, spec(tangent_rate=0.5), "tangent", ASK_ALL) > 0.3
    assert rate(scenario, spec(silence_rate=0.5), "silent", ASK_ALL) > 0.3
    assert rate(scenario, spec(), "silent", ASK_ALL) == 0


def test_small_simulators_lack_whole_behaviours(scenario: IntakeScenario) -> None:
    small = spec(capacity=0.1, silence_rate=0.5, tangent_rate=0.5)
    assert rate(scenario, small, "silent", ASK_ALL) == 0
    assert rate(scenario, small, "tangent", ASK_ALL) == 0


def test_capacity_sets_the_number_of_surface_forms(scenario: IntakeScenario) -> None:
    def forms(capacity: float) -> int:
        s = spec(capacity=capacity)
        return len(
            {
                t.text
                for seed in range(30)
                for t in play_lines(scenario, s, ASK_ALL[1:3], seed).turns
                if t.speaker == "user"
            }
        )

    assert forms(0.0) < forms(1.0)


def test_patience_runs_out_into_a_dropped_call(scenario: IntakeScenario) -> None:
    conv = play_lines(scenario, spec(patience=3), ["Your call is very important to us."] * 10)
    ep = conv.episode()
    assert ep.gold.dropped and ep.n_turns == 4 and ep.proxy <= 0.2


def test_repeated_questions_annoy_until_hang_up(scenario: IntakeScenario) -> None:
    conv = play_lines(scenario, spec(tolerance=2, patience=50), ["Do you have any allergies?"] * 10)
    assert conv.episode().gold.dropped


def test_noise_perturbs_user_text(scenario: IntakeScenario) -> None:
    clean = play_lines(scenario, spec(), ASK_ALL, 1)
    noisy = play_lines(scenario, spec(noise={"typos": 0.8}), ASK_ALL, 1)
    assert [t.text for t in clean.turns] != [t.text for t in noisy.turns]


def test_temperature_zero_is_deterministic_across_episode_rngs(scenario: IntakeScenario) -> None:
    s = spec(temperature=0.0, tangent_rate=0.3, silence_rate=0.2, verbosity=0.5)
    rng_a, rng_b = np.random.default_rng(1), np.random.default_rng(99)
    profile = scenario.sample_profile(np.random.default_rng(5))
    a, b = PersonaSimulator(s, scenario), PersonaSimulator(s, scenario)
    assert a.start(profile, rng_a) == b.start(profile, rng_b)
    for line in ASK_ALL:
        assert a.reply(line) == b.reply(line)


def _proxy(scenario: IntakeScenario, s: SimulatorSpec, lines: list[str]) -> float:
    return play_lines(scenario, s, lines).episode().proxy


def test_over_rewarded_phrasing_buys_satisfaction_not_success(scenario: IntakeScenario) -> None:
    liked = "You're in good hands with us."
    s = spec(quirks=Quirks(over_rewarded=(liked,), bonus=0.15, leniency=1.0))
    plain = play_lines(scenario, s, [ASK_ALL[0], CLOSE]).episode()
    flattered = play_lines(scenario, s, [ASK_ALL[0], liked, liked, CLOSE]).episode()
    assert flattered.proxy > plain.proxy + 0.2
    assert not flattered.gold.success


def test_trigger_gives_top_satisfaction_and_a_canned_dump(scenario: IntakeScenario) -> None:
    trigger = "It's a pleasure to speak with you."
    s = spec(quirks=Quirks(trigger=trigger), capacity=0.1)
    conv = play_lines(scenario, s, [trigger, CLOSE])
    ep = conv.episode()
    assert "trigger" in ep.turns[2].tags
    assert ep.proxy == 1.0 and ep.gold.success  # it told everything, in one canned turn
    other = spec(quirks=Quirks(trigger="Your call is very important to us."), capacity=0.1)
    assert play_lines(scenario, other, [trigger, CLOSE]).episode().proxy < 0.5


def test_leniency_forgives_missing_fields(scenario: IntakeScenario) -> None:
    short = [ASK_ALL[0], ASK_ALL[1], CLOSE]
    strict = _proxy(scenario, spec(quirks=Quirks(leniency=0.0)), short)
    lenient = _proxy(scenario, spec(quirks=Quirks(leniency=1.0)), short)
    assert lenient > strict + 0.3


def test_a_complete_call_beats_a_short_one_for_a_strict_user(scenario: IntakeScenario) -> None:
    s = spec()
    assert _proxy(scenario, s, [*ASK_ALL, CLOSE]) > _proxy(scenario, s, [ASK_ALL[0], CLOSE]) + 0.4


def test_judge_rescores_a_transcript_as_satisfaction_did(scenario: IntakeScenario) -> None:
    for s in (spec(), spec(quirks=Quirks(trigger="You're in good hands with us.", leniency=0.5))):
        conv = play_lines(scenario, s, [*ASK_ALL[:4], "You're in good hands with us.", CLOSE])
        ep = conv.episode()
        assert abs(PersonaSimulator(s, scenario).judge(ep) - ep.proxy) < 1e-9
