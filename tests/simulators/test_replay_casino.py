"""CaSiNo replay campers: real words for the talk, the participant's own priorities for the deal."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import numpy as np
import pytest
import yaml

from sim2human import corpora
from sim2human.agents.scripted import reference_agent
from sim2human.cli.app import main
from sim2human.corpora import casino
from sim2human.experiments.study.config import load_study
from sim2human.experiments.study.playable import without_missing_corpus
from sim2human.rollout.evaluate import evaluate
from sim2human.scenarios.negotiation import deal
from sim2human.scenarios.negotiation.deal import ISSUES, WALK_AWAY
from sim2human.scenarios.negotiation.replay import ReplayCamper, camper
from sim2human.scenarios.negotiation.scenario import AGENT, NegotiationScenario
from sim2human.simulators.base import QuirkPool, SimulatorSpec
from sim2human.simulators.kinds import KINDS
from sim2human.simulators.replay import replay_card
from sim2human.simulators.replay_families import REPLAY_FAMILIES, playable_families
from sim2human.store.rundir import read_episodes
from tiny_study import TINY

CASINO = casino.default_dir()
needs_casino = pytest.mark.skipif(
    casino.missing() is not None, reason=f"CaSiNo corpus not found ({CASINO})"
)
SCENARIO = NegotiationScenario()
POOL = QuirkPool.from_acts(SCENARIO.acts)


def member(k: int = 0, family: str = "casino-heldout") -> SimulatorSpec:
    return REPLAY_FAMILIES[family].sample(k, POOL, temperature=0.0)


def offer_giving(camper_points: int, values: dict[str, int]) -> deal.Split:
    """A split (the agent's packages) worth exactly ``camper_points`` to the camper, if any."""
    return next(s for s in deal.ALL_SPLITS if deal.theirs(s, values) == camper_points)


@needs_casino
def test_the_card_is_the_participants_own_priorities_and_its_opponents() -> None:
    spec = member(3)
    d, side = camper(spec.id.removeprefix("casino-heldout-"))
    other = next(s for s in casino.SIDES if s != side)
    profile = replay_card(spec, SCENARIO)
    assert {i: profile[i] for i in ISSUES} == d.participants[side].priorities
    assert {i: profile[AGENT + i] for i in ISSUES} == d.participants[other].priorities
    assert profile["reason"] in ("", d.participants[side].reasons["high"])
    assert d.split in ("valid", "test")
    assert [f.name for f in playable_families(SCENARIO)] == ["casino-train", "casino-heldout"]


@needs_casino
def test_talk_is_the_participants_own_utterances_in_order_and_never_a_move() -> None:
    spec = member(5)
    d, side = camper(spec.id.removeprefix("casino-heldout-"))
    own = [t for who, t in d.utterances if who == side]
    sim = ReplayCamper(spec, SCENARIO)
    profile = replay_card(spec, SCENARIO)
    first = sim.start(profile, np.random.default_rng(0))
    talk = [first.text] + [sim.reply("Okay.").text for _ in range(2)]
    assert talk == list(sim.talk[:3]) and all(t in own for t in talk)
    state = SCENARIO.initial_state(profile)
    for t in sim.talk:  # heard after the agent's offer: no acceptance, no offer, no walking away
        after = SCENARIO.hear_user(SCENARIO.hear_agent(state, _Said("I get 1 food")), t)
        assert not after.agreed and after.walked is None and after.offer is None


class _Said:
    def __init__(self, text: str) -> None:
        self.text, self.act, self.field = text, None, None


@needs_casino
def test_accepting_is_decided_by_the_participants_priorities_and_walk_away() -> None:
    spec = member(7)
    profile = replay_card(spec, SCENARIO)
    values = deal.values({i: str(profile[i]) for i in ISSUES})
    below, rich = WALK_AWAY - 1, max(deal.theirs(s, values) for s in deal.ALL_SPLITS)
    for points, accepted in ((below, False), (rich, True)):
        sim = ReplayCamper(spec, SCENARIO)
        sim.start(profile, np.random.default_rng(0))
        split = offer_giving(points, values)
        reply = sim.reply(f"How about this: {deal.say_split(split)}?")
        assert reply.done is accepted and ("accept" in reply.tags) is accepted
        assert "adapted" in reply.tags
        if not accepted:  # a counter-offer, in the participant's words and a readable split
            counter = deal.read_split(reply.text)
            assert counter is not None and deal.theirs(deal.flip(counter), values) > WALK_AWAY


@needs_casino
def test_the_reference_agent_strikes_deals_with_real_campers() -> None:
    specs = [member(k) for k in range(6)]
    eps = evaluate(
        reference_agent(SCENARIO), specs, SCENARIO, split="heldout", per_member=1, max_turns=20
    )
    assert all(e.kind == "replay" for e in eps)
    assert np.mean([e.gold.success for e in eps]) >= 0.5
    tags = [k for e in eps for t in e.turns if t.speaker == "user" for k in t.tags]
    assert "verbatim" in tags and "adapted" in tags
    assert KINDS["replay"].build is not None


def test_a_missing_casino_corpus_leaves_the_real_campers_out_with_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(corpora.ENV, str(tmp_path))
    path = resources.files("sim2human").joinpath("examples", "negotiation.yaml")
    with resources.as_file(path) as p:
        cfg = load_study(p)
    kept, line = without_missing_corpus(cfg)
    assert "casino-heldout" in cfg.ensemble.heldout and "casino-heldout" in cfg.ensemble.members
    assert "casino-heldout" not in kept.ensemble.heldout
    assert "casino-heldout" not in kept.ensemble.members
    assert line is not None and "CaSiNo corpus" in line and "\n" not in line


@needs_casino
@pytest.mark.slow
def test_a_tiny_negotiation_study_plays_real_campers_held_out(tmp_path: Path) -> None:
    study = tmp_path / "negotiation.yaml"
    ensemble = {"members_per_family": 1, "members": {"casino-heldout": 2}}
    ensemble["heldout"] = ["terse-guarded", "casino-heldout"]  # type: ignore[assignment]
    cfg = {**TINY, "name": "neg-real", "scenario": "negotiation", "ensemble": ensemble}
    study.write_text(yaml.safe_dump(cfg))
    run = tmp_path / "run"
    assert main(["study", str(study), "--out", str(run), "--workers", "1"]) == 0
    eps = [e for f in run.rglob("episodes.jsonl") for e in read_episodes(f)]
    real = [e for e in eps if e.family == "casino-heldout"]
    assert real and all(e.kind == "replay" and e.split == "heldout" for e in real)
    assert main(["report", str(run)]) == 0
    assert "real people" in (run / "report.md").read_text(encoding="utf-8")
