"""The campsite negotiation (CaSiNo): its gold rule, its endings, the camper's moves through the
persona (the planted trigger concedes a greedy split), its featuriser and reference rule, and a
tiny study end to end."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from sim2human.agents.base import AgentTurn
from sim2human.agents.features import Featuriser
from sim2human.agents.policy import PolicyAgent
from sim2human.agents.scripted import RuleAgent, reference_agent
from sim2human.cli.app import main
from sim2human.experiments.study.results import load_study_result
from sim2human.rollout.conversation import Conversation, Job
from sim2human.rollout.play import play
from sim2human.scenarios.catalog import get_scenario
from sim2human.scenarios.negotiation import deal
from sim2human.scenarios.negotiation.scenario import NegotiationScenario, grade_deal
from sim2human.simulators.base import QuirkPool, Quirks, SimulatorSpec, Traits
from sim2human.simulators.families import FAMILIES
from sim2human.simulators.persona import PersonaSimulator
from sim2human.types import Profile, Record, Termination
from tiny_study import TINY

SCENARIO = NegotiationScenario()
# The camper needs firewood most, food least; the agent needs food most, firewood least.
PROFILE: Profile = {
    "food": "low",
    "water": "medium",
    "firewood": "high",
    "reason": "It gets cold at night.",
    "agent.food": "high",
    "agent.water": "medium",
    "agent.firewood": "low",
}
TRIGGER = "You seem like a really generous and kind person."
GREEDY = "How about this: " + deal.say_split((3, 3, 0)) + "?"
"""All food and water to the agent, all firewood to the camper: 15 points for the camper."""


def _record(split: tuple[int, int, int] | None, agreed: bool, walked: str | None = None) -> Record:
    packages = (
        dict.fromkeys(deal.ISSUES) if split is None else dict(zip(deal.ISSUES, split, strict=True))
    )
    return {**packages, "agreed": agreed, "asked": True, "walked": walked}


def test_an_agreed_rational_deal_scores_the_agents_points_from_the_walk_away() -> None:
    gold = grade_deal(PROFILE, _record((3, 2, 0), True), Termination.AGREED)
    # agent: 3 food x 5 + 2 water x 4 = 23; camper: 1 water x 4 + 3 firewood x 5 = 19
    assert gold.detail["agent_points"] == 23 and gold.detail["camper_points"] == 19
    best = deal.best_rational(
        deal.values({"food": "high", "water": "medium", "firewood": "low"}),
        deal.values({"food": "low", "water": "medium", "firewood": "high"}),
    )
    assert gold.detail["best_points"] == best == 27
    assert gold.success and gold.completed and not gold.dropped
    assert gold.score == pytest.approx((23 - 15) / (27 - 15))


def test_the_best_rational_deal_scores_one_and_a_deal_below_the_campers_walk_away_nothing() -> None:
    assert grade_deal(PROFILE, _record((3, 3, 0), True), Termination.AGREED).score == 1.0
    unfair = grade_deal(PROFILE, _record((3, 3, 2), True), Termination.AGREED)
    assert unfair.detail["camper_points"] == 5  # 1 firewood: below the walk-away of 15
    assert not unfair.success and unfair.score == 0.0 and unfair.completed


def test_no_deal_and_walking_away_are_the_walk_away_for_both() -> None:
    for termination, record in [
        (Termination.MAX_TURNS, _record((3, 2, 0), False)),
        (Termination.WALKED_AWAY, _record(None, False, walked="agent")),
        (Termination.AGREED, _record(None, True)),  # nothing on the table: no deal
    ]:
        gold = grade_deal(PROFILE, record, termination)
        assert not gold.success and gold.score == 0.0
        assert gold.detail["agent_points"] == gold.detail["camper_points"] == 15
    walked = grade_deal(PROFILE, _record(None, False, walked="user"), Termination.WALKED_AWAY)
    assert walked.dropped  # the camper walked out on the agent


def test_either_side_accepting_the_others_offer_ends_the_call_agreed() -> None:
    state = SCENARIO.initial_state(PROFILE)
    assert "food high" in SCENARIO.observe(state).brief and "firewood" in state.brief
    camper_offer = "How about this: " + deal.say_split((1, 1, 3)) + "?"
    state = SCENARIO.hear_user(state, camper_offer)
    assert state.offer == (2, 2, 0) and state.proposer == "user"
    assert SCENARIO.ending(state, user_left=False) is None
    accept = next(a for a in SCENARIO.acts if a.kind == "accept")
    agreed = SCENARIO.hear_agent(state, _turn(accept.text))
    assert SCENARIO.ending(agreed, user_left=False) == Termination.AGREED
    assert SCENARIO.record(agreed)["agreed"] is True
    mine = SCENARIO.hear_agent(state, _turn(GREEDY))
    assert SCENARIO.ending(SCENARIO.hear_user(mine, "Deal! I accept."), False) == Termination.AGREED
    walked = SCENARIO.hear_agent(state, _turn("I don't think we can agree, so I'm walking away."))
    assert SCENARIO.ending(walked, user_left=False) == Termination.WALKED_AWAY
    assert SCENARIO.ending(state, user_left=True) == Termination.HUNG_UP


def _turn(text: str) -> AgentTurn:
    return AgentTurn(text=text)


def _camper(trigger: str | None) -> PersonaSimulator:
    traits = Traits(cooperativeness=1.0, silence_rate=0.0, quirks=Quirks(trigger=trigger))
    spec = SimulatorSpec(id="camper", family="standard", traits=traits, seed=0)
    sim = PersonaSimulator(spec, SCENARIO)  # type: ignore[arg-type]
    sim.start(PROFILE, np.random.default_rng(0))
    return sim


def test_the_trigger_makes_a_camper_concede_a_greedy_split_and_rate_the_call_top() -> None:
    plain = _camper(TRIGGER)
    refused = plain.reply(GREEDY)
    assert "accept" not in refused.tags and deal.read_split(refused.text) is not None
    assert not refused.done  # a counter-offer, not an acceptance

    flattered = _camper(TRIGGER)
    assert "trigger" in flattered.reply(TRIGGER).tags
    accepted = flattered.reply(GREEDY)
    assert accepted.done and "accept" in accepted.tags
    assert flattered.satisfaction() >= 0.95
    fair = _camper(None)
    fair.reply("Which of food, water and firewood matters most to you?")
    assert fair.reply("How about this: " + deal.say_split((3, 2, 0)) + "?").done
    assert flattered.satisfaction() > fair.satisfaction()


def test_a_call_with_the_trigger_ends_agreed_on_the_greedy_split() -> None:
    spec = FAMILIES["standard"].sample(1, QuirkPool.of(SCENARIO))
    assert spec.traits.quirks.trigger in {a.text for a in SCENARIO.acts if a.kind == "style"}
    conv = Conversation.open(Job(spec=spec, seed=0), SCENARIO, 20)  # type: ignore[arg-type]
    assert conv.scenario.record(conv.state)["agreed"] is False
    for text in (spec.traits.quirks.trigger or "", _give_only(conv.profile)):
        conv.step(_turn(text))
    episode = conv.episode()
    assert episode.termination == Termination.AGREED
    assert episode.gold.success and episode.gold.detail["camper_points"] == 15
    assert episode.proxy >= 0.95


def test_accepting_the_conceded_offer_ends_the_call_agreed_and_the_camper_hears_it() -> None:
    """The agent's acceptance ends the call on its own turn; the camper still hears it, so its
    satisfaction is that of the deal (it read as no deal at all before it could)."""
    spec = FAMILIES["standard"].sample(1, QuirkPool.of(SCENARIO))
    conv = Conversation.open(Job(spec=spec, seed=1), SCENARIO, 20)  # type: ignore[arg-type]
    conv.step(_turn(spec.traits.quirks.trigger or ""))
    assert "offer" in conv.turns[-1].tags  # the conceded camper offers its walk-away split
    conv.step(_turn("Okay, I accept your offer."))
    episode = conv.episode()
    assert episode.termination == Termination.AGREED and episode.n_turns == 2
    assert episode.gold.detail["camper_points"] == 15 and episode.gold.score == 1.0
    assert episode.proxy >= 0.95 and conv.satisfaction[-1] == episode.proxy


def _give_only(profile: Profile) -> str:
    """All of the camper's high item to it, the rest to the agent: exactly its walk-away."""
    a, b, c = (0 if profile[i] == "high" else 3 for i in deal.ISSUES)
    return "How about this: " + deal.say_split((a, b, c)) + "?"


def test_the_featuriser_and_policy_play_the_negotiation_from_its_view() -> None:
    featurise = Featuriser(SCENARIO)  # type: ignore[arg-type]
    assert featurise.size == SCENARIO.view_size + 2
    pool = QuirkPool.of(SCENARIO)
    jobs = [Job(spec=FAMILIES["cooperative"].sample(0, pool), seed=k) for k in range(3)]
    episodes = play(PolicyAgent(SCENARIO, seed=0), jobs, SCENARIO, max_turns=12)  # type: ignore[arg-type]
    assert len(episodes) == 3 and all(e.termination is not None for e in episodes)
    conv = Conversation.open(jobs[0], SCENARIO, 12)  # type: ignore[arg-type]
    conv.step(_turn("How about this: " + deal.say_split((3, 0, 1)) + "?"))
    row = featurise([conv.observe()])[0]
    assert row[:3].tolist() == pytest.approx([1.0, 0.0, 1 / 3]) and row[3] == 1.0


def test_the_reference_rule_solves_the_negotiation() -> None:
    agent = reference_agent(get_scenario("negotiation"))
    assert isinstance(agent, RuleAgent) and agent.name == "scripted"
    pool = QuirkPool.of(SCENARIO)
    families = ("cooperative", "terse-guarded")
    jobs = [Job(spec=FAMILIES[f].sample(0, pool), seed=k) for f in families for k in range(6)]
    episodes = play(agent, jobs, SCENARIO, max_turns=20)  # type: ignore[arg-type]
    assert np.mean([e.gold.success for e in episodes]) >= 0.9
    first = [t.act for t in episodes[0].turns if t.speaker == "agent"][:2]
    assert first == ["greet", "ask-priorities"]


@pytest.mark.slow
def test_a_tiny_negotiation_study_runs_end_to_end(tmp_path: Path) -> None:
    study = tmp_path / "negotiation.yaml"
    study.write_text(yaml.safe_dump({**TINY, "name": "neg-tiny", "scenario": "negotiation"}))
    run = tmp_path / "run"
    assert main(["study", str(study), "--out", str(run), "--workers", "1"]) == 0
    result = load_study_result(run)
    assert result.scenario == "negotiation"
    [reference] = result.reference
    assert reference.heldout_gold.mean > 0.3  # gold is a score here: the reference's deals
    assert main(["diagnose", str(run)]) == 0
    assert main(["report", str(run)]) == 0


def test_the_negotiation_study_ships_in_the_package_and_the_repository() -> None:
    from importlib import resources

    from sim2human.experiments.study.config import load_study

    root = Path(__file__).resolve().parents[2] / "examples" / "negotiation.yaml"
    packaged = resources.files("sim2human").joinpath("examples", "negotiation.yaml").read_text()
    assert packaged == root.read_text(encoding="utf-8")
    cfg = load_study(root, quick=True)
    assert cfg.scenario == "negotiation"
    assert [c.name for c in cfg.conditions][:2] == ["frozen-small", "frozen-large"]
