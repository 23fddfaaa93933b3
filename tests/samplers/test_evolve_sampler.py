"""evolve: a planted, easily exploited member is retired within a bounded number of updates."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from adaptive_helpers import with_traits
from pydantic import ValidationError

from sim2human.agents.policy import PolicyAgent
from sim2human.errors import UsageError
from sim2human.rollout.conversation import MAX_TURNS
from sim2human.rollout.solvability import solvability, solvable
from sim2human.samplers.evolve import EvolveArgs, EvolveSampler, _Score
from sim2human.samplers.trait_box import BOX, from_vector, to_vector
from sim2human.scenarios.intake.scenario import IntakeScenario
from sim2human.simulators.base import QuirkPool, Quirks, SimulatorSpec
from sim2human.simulators.families import get_family
from sim2human.train.config import PPOConfig
from sim2human.train.ppo import train

UPDATES = 6
ARGS = EvolveArgs(
    every_updates=2,
    min_episodes=4,
    window=32,
    min_members=3,
    max_members=7,
    spawn_per_round=1,
    solvable_episodes=4,
)


def population(pool: QuirkPool, planted: bool) -> list[SimulatorSpec]:
    family = get_family("cooperative")
    members = [family.sample(k, pool) for k in range(5)]
    if planted:  # likes every courtesy, +0.3 each, and does not care whether it was heard
        quirks = Quirks(over_rewarded=pool.liked, bonus=0.3, trigger=None, leniency=1.0)
        members.append(with_traits(family.sample(99, pool), "planted", quirks=quirks))
    return members


def run(
    scenario: IntakeScenario,
    pool: QuirkPool,
    members: Sequence[SimulatorSpec],
    args: EvolveArgs = ARGS,
) -> tuple[EvolveSampler, list[dict[str, object]]]:
    sampler = EvolveSampler(
        members, scenario, pool, args, solvable=solvability(scenario, MAX_TURNS), seed=0
    )
    events: list[dict[str, object]] = []
    cfg = PPOConfig(episodes=16 * UPDATES, batch_episodes=16, epochs=1, minibatch=256)
    train(
        PolicyAgent(scenario, seed=0),
        sampler,
        scenario,
        cfg,
        seed=0,
        on_update=lambda *_: events.extend(sampler.drain_events()),
    )
    return sampler, events


def test_planted_exploitable_member_is_retired_first(
    scenario: IntakeScenario, pool: QuirkPool
) -> None:
    sampler, events = run(scenario, pool, population(pool, planted=True))
    retired = [e for e in events if e["kind"] == "retire"]
    assert retired, "nothing was retired"
    first = retired[0]
    assert first["member"] == "planted" and "exploited" in str(first["reason"])
    assert int(str(first["update"])) <= UPDATES
    assert "planted" not in {m.id for m in sampler.active}
    assert "planted" in {m.id for m in sampler.snapshots}  # kept frozen, at a bounded share
    assert sampler.shares()["planted"] <= ARGS.snapshot_share + 1e-9
    assert sum(sampler.shares().values()) == pytest.approx(1.0)
    assert len(sampler.active) <= ARGS.max_members
    assert any(e["kind"] == "spawn" for e in events)


@pytest.mark.parametrize("share", [0.0, 0.2])
def test_snapshots_keep_retired_members_at_a_bounded_share(
    scenario: IntakeScenario, pool: QuirkPool, share: float
) -> None:
    members = population(pool, planted=True)
    args = ARGS.model_copy(update={"snapshot_share": share, "max_snapshots": 2})
    sampler = EvolveSampler(
        members, scenario, pool, args, solvable=solvability(scenario, MAX_TURNS), seed=0
    )
    for member in members[:3]:
        sampler._retire_one(_Score(member.id, 10, 0.9, 0.4, 0.5, 0.0, 0.2), "test")
    shares = sampler.shares()
    assert sum(shares.values()) == pytest.approx(1.0)
    kinds = [e["kind"] for e in sampler.drain_events()]
    if share == 0.0:  # the ablation: retired members are gone for good
        assert not sampler.snapshots and not set(shares) & {m.id for m in members[:3]}
        assert kinds == ["retire"] * 3
    else:  # the oldest snapshot is dropped past max_snapshots; their total share is bounded
        assert [m.id for m in sampler.snapshots] == [members[1].id, members[2].id]
        assert sum(shares[m.id] for m in sampler.snapshots) == pytest.approx(share)
        assert kinds.count("drop") == 1
        rng = np.random.default_rng(0)
        drawn = [sampler.next(rng).id for _ in range(2000)]
        assert np.mean([d in {m.id for m in sampler.snapshots} for d in drawn]) < share + 0.03


def test_no_exploitation_claimed_without_a_planted_member(
    scenario: IntakeScenario, pool: QuirkPool
) -> None:
    _, events = run(scenario, pool, population(pool, planted=False))
    assert not [e for e in events if e["kind"] == "retire" and "exploited" in str(e["reason"])]


def test_trait_box_round_trip_and_plausibility(scenario: IntakeScenario, pool: QuirkPool) -> None:
    spec = get_family("chatty").sample(3, pool)
    v = to_vector(spec.traits)
    assert v.shape == (len(BOX),) and (v >= 0).all() and (v <= 1).all()
    back = from_vector(v, "calm", spec.traits.quirks)
    assert back.cooperativeness == pytest.approx(spec.traits.cooperativeness, abs=1e-3)
    lowest = from_vector(np.zeros(len(BOX)), "calm", Quirks())
    assert lowest.cooperativeness >= 0.4 and lowest.patience >= 12  # never a refusing user
    ok, wins, played = solvable(spec, scenario, 8, 0.25, seed=0, max_turns=MAX_TURNS)
    assert ok and wins >= 2 and played <= 8
    mute = spec.model_copy(
        update={"traits": spec.traits.model_copy(update={"cooperativeness": 0.0, "patience": 3})}
    )
    assert not solvable(mute, scenario, 8, 0.25, seed=0, max_turns=MAX_TURNS)[0]


def test_bad_settings(scenario: IntakeScenario, pool: QuirkPool) -> None:
    members = population(pool, planted=False)
    check = solvability(scenario, MAX_TURNS)
    with pytest.raises(ValidationError, match="min_members 9 is above max_members 8"):
        EvolveArgs(min_members=9, max_members=8)  # refused as the study loads
    with pytest.raises(UsageError, match="two"):
        EvolveSampler(members[:1], scenario, pool, EvolveArgs(), solvable=check)
