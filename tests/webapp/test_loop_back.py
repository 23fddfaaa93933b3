"""Recorded calls flow back: compared with simulators, exported for report/diagnose, and
replayed as ``human-replay`` members of the next study's ensemble."""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np
import pytest
from webapp_helpers import answer, opening

from planted_runs import study_result, study_row
from sim2human.diagnostics.rundir import load_run_dir
from sim2human.experiments.research.human_eval import compare, export_run, fold_in, spearman
from sim2human.experiments.study.config import parse_study
from sim2human.experiments.study.results import write_study_result
from sim2human.experiments.study.world import StudyWorld
from sim2human.rollout.conversation import MAX_TURNS, Job, job_profile
from sim2human.rollout.play import play
from sim2human.rollout.play_async import play_one
from sim2human.simulators.base import UserTurn
from sim2human.simulators.human import HumanSimulator, NoReplyYet, human_spec
from sim2human.simulators.human_replay import HumanReplayMembers
from sim2human.simulators.kinds import build_simulator
from sim2human.store.calls import HumanStore
from sim2human.types import Episode, Outcome, Termination
from sim2human.webapp.agents import AgentPool
from sim2human.webapp.calls import Calls


def record_calls(run_dir: Path, db: Path, n: int, agents: list[str] | None = None) -> Calls:
    calls = Calls(HumanStore(db), AgentPool.from_run(run_dir, agents))
    for i in range(n):
        _, token = calls.start("card")
        s = calls.store.by_token(token)
        assert s is not None and s.profile is not None
        calls.begin(s)
        text = opening(s.profile)
        while (s := calls.store.by_token(token)) is not None and s.status == "calling":
            asyncio.run(calls.say(s, len(s.turns), text))
            s = calls.store.by_token(token)
            assert s is not None and s.profile is not None
            text = answer(s.profile, s.turns[-1].field)
        assert s is not None
        calls.rate(s, 1 + i % 5, "yes", "")
    return calls


def fake_episode(agent: str, i: int, success: bool) -> Episode:
    gold = Outcome(success=success, fields={"a": success}, completed=True, dropped=False)
    return Episode(
        id=f"human/{agent}/{i}",
        scenario="intake",
        simulator_id=f"human:{i}",
        family="human",
        split="heldout",
        seed=i,
        turns=(),
        proxy=0.5,
        gold=gold,
        termination=Termination.COMPLETED,
        profile={},
        record={},
        condition=agent,
        phase="eval",
    )


def test_spearman() -> None:
    assert spearman([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1.0)
    assert spearman([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    assert spearman([1, 2, 2, 3], [1, 2, 3, 4]) == pytest.approx(0.9486833)  # ties: mid-ranks
    assert spearman([1, 2], [1, 2]) is None and spearman([1, 1, 1], [1, 2, 3]) is None


def test_compare_ranks_families_by_how_they_predict_people() -> None:
    human_rate = {"a": 0.9, "b": 0.5, "c": 0.1}  # people: a > b > c
    episodes = [fake_episode(a, i, i < 20 * p) for a, p in human_rate.items() for i in range(20)]

    def row(name: str, good: float, bad: float) -> dict[str, object]:
        return study_row(
            name,
            heldout_gold={"mean": good, "ci": [good, good], "n": 10},
            heldout_gold_by_family={"faithful": good, "inverted": bad},
        )

    study = study_result(row("a", 0.8, 0.1), row("b", 0.5, 0.5), reference=[row("c", 0.2, 0.9)])
    result = compare(study, [*episodes, fake_episode("gone", 0, True)])
    fam = {f["family"]: f for f in result["families"]}
    assert fam["faithful"]["spearman"] == pytest.approx(1.0)
    assert fam["inverted"]["spearman"] == pytest.approx(-1.0)
    assert fam["faithful"]["mean_abs_gap"] == pytest.approx(np.mean([0.1, 0.0, 0.1]))
    lo, hi = fam["faithful"]["mean_abs_gap_ci"]
    assert lo <= fam["faithful"]["mean_abs_gap"] <= hi
    assert [a["agent"] for a in result["agents"]] == ["a", "b", "c"]
    assert result["agents"][0]["human_gold"]["n"] == 20 and result["unmatched_agents"] == ["gone"]


def test_fold_in_and_export_read_like_any_run(run_dir: Path, db: Path, tmp_path: Path) -> None:
    calls = record_calls(run_dir, db, 3, ["scripted"])
    scripted = study_row(
        "scripted",
        heldout_gold={"mean": 0.8, "ci": [0.7, 0.9], "n": 90},
        heldout_gold_by_family={"noisy-line": 0.7},
    )
    run = tmp_path / "study"
    write_study_result(run, study_result(reference=[scripted]))
    result = fold_in(run, db)
    assert result["calls"] == 3 and (run / "human.md").read_text().startswith("# Human calls")
    out = tmp_path / "export"
    assert export_run(calls.store.episodes(), out) == 3
    loaded = load_run_dir(out)
    (sub,) = loaded.conditions["scripted"]
    assert len(sub.evals) == 3 and {e.family for e in sub.evals} == {"human"}
    assert sub.problems == [] and sub.heldout[0].kind == "human"


def test_human_simulator_queue_and_terminal_engine(scenario: object) -> None:
    sim = HumanSimulator(human_spec("t"))
    with pytest.raises(NoReplyYet):
        sim.reply("hello?")
    sim.push("hi")
    assert sim.reply("hello?").text == "hi" and sim.satisfaction() == 0.5
    sim.rating = 5
    assert sim.satisfaction() == 1.0
    said = iter(["Hello, I'm calling about my headache.", "", "/hangup"])

    async def ask(agent_text: str) -> UserTurn:
        line = next(said)
        return UserTurn(text="", done=True) if line == "/hangup" else UserTurn(text=line)

    from sim2human.agents.scripted import ScriptedAgent

    agent = ScriptedAgent(scenario)  # type: ignore[arg-type]

    async def decide(i: int, obs: object) -> object:
        return agent.act([obs])[0]  # type: ignore[list-item]

    job = Job(spec=human_spec("t"), seed=1, split="heldout", condition="scripted")
    person = HumanSimulator(job.spec, ask)
    played = asyncio.run(play_one(0, job, scenario, person, decide, max_turns=MAX_TURNS))  # type: ignore[arg-type]
    assert played.episode.termination == Termination.HUNG_UP and played.episode.family == "human"
    assert [t.speaker for t in played.episode.turns] == ["user", "agent", "user", "agent", "user"]


def test_recorded_calls_become_replay_members(run_dir: Path, db: Path, scenario: object) -> None:
    calls = record_calls(run_dir, db, 3, ["scripted"])
    members = HumanReplayMembers(db=str(db), split="train").draw(scenario)  # type: ignore[arg-type]
    assert len(members) == 3 and {m.kind for m in members} == {"human-replay"}
    sessions = {s.id: s for s in calls.store.sessions()}
    spec = members[0]
    recorded = sessions[spec.id.removeprefix("human-replay:")]
    job = Job(spec=spec, seed=7)
    assert job_profile(job, scenario) == recorded.profile  # type: ignore[arg-type]
    sim = build_simulator(spec, scenario)  # type: ignore[arg-type]
    assert sim.start({}, np.random.default_rng(0)).text == opening(recorded.profile or {})
    from sim2human.agents.scripted import ScriptedAgent

    (ep,) = play(ScriptedAgent(scenario), [job], scenario, max_turns=MAX_TURNS)  # type: ignore[arg-type]
    assert ep.family == "human-replay" and ep.gold.success  # the same questions, same answers
    assert ep.proxy == pytest.approx((recorded.rating - 1) / 4)  # type: ignore[operator]

    replay = {"db": str(db), "split": "heldout", "max_members": 2}
    raw = {
        "name": "next",
        "seeds": [0],
        "conditions": [{"name": "u", "sampler": "uniform"}],
        "ensemble": {"human_replay": replay},
    }
    world = StudyWorld.build(parse_study(raw))
    assert sum(m.kind == "human-replay" for m in world.ensemble.heldout) == 2
    assert all(m.kind == "persona" for m in world.ensemble.train)


def test_call_bootstrap_matches_the_cluster_bootstrap_with_one_call_per_cluster() -> None:
    from sim2human.experiments.research.human_eval import call_bootstrap
    from sim2human.metrics.outcomes import cluster_bootstrap

    values = [float(i % 3 == 0) for i in range(40)]
    fast = call_bootstrap(values)
    slow = cluster_bootstrap(values, list(range(40)))
    assert fast.mean == slow.mean and fast.n == slow.n == 40
    assert abs(fast.ci[0] - slow.ci[0]) < 0.06 and abs(fast.ci[1] - slow.ci[1]) < 0.06


def test_study_with_human_prints_the_comparison(
    run_dir: Path,
    db: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    import sim2human.cli.app as cli

    record_calls(run_dir, db, 2, ["scripted"])
    out = tmp_path / "study"
    row = study_row(
        "scripted",
        heldout_gold={"mean": 0.8, "ci": [0.7, 0.9], "n": 90},
        heldout_gold_by_family={"noisy-line": 0.7},
    )
    write_study_result(out, study_result(reference=[row]))
    monkeypatch.setattr(cli, "_run", lambda *a, **k: out)  # the study itself is tested elsewhere
    config = tmp_path / "s.yaml"
    config.write_text("name: s\nseeds: [0]\nconditions: [{name: u, sampler: uniform}]\n")
    assert cli.main(["study", str(config), "--human", str(db)]) == 0
    printed = capsys.readouterr().out
    assert "human calls (2) vs simulators" in printed and "noisy-line" in printed
    assert (out / "human.json").is_file()
