"""A study whose agent is a language model: the same run directory, gold on what it submitted,
a warm start shared by conditions, a saved policy that plays again, and a resumed study equal to
a straight one."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import torch

from sim2human.agents.lm_models import load
from sim2human.agents.lm_policy import LMPolicy
from sim2human.cli.app import main
from sim2human.errors import UsageError
from sim2human.experiments.study import lm_condition
from sim2human.experiments.study.config import parse_study
from sim2human.experiments.study.results import StudyResult
from sim2human.experiments.study.runner import run_study
from sim2human.experiments.study.world import StudyWorld
from sim2human.metrics.task_pay import group_lift, training_groups
from sim2human.rollout.evaluate import evaluate
from sim2human.store.layout import EPISODES, POLICY, SUMMARY, WARM_START
from sim2human.store.rundir import read_episodes
from sim2human.train import copy_drill as copy_drill_module
from sim2human.train.config import LMAgentConfig
from tiny_study import TINY_LM_AGENT, study_numbers

LM: dict[str, Any] = {
    "name": "tiny-lm",
    "seeds": [0],
    "train": {"max_turns": 8},
    "agent": TINY_LM_AGENT,
    "ensemble": {"train": ["cooperative"], "heldout": ["terse-guarded"], "members_per_family": 1},
    "eval": {"episodes_per_member": 2, "bootstrap": 100},
    "conditions": [
        {
            "name": "frozen",
            "sampler": "fixed",
            "role": "frozen",
            "simulator": {"family": "standard", "seed": 1, "capacity": 0.1, "temperature": 0},
        },
        {"name": "ensemble", "sampler": "uniform"},
    ],
}


@pytest.fixture(scope="module")
def straight(tmp_path_factory: pytest.TempPathFactory) -> tuple[StudyResult, Path]:
    out = tmp_path_factory.mktemp("lm") / "run"
    return run_study(parse_study(LM), out, workers=1), out


def test_an_lm_study_is_scored_on_what_the_agent_submitted(
    straight: tuple[StudyResult, Path],
) -> None:
    study, out = straight
    row = study.row("frozen")
    assert row is not None and row.gold_rule == "submitted" and row.episodes_trained == 8
    sub = out / "conditions" / "frozen" / "seed-0"
    episodes = read_episodes(sub / EPISODES)
    assert {e.record_source for e in episodes} == {"submitted"}
    warm = [p.name for p in (out / WARM_START).iterdir() if p.is_dir()]
    assert len(warm) == 1 and warm[0].startswith("tiny-seed-0-")  # one, shared by conditions
    assert '"novel_turn_share"' in (sub / SUMMARY).read_text()
    phases = json.loads((sub / SUMMARY).read_text())["phase_seconds"]  # where its time went
    assert list(phases) == ["start", "warm_start", "grpo", "eval_train", "eval_heldout"]
    assert all(s >= 0 for s in phases.values())
    # the scripted agent (act-level) and the warm start (its tools), beside the conditions
    assert [(r.name, r.gold_rule) for r in study.reference] == [
        ("scripted", None),
        ("warm-start", "submitted"),
    ]


def test_the_warm_start_row_is_the_study_s_warm_start_played_on_the_same_calls(
    straight: tuple[StudyResult, Path],
) -> None:
    """The reference row is the shared warm start itself, at the evaluation's temperature, on
    the members and profiles the conditions meet: played again in-process, call for call."""
    study, out = straight
    cfg = parse_study(LM)
    assert isinstance(cfg.agent, LMAgentConfig)
    stored = read_episodes(out / "reference" / "warm-start" / EPISODES)
    assert {e.condition for e in stored} == {"warm-start-seed-0"}
    assert {e.record_source for e in stored} == {"submitted"}
    world = StudyWorld.build(cfg)
    (warm,) = [p for p in (out / WARM_START).iterdir() if p.is_dir()]  # no second one made
    model, tok = load(warm)
    policy = LMPolicy(
        model, tok, world.scenario, temperature=cfg.agent.eval_temperature, max_new_tokens=16
    )
    again = evaluate(
        policy,
        world.ensemble.heldout,
        world.scenario,
        split="heldout",
        per_member=2,
        condition="warm-start-seed-0",
        max_turns=8,
    )
    held = {e.id: e for e in stored if e.split == "heldout"}
    assert sorted(held) == sorted(e.id for e in again)
    for e in again:
        assert [t.text for t in e.turns] == [t.text for t in held[e.id].turns]
        assert e.gold == held[e.id].gold
    row = next(r for r in study.reference if r.name == "warm-start")
    assert row.heldout_gold.n == len(held) and row.train_gold.n == len(stored) - len(held)


def test_an_lm_study_names_its_warm_start_as_a_reference_unless_told_otherwise() -> None:
    assert parse_study(LM).reference_agents == ("scripted", "warm-start")
    assert parse_study({**LM, "reference_agents": ["scripted"]}).reference_agents == ("scripted",)
    ppo = {k: v for k, v in LM.items() if k != "agent"}
    assert parse_study(ppo).reference_agents == ("scripted",)
    with pytest.raises(UsageError, match="'warm-start' is an lm agent's supervised start"):
        parse_study({**ppo, "reference_agents": ["scripted", "warm-start"]})


def test_a_warm_start_row_clusters_its_calls_by_seed() -> None:
    """Each seed's warm start is its own model: one bootstrap cluster each, as a seed's
    trained policy is; the scripted agent's calls are one."""
    from sim2human.experiments.study.aggregate import _by_agent

    cfg = parse_study({**LM, "seeds": [0, 3]})
    episodes = [
        SimpleNamespace(condition=f"warm-start-seed-{s}", i=i) for s in (3, 0) for i in range(2)
    ]
    grouped = _by_agent("warm-start", cfg, episodes)  # type: ignore[arg-type]
    assert {s: [(e.condition, e.i) for e in eps] for s, eps in grouped.items()} == {
        0: [("warm-start-seed-0", 0), ("warm-start-seed-0", 1)],
        3: [("warm-start-seed-3", 0), ("warm-start-seed-3", 1)],
    }
    assert list(_by_agent("scripted", cfg, episodes)) == [0]  # type: ignore[arg-type]


def test_the_saved_policy_plays_again_in_process(straight: tuple[StudyResult, Path]) -> None:
    _, out = straight
    model, tok = load(out / "conditions" / "ensemble" / "seed-0" / POLICY)
    world = StudyWorld.build(parse_study(LM))
    policy = LMPolicy(model, tok, world.scenario, max_new_tokens=16)
    played = evaluate(
        policy, world.ensemble.heldout, world.scenario, split="heldout", per_member=1, max_turns=4
    )
    assert played and all(e.record_source == "submitted" for e in played)
    assert all(t.text for e in played for t in e.agent_turns)


@pytest.mark.slow
def test_a_resumed_lm_study_gives_the_numbers_of_a_straight_one(
    straight: tuple[StudyResult, Path], tmp_path: Path
) -> None:
    study, out = straight
    copy = tmp_path / "b"
    shutil.copytree(out, copy)
    broken = copy / "conditions" / "ensemble" / "seed-0"
    (broken / SUMMARY).unlink()  # killed mid-way: the sub-run has no summary
    (copy / "study.json").unlink(missing_ok=True)
    resumed = run_study(parse_study(LM), copy, workers=1, resume=True)
    assert study_numbers(resumed) == study_numbers(study)


def test_diagnose_and_export_read_an_lm_run(
    straight: tuple[StudyResult, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, out = straight
    copy = tmp_path / "run"
    shutil.copytree(out, copy)
    assert main(["diagnose", str(copy)]) == 0
    shown = capsys.readouterr().out
    assert "own words:" in shown
    assert "points of proxy" in shown or "no GRPO group's calls differed" in shown  # task pay
    assert main(["diagnose", str(copy), "--json"]) == 0
    judged = json.loads(capsys.readouterr().out)["conditions"]
    pays = [c["task_pay"] for c in judged]
    assert pays and all(p is not None and p["calls"] > 0 for p in pays)  # GRPO logged groups
    for c in judged:  # a tool agent's record beside what its calls made heard
        assert set(c["heard_unrecorded"]) <= {"train", "heldout"}
        assert all(u["unrecorded"] <= u["heard"] for u in c["heard_unrecorded"].values())
    assert ("heard, not recorded:" in shown) == any(c["heard_unrecorded"] for c in judged)
    # every call of every condition read against the warm start's on the same member and seed
    assert "against its warm start: training members" in shown
    for c in judged:
        sub = out / "conditions" / c["condition"] / "seed-0"
        evals = [e for e in read_episodes(sub / EPISODES) if e.phase == "eval"]
        paired = {g: v["change"]["n"] for g, v in c["against_start"].items()}
        assert paired == {s: sum(e.split == s for e in evals) for s in ("train", "heldout")}
        shares = c["quirk_share_against_start"]  # the trained agent's turns second
        held_turns = sum(len(e.agent_turns) for e in evals if e.split == "heldout")
        assert shares is not None and shares[1]["n"] == held_turns
    assert main(["report", str(copy)]) == 0  # the report shows it as a table
    page = (copy / "report.md").read_text()
    assert "## Against the warm start" in page and "| frozen | held-out families |" in page
    assert main(["export", str(copy), "--out", str(tmp_path / "e.jsonl")]) == 0
    assert (tmp_path / "e.jsonl").stat().st_size > 0


def test_each_grpo_step_logs_the_task_pay_its_logged_calls_give(
    straight: tuple[StudyResult, Path],
) -> None:
    """``metrics.jsonl``'s per-step ``task_pay`` is the one ``diagnose`` reads from the calls
    of that step (every call of step 0 is logged): the trainer and the reader group alike."""
    _, out = straight
    for sub in (out / "conditions").glob("*/seed-0"):
        rows = [json.loads(x) for x in (sub / "metrics.jsonl").read_text().splitlines()]
        step0 = [e for e in read_episodes(sub / EPISODES) if e.phase == "train" and e.step == 0]
        groups = training_groups(step0)
        assert len(groups) == LM["agent"]["groups"]
        lifts = [x for g in groups if (x := group_lift(g)) is not None]
        expected = sum(lifts) / len(lifts) if lifts else None
        assert rows[0]["update"] == 0 and rows[0]["task_pay"] == pytest.approx(expected)


def test_stress_and_the_call_page_play_the_trained_language_model(
    straight: tuple[StudyResult, Path], tmp_path: Path
) -> None:
    """``stress`` and the call page find an LM sub-run's ``policy/`` as they find a checkpoint,
    and play it through its tools."""
    import asyncio

    from sim2human.rollout.conversation import Conversation, Job
    from sim2human.simulators.base import UserTurn
    from sim2human.simulators.human import HumanSimulator, human_spec
    from sim2human.webapp.agents import AgentPool

    _, out = straight
    stressed = tmp_path / "stress"
    argv = ["stress", str(out), "--out", str(stressed), "--grid", "0", "--no-search"]
    assert main([*argv, "--episodes-per-member", "1", "--conditions", "frozen"]) == 0
    played = json.loads((stressed / "stress.json").read_text())["agents"]
    assert list(played) == ["frozen"] and played["frozen"]["clean"]["n"] >= 1

    pool = AgentPool.from_run(out)
    assert pool.names[:2] == ["frozen", "ensemble"]
    job = Job(spec=human_spec("t"), seed=3, split="heldout", condition="frozen")
    conv = Conversation(job, pool.scenario, HumanSimulator(job.spec), {}, pool.max_turns)
    conv.hear(UserTurn(text="Hello, I'm calling about my headache."))
    turn = asyncio.run(pool.decider("frozen", 0)(conv.observe(), 7))
    assert turn.text and turn.tool_calls is not None  # an agent that acts through tools


def test_predictivity_ranks_the_final_policies_of_an_lm_run(
    straight: tuple[StudyResult, Path],
) -> None:
    """A language model's sub-run saves its final policy alone: the pool holds one per
    sub-run (no probe checkpoints), and each plays."""
    from sim2human.experiments.research import predictivity as pred
    from sim2human.experiments.study.config import load_run_config

    _, out = straight
    cfg = load_run_config(out)
    pool = pred.build_pool(out, cfg, probes=2)
    assert [a.label for a in pool] == ["frozen/seed-0/final", "ensemble/seed-0/final"]
    world = StudyWorld.build(cfg)
    members = {"terse-guarded": world.ensemble.heldout[:1]}
    played = pred.play_agent(pool[0], cfg, world, members, pred.Budget(1, 1))
    assert [len(golds) for golds in played["terse-guarded"].values()] == [1]


def test_a_saved_policy_travels_as_bytes_to_a_worker(
    straight: tuple[StudyResult, Path], tmp_path: Path
) -> None:
    """What ``stress --executor ray`` ships: the policy folder packed, unpacked, loaded."""
    from sim2human.experiments.study.config import load_run_config
    from sim2human.experiments.study.trained_agents import load_saved, pack, saved_agent, unpack

    _, out = straight
    cfg = load_run_config(out)
    saved = saved_agent(out / "conditions" / "frozen" / "seed-0", cfg)
    moved = unpack(pack(saved), saved.name, tmp_path)
    assert sorted(p.name for p in moved.iterdir()) == sorted(p.name for p in saved.iterdir())
    agent = load_saved(moved, cfg, StudyWorld.build(cfg).scenario, 0)
    assert isinstance(agent, LMPolicy)


def test_the_warm_start_is_made_with_its_threads_and_named_without_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg = parse_study(LM)
    assert isinstance(cfg.agent, LMAgentConfig)
    world = StudyWorld.build(cfg)
    seen: list[int] = []
    real = lm_condition.fine_tune

    def counting(*args: Any, **kw: Any) -> list[float]:
        seen.append(torch.get_num_threads())
        return real(*args, **kw)

    monkeypatch.setattr(lm_condition, "fine_tune", counting)
    three = cfg.agent.warm_start.model_copy(update={"threads": 3})
    before = torch.get_num_threads()
    made = lm_condition.warm_start(
        cfg, cfg.agent.model_copy(update={"warm_start": three}), world, 0, tmp_path
    )
    assert seen == [3] and torch.get_num_threads() == before  # set while making, then restored
    assert made == lm_condition.warm_start_dir(tmp_path, cfg.agent, world, 0)  # not in its name
    assert lm_condition.warm_start(cfg, cfg.agent, world, 0, tmp_path) == made  # so reused
    assert seen == [3]


def test_a_changed_drill_names_another_warm_start(monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = parse_study(LM)
    assert isinstance(cfg.agent, LMAgentConfig)
    world = StudyWorld.build(cfg)
    drilled = cfg.agent.model_copy(
        update={"warm_start": cfg.agent.warm_start.model_copy(update={"copy_drill": 5})}
    )
    before = lm_condition.warm_start_dir(Path("ws"), drilled, world, 0)
    monkeypatch.setattr(copy_drill_module, "RUN", (1, 2))
    assert lm_condition.warm_start_dir(Path("ws"), drilled, world, 0) != before


def test_log_to_tensorboard_draws_an_lm_sub_runs_grpo_curves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--log-to`` reaches a language-model sub-run: each GRPO step's row, by episodes seen."""
    accumulator = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")
    monkeypatch.delenv("SIM2HUMAN_LOG_TO", raising=False)
    config = tmp_path / "lm.yaml"
    config.write_text(json.dumps({**LM, "conditions": LM["conditions"][:1]}), encoding="utf-8")
    out = tmp_path / "run"
    argv = ["study", str(config), "--out", str(out), "--workers", "1", "--log-to", "tensorboard"]
    assert main(argv) == 0
    sub = out / "conditions" / "frozen" / "seed-0"
    rows = [json.loads(x) for x in (sub / "metrics.jsonl").read_text().splitlines()]
    acc = accumulator.EventAccumulator(str(sub / "tensorboard"))
    acc.Reload()
    for tag, key in (
        ("proxy/train", "train_proxy"),
        ("train/group_reward_std", "group_reward_std"),
    ):
        got = [(e.step, e.value) for e in acc.Scalars(tag)]
        assert got == [(r["episodes_seen"], pytest.approx(r[key], abs=1e-6)) for r in rows]


@pytest.mark.parametrize(
    ("quick_study", "design"),
    [
        ("lm-support.yaml", "lm-support-60-steps.yaml"),
        ("lm-collapse.yaml", "lm-intake-60-steps.yaml"),
    ],
)
def test_a_60_step_design_shares_its_quick_study_s_warm_start(
    quick_study: str, design: str
) -> None:
    """``examples/design/lm-*-60-steps.yaml`` say a warm start made by their scenario's quick
    study can be copied into their run: the same folder name, and nothing else changed but the
    GRPO steps, the perturbation condition they leave out and any condition they add (the
    booking desk's adaptive ensemble)."""
    from sim2human.experiments.study.config import load_study

    examples = Path(__file__).resolve().parents[2] / "examples"
    base = load_study(examples / quick_study, quick=True)
    longer = load_study(examples / "design" / design, quick=True)
    assert isinstance(base.agent, LMAgentConfig) and isinstance(longer.agent, LMAgentConfig)
    assert (base.agent.steps, longer.agent.steps) == (20, 60)
    assert base.agent.model_copy(update={"steps": 60}) == longer.agent
    assert [c.name for c in longer.conditions][:2] == [c.name for c in base.conditions][:2]
    assert longer.conditions[:2] == base.conditions[:2] and longer.eval == base.eval
    folders = {
        lm_condition.warm_start_dir(Path("ws"), cfg.agent, StudyWorld.build(cfg), 0)  # type: ignore[arg-type]
        for cfg in (base, longer)
    }
    assert len(folders) == 1
