"""The Gymnasium environment: the API contract, rewards, endings, seeding, vectorised use."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("gymnasium")
import gymnasium
from gymnasium.utils.env_checker import check_env

from sim2human.diagnostics.analyse import diagnose
from sim2human.diagnostics.rundir import load_run_dir
from sim2human.diagnostics.verdict import Thresholds
from sim2human.errors import ModelUnavailableError, UsageError
from sim2human.integrations._extra import require
from sim2human.integrations.evaluation import evaluate_agent
from sim2human.integrations.gym import ActionAgent, ConversationEnv, make_env
from sim2human.integrations.population import population

STUDY = Path(__file__).parents[2] / "examples" / "collapse.yaml"


def play(env: ConversationEnv, seed: int, actions: np.random.Generator) -> tuple[float, dict]:
    env.reset(seed=seed)
    ret, done, info = 0.0, False, {}
    while not done:
        _, r, term, trunc, info = env.step(int(actions.integers(env.action_space.n)))
        ret += float(r)
        done = term or trunc
    return ret, info


def test_gymnasium_and_sb3_checkers_pass() -> None:
    sb3_checker = pytest.importorskip("stable_baselines3.common.env_checker")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # unbounded Box and no registered spec: warnings only
        check_env(make_env(STUDY, condition="frozen-small"))
        check_env(make_env(observation="text"))
        sb3_checker.check_env(make_env(STUDY, condition="ensemble-randomized"))


def test_return_is_the_proxy_and_gold_and_member_come_at_the_end() -> None:
    env = make_env(STUDY, condition="ensemble-uniform")
    rng = np.random.default_rng(0)
    for seed in range(5):
        ret, info = play(env, seed, rng)
        episode = info["sim2human_episode"]
        assert ret == pytest.approx(episode.proxy, abs=1e-6) == pytest.approx(info["proxy"])
        assert info["gold"] == float(episode.gold.success)
        assert info["member"] == episode.simulator_id
        assert episode.family in {"cooperative", "chatty", "anxious"}


def test_turn_limit_truncates_and_a_closed_call_terminates() -> None:
    env = make_env(max_turns=2)
    env.reset(seed=3)
    greet = env.act_ids.index(next(a for a in env.act_ids if a.startswith("greet")))
    _, _, term, trunc, _ = env.step(greet)
    assert not term and not trunc
    _, _, term, trunc, info = env.step(greet)
    assert (term, trunc) == (False, True) and info["termination"] == "max_turns"
    with pytest.raises(RuntimeError):
        env.step(greet)
    env = make_env()
    close = next(i for i, a in enumerate(env.pop.scenario.acts) if a.kind == "close")
    env.reset(seed=4)
    _, _, term, trunc, info = env.step(close)
    assert term and not trunc and info["termination"] in ("completed", "hung_up")


def test_seeding_reproduces_members_and_transcripts() -> None:
    a, b = make_env(observation="text"), make_env(observation="text")
    for seed in (0, 1, 2):
        oa, ia = a.reset(seed=seed)
        ob, ib = b.reset(seed=seed)
        assert (oa, ia) == (ob, ib)
        for act in (0, 3, 5):
            assert a.step(act)[0] == b.step(act)[0]
    members = {make_env().reset(seed=s)[1]["member"] for s in range(8)}
    assert len(members) > 1  # the sampler draws different members for different seeds


def test_heldout_split_plays_only_heldout_families() -> None:
    env = make_env(STUDY, split="heldout")
    families = {env.reset(seed=s)[1]["family"] for s in range(20)}
    assert families <= {"elderly-confused", "noisy-line", "terse-guarded"} and len(families) > 1
    assert env.phase == "eval"


def test_vector_env_steps_a_batch() -> None:
    vec = gymnasium.vector.SyncVectorEnv([lambda i=i: make_env(seed=i) for i in range(3)])
    obs, _ = vec.reset(seed=0)
    size = vec.single_observation_space.shape[0]
    assert obs.shape == (3, size)
    ends = 0
    for _ in range(60):
        obs, _, term, trunc, _ = vec.step(vec.action_space.sample())
        ends += int(np.sum(term | trunc))
    assert obs.shape == (3, size) and ends > 0


def test_bad_input_and_missing_extra_are_named() -> None:
    with pytest.raises(UsageError, match="split"):
        make_env(split="test")  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="no condition 'nope'"):
        make_env(STUDY, condition="nope")
    with pytest.raises(UsageError, match="observation"):
        make_env(observation="pixels")  # type: ignore[arg-type]
    with pytest.raises(ModelUnavailableError, match=r"sim2human\[gym\]"):
        require("no_such_module_for_sim2human", "gym")


def test_external_agent_is_evaluated_into_a_run_dir_diagnose_reads(tmp_path: Path) -> None:
    pop = population(STUDY, condition="frozen-small")
    agent = ActionAgent(pop.scenario, lambda x: np.zeros(len(x), dtype=np.int64))
    evals = evaluate_agent(agent, pop, per_member=1, out=tmp_path / "run", trainer="test")
    assert {e.split for e in evals} == {"train", "heldout"}
    assert sum(e.split == "train" for e in evals) == 1  # frozen: the one simulator it trained on
    run = load_run_dir(tmp_path / "run")
    assert run.kind == "evaluation" and not run.all_problems()  # it trained nothing here
    d = diagnose(run, Thresholds())
    verdict = d.conditions[0].verdict  # read and judged; this tiny agent never succeeds
    assert verdict.checked or verdict.cannot_judge, verdict.headline
