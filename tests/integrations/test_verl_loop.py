"""verl: the agent loop against a recorded fake of verl's types (verl cannot import on CPU)."""

from __future__ import annotations

import asyncio
import importlib
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import fake_verl
import pytest

from sim2human.integrations.population import population
from sim2human.integrations.rows import draw_rows
from sim2human.store.layout import EPISODES
from sim2human.store.rundir import read_episodes

LINES = [
    "Hello, this is the clinic. What is the main problem today?",
    "When did it start?",
    "How bad is it out of ten?",
    "Thank you, goodbye.",
]


class Server:
    """verl's LLM server: answers each generate call with the next scripted agent line."""

    def __init__(self, tokenizer: fake_verl.CharTokenizer) -> None:
        self.tokenizer, self.calls = tokenizer, 0

    async def generate(
        self,
        *,
        request_id: str,
        prompt_ids: list[int],
        sampling_params: dict[str, Any],
        **_: Any,
    ) -> fake_verl.TokenOutput:
        text = LINES[min(self.calls, len(LINES) - 1)]
        self.calls += 1
        ids = self.tokenizer.encode(text)
        return fake_verl.TokenOutput(token_ids=ids, log_probs=[-0.5] * len(ids))


@pytest.fixture()
def verl_module(monkeypatch: pytest.MonkeyPatch) -> Any:
    saved = {k: v for k, v in sys.modules.items() if k == "verl" or k.startswith("verl.")}
    fake_verl.install()
    sys.modules.pop("sim2human.integrations.verl", None)
    yield importlib.import_module("sim2human.integrations.verl")
    sys.modules.pop("sim2human.integrations.verl", None)
    for k in [k for k in sys.modules if k == "verl" or k.startswith("verl.")]:
        del sys.modules[k]
    sys.modules.update(saved)


def make_loop(verl: Any, tmp_path: Path, response_length: int = 4000) -> Any:
    tok = fake_verl.CharTokenizer()
    rollout = SimpleNamespace(response_length=response_length, prompt_length=4000)
    config = SimpleNamespace(actor_rollout_ref=SimpleNamespace(rollout=rollout))
    return verl.SimulatedUserAgentLoop(
        fake_verl.DictConfigWrap(config),
        Server(tok),
        tok,
        None,
        None,
        fake_verl.DictConfigWrap({}),
        pop=population(),
        log_dir=str(tmp_path),
    )


def test_user_turns_are_masked_out_and_reward_is_the_proxy(
    verl_module: Any, tmp_path: Path
) -> None:
    loop = make_loop(verl_module, tmp_path)
    row = draw_rows(loop.pop, 1, tools=False)[0]
    verl_row = {
        "raw_prompt": row["prompt"],
        "extra_info": {k: row[k] for k in ("member", "seed", "spec")},
    }
    out = asyncio.run(loop.run({"temperature": 1.0}, **verl_row))
    loop.log.close()
    episode = read_episodes(tmp_path / EPISODES)[0]
    assert out.reward_score == pytest.approx(episode.proxy)
    assert out.extra_fields["gold"] == float(episode.gold.success)
    assert out.extra_fields["member"] == row["member"] == episode.simulator_id
    assert len(out.response_ids) == len(out.response_mask)
    tok = fake_verl.CharTokenizer()
    said = tok.decode([i for i, m in zip(out.response_ids, out.response_mask, strict=True) if m])
    heard = tok.decode(
        [i for i, m in zip(out.response_ids, out.response_mask, strict=True) if not m]
    )
    agent = [t.text for t in episode.agent_turns]
    users = [t.text for t in episode.turns if t.speaker == "user"]
    assert said == "".join(agent)  # exactly the policy's tokens are trained on
    assert all(u in heard for u in users[1 : len(agent)])  # the caller's answers: mask 0
    assert users[0] in tok.decode(out.prompt_ids)  # the opening line is in the prompt


def test_out_of_tokens_ends_the_call_and_caps_the_response(
    verl_module: Any, tmp_path: Path
) -> None:
    loop = make_loop(verl_module, tmp_path, response_length=80)
    row = draw_rows(loop.pop, 1, tools=False)[0]
    out = asyncio.run(
        loop.run(
            {}, raw_prompt=row["prompt"], member=row["member"], seed=row["seed"], spec=row["spec"]
        )
    )
    assert len(out.response_ids) <= 80 and len(out.response_mask) <= 80
    assert 0 <= out.reward_score <= 1


def test_a_row_without_a_seed_is_refused(verl_module: Any, tmp_path: Path) -> None:
    loop = make_loop(verl_module, tmp_path)
    with pytest.raises(ValueError, match="seed"):
        asyncio.run(loop.run({}, raw_prompt=[{"role": "user", "content": ""}]))
