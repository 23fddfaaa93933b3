"""``sim2human export``: every format round-trips what was stored."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from sim2human.cli.app import main
from sim2human.integrations.population import population
from sim2human.store.layout import EPISODES
from sim2human.store.rundir import read_episodes
from sim2human.types import Turn

gymnasium = pytest.importorskip("gymnasium")
from sim2human.integrations.gym import ConversationEnv  # noqa: E402
from sim2human.integrations.runlog import RunLog  # noqa: E402


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[tuple]]:
    """A run directory of 6 episodes played through the env, with what the env observed."""
    run = tmp_path_factory.mktemp("run")
    pop = population()
    steps = []
    with RunLog(run, pop, trainer="test") as log:
        for split in ("train", "heldout"):
            env = ConversationEnv(pop, split=split, log=log)  # type: ignore[arg-type]
            rng = np.random.default_rng(1)
            for seed in range(3):
                obs, _ = env.reset(seed=seed)
                done = False
                while not done:
                    a = int(rng.integers(env.action_space.n))
                    nxt, _, term, trunc, _ = env.step(a)
                    steps.append((obs, a, nxt, term or trunc))
                    obs, done = nxt, term or trunc
    return run, steps


def test_openai_chat_round_trips_turns_and_labels(played: tuple, tmp_path: Path) -> None:
    run, _ = played
    assert (
        main(["export", str(run), "--format", "openai-chat", "--out", str(tmp_path / "c.jsonl")])
        == 0
    )
    rows = [json.loads(x) for x in (tmp_path / "c.jsonl").read_text().splitlines()]
    episodes = read_episodes(run / EPISODES)
    assert len(rows) == len(episodes) == 6
    for row, e in zip(rows, episodes, strict=True):
        assert row["messages"][0]["role"] == "system"
        back = tuple(
            Turn(speaker="agent" if m["role"] == "assistant" else "user", text=m["content"])
            for m in row["messages"][1:]
        )
        assert [(t.speaker, t.text) for t in back] == [(t.speaker, t.text) for t in e.turns]
        assert (row["proxy"], row["gold"], row["member"], row["family"], row["kind"]) == (
            e.proxy,
            float(e.gold.success),
            e.simulator_id,
            e.family,
            "persona",
        )


def test_split_and_min_gold_filter(played: tuple, tmp_path: Path) -> None:
    run, _ = played
    out = tmp_path / "h.jsonl"
    assert (
        main(["export", str(run), "--split", "heldout", "--min-gold", "1", "--out", str(out)]) == 0
    )
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert all(r["split"] == "heldout" and r["gold"] == 1.0 for r in rows)
    assert main(["export", str(run), "--format", "nope"]) == 2
    assert main(["export", str(tmp_path / "missing")]) == 2


def test_art_records_validate_as_trajectories(played: tuple, tmp_path: Path) -> None:
    run, _ = played
    out = tmp_path / "a.jsonl"
    assert main(["export", str(run), "--format", "art", "--out", str(out)]) == 0
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    episodes = read_episodes(run / EPISODES)
    assert [r["reward"] for r in rows] == [e.proxy for e in episodes]
    if importlib.util.find_spec("art") is None:
        pytest.skip("openpipe-art is not installed")
    from sim2human.integrations.art import art  # imported without ART's transformers patch

    trajs = [art.Trajectory.model_validate(r) for r in rows]
    assert trajs[0].metrics["gold"] == float(episodes[0].gold.success)


def test_sb3_buffer_replays_exactly_what_the_env_observed(played: tuple, tmp_path: Path) -> None:
    run, steps = played
    out = tmp_path / "b.npz"
    assert main(["export", str(run), "--format", "sb3-buffer", "--out", str(out)]) == 0
    data = np.load(out)
    assert len(data["actions"]) == len(steps)
    np.testing.assert_array_equal(data["observations"], np.stack([s[0] for s in steps]))
    np.testing.assert_array_equal(data["next_observations"], np.stack([s[2] for s in steps]))
    assert data["actions"].tolist() == [s[1] for s in steps]
    assert data["dones"].tolist() == [s[3] for s in steps]
    episodes = read_episodes(run / EPISODES)
    returns = np.bincount(data["episode"], weights=data["rewards"])
    np.testing.assert_allclose(returns, [e.proxy for e in episodes], rtol=1e-6)


def test_sb3_buffer_is_written_where_asked(played: tuple, tmp_path: Path) -> None:
    run, _ = played
    out = tmp_path / "buffer"  # no .npz: numpy used to add one behind the caller's back
    assert main(["export", str(run), "--format", "sb3-buffer", "--out", str(out)]) == 0
    assert np.load(out)["actions"].size > 0 and not (tmp_path / "buffer.npz").exists()
