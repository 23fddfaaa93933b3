"""Stable-Baselines3 PPO on sim2human environments, beside the built-in trainer.

    python examples/sb3_ppo.py                      # the table in docs/guides/integrations.md
    python examples/sb3_ppo.py --episodes 200 --per-member 2     # a smoke run

For each condition (the single frozen simulator, and the randomized ensemble) it trains
(a) SB3's PPO on ``sim2human.integrations.gym`` environments and (b) sim2human's own PPO, with
the same budget of environment steps (the built-in trainer's episodes, counted in agent turns),
then evaluates both with sim2human's own evaluation on the held-out families (same members,
same hidden profiles) and writes each evaluation as a run directory under ``--out`` that
``sim2human report`` / ``diagnose`` read. Prints a markdown table and writes ``results.json``.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from sim2human.agents.policy import PolicyAgent
from sim2human.integrations.evaluation import evaluate_agent
from sim2human.integrations.gym import ActionAgent, ConversationEnv
from sim2human.integrations.population import Population, population
from sim2human.metrics.outcomes import cluster_bootstrap
from sim2human.train.ppo import train
from sim2human.types import Episode


def builtin(pop: Population, episodes: int, seed: int, cfg: Any) -> tuple[PolicyAgent, int, float]:
    """sim2human's PPO: (agent, environment steps, seconds)."""
    torch.manual_seed(seed)
    agent = PolicyAgent(pop.scenario, seed=seed)
    steps = 0

    def count(_: object, eps: Sequence[Episode]) -> None:
        nonlocal steps
        steps += sum(e.n_turns for e in eps)

    started = time.perf_counter()
    train(
        agent,
        pop.sampler,
        pop.scenario,
        cfg.model_copy(update={"episodes": episodes}),
        seed,
        condition=pop.condition,
        on_update=count,
    )
    return agent, steps, time.perf_counter() - started


def sb3(pop: Population, steps: int, seed: int, n_envs: int) -> tuple[ActionAgent, float]:
    """SB3's PPO on ``n_envs`` vectorised ConversationEnvs: (agent, seconds)."""
    from stable_baselines3 import PPO
    from stable_baselines3.common.env_util import make_vec_env

    vec = make_vec_env(lambda: ConversationEnv(pop), n_envs=n_envs, seed=seed)
    model = PPO(
        "MlpPolicy",
        vec,
        gamma=1.0,
        gae_lambda=0.95,
        ent_coef=0.005,
        n_steps=256,
        batch_size=256,
        seed=seed,
        device="cpu",
        verbose=0,
    )
    started = time.perf_counter()
    model.learn(total_timesteps=steps)
    seconds = time.perf_counter() - started

    def predict(x: np.ndarray) -> np.ndarray:
        return model.predict(x, deterministic=False)[0]

    return ActionAgent(pop.scenario, predict), seconds


def estimate(episodes: Sequence[Episode], split: str) -> dict[str, Any]:
    eps = [e for e in episodes if e.split == split]
    r = cluster_bootstrap([float(e.gold.success) for e in eps], [e.simulator_id for e in eps])
    return {"mean": r.mean, "ci": list(r.ci), "n": r.n}


def main(argv: Sequence[str] | None = None) -> list[dict[str, Any]]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--study", default=str(Path(__file__).with_name("collapse.yaml")))
    ap.add_argument("--conditions", default="frozen-small,ensemble-randomized")
    ap.add_argument("--episodes", type=int, default=3200, help="built-in trainer's budget")
    ap.add_argument("--seeds", default="0")
    ap.add_argument("--per-member", type=int, default=20, help="evaluation episodes per member")
    ap.add_argument("--n-envs", type=int, default=8)
    ap.add_argument("--out", default="runs/sb3-vs-builtin")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    from sim2human.experiments.study.config import load_study

    cfg = load_study(Path(args.study)).train
    rows = []
    for condition in args.conditions.split(","):
        for seed in (int(s) for s in args.seeds.split(",")):
            pop = population(args.study, condition=condition, seed=seed)
            agent, steps, b_s = builtin(pop, args.episodes, seed, cfg)
            where = Path(args.out) / condition
            b_eval = evaluate_agent(
                agent,
                pop,
                per_member=args.per_member,
                trainer="sim2human",
                out=where / f"builtin-seed-{seed}",
            )
            pop = population(args.study, condition=condition, seed=seed)
            ext, s_s = sb3(pop, steps, seed, args.n_envs)
            s_eval = evaluate_agent(
                ext, pop, per_member=args.per_member, trainer="sb3", out=where / f"sb3-seed-{seed}"
            )
            for name, evals, secs in (("built-in PPO", b_eval, b_s), ("SB3 PPO", s_eval, s_s)):
                rows.append(
                    {
                        "condition": condition,
                        "trainer": name,
                        "seed": seed,
                        "steps": steps,
                        "train_gold": estimate(evals, "train"),
                        "heldout_gold": estimate(evals, "heldout"),
                        "train_proxy": float(
                            np.mean([e.proxy for e in evals if e.split == "train"])
                        ),
                        "seconds": round(secs, 1),
                        "steps_per_s": round(steps / secs),
                    }
                )
    Path(args.out).mkdir(parents=True, exist_ok=True)
    (Path(args.out) / "results.json").write_text(json.dumps(rows, indent=1), encoding="utf-8")
    print(table(rows))
    return rows


def table(rows: Sequence[dict[str, Any]]) -> str:
    def f(e: dict[str, Any]) -> str:
        return f"{100 * e['mean']:.0f} [{100 * e['ci'][0]:.0f}, {100 * e['ci'][1]:.0f}]"

    out = [
        "| condition | trainer | seed | env steps | train proxy | train gold | held-out gold "
        "(n) | steps/s |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        out.append(
            f"| {r['condition']} | {r['trainer']} | {r['seed']} | {r['steps']} | "
            f"{100 * r['train_proxy']:.0f} | {f(r['train_gold'])} | "
            f"{f(r['heldout_gold'])} ({r['heldout_gold']['n']}) | "
            f"{r['steps_per_s']} |"
        )
    return "\n".join(out)


if __name__ == "__main__":
    main()
