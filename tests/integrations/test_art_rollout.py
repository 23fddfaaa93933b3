"""ART: the rollout returns a real ``art.Trajectory`` (ART's client side installs on CPU)."""

from __future__ import annotations

import asyncio
import importlib.util
from pathlib import Path
from typing import Any

import pytest

if importlib.util.find_spec("art") is None:  # not importorskip: a bare `import art` patches
    pytest.skip("openpipe-art is not installed", allow_module_level=True)  # transformers
from openai.types.chat import ChatCompletion

from sim2human.integrations.art import art, rollout
from sim2human.integrations.population import population
from sim2human.integrations.rows import draw_rows
from sim2human.integrations.runlog import RunLog
from sim2human.store.layout import EPISODES
from sim2human.store.rundir import read_episodes

LINES = [
    "Hello, this is the clinic. What is the main problem today?",
    "When did it start?",
    "Any allergies?",
    "Thank you for calling, goodbye.",
]


class Client:
    """The model's OpenAI client: scripted completions as real ``ChatCompletion`` objects."""

    def __init__(self) -> None:
        self.chat = self
        self.completions = self
        self.seen: list[list[dict[str, Any]]] = []

    async def create(
        self, *, model: str, messages: list[dict[str, Any]], **_: Any
    ) -> ChatCompletion:
        self.seen.append(messages)
        text = LINES[min(len(self.seen) - 1, len(LINES) - 1)]
        return ChatCompletion.model_validate(
            {
                "id": f"c{len(self.seen)}",
                "object": "chat.completion",
                "created": 0,
                "model": model,
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "stop",
                        "logprobs": None,
                        "message": {"role": "assistant", "content": text},
                    }
                ],
            }
        )


class Model:
    name = "agent"

    def get_inference_name(self) -> str:
        return "agent"


def test_rollout_is_a_trajectory_with_proxy_reward_and_gold_metrics(tmp_path: Path) -> None:
    pop = population()
    row = draw_rows(pop, 1, tools=False)[0]
    client = Client()
    with RunLog(tmp_path, pop, trainer="art") as log:
        traj = asyncio.run(rollout(Model(), pop, row, client=client, log=log))
    assert isinstance(traj, art.Trajectory)
    episode = read_episodes(tmp_path / EPISODES)[0]
    assert traj.reward == pytest.approx(episode.proxy)
    assert traj.metrics["gold"] == float(episode.gold.success)
    assert traj.metadata["member"] == row["member"] == episode.simulator_id
    choices = [m for m in traj.messages_and_choices if not isinstance(m, dict)]
    assert len(choices) == episode.n_turns  # the agent's turns are the model's Choices
    roles = [m["role"] for m in traj.messages()]
    assert roles[:2] == ["system", "user"] and roles.count("assistant") == episode.n_turns
    # The model saw the conversation so far, the caller as `user`.
    assert client.seen[1][-1] == {"role": "user", "content": episode.turns[2].text}
