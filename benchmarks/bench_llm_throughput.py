"""Does the rollout engine keep the embedded model as busy as direct calls do?

Side by side in one run, alternating so that load from other processes hits both alike:
  direct  N chat requests at concurrency C straight through ``ChatClient``, with persona prompts
          of the same shape and the same ``max_tokens`` as the simulator sends;
  engine  the async rollout engine playing scripted-agent conversations against ``llm`` members
          with C conversations in flight.
Prints decode tokens/s of each and their ratio (the issue asks for >= 0.90). No cache: every
token is decoded.

    PYTHONPATH=src python benchmarks/bench_llm_throughput.py [--rounds 2] [--concurrency 4]
"""

from __future__ import annotations

import argparse
import asyncio
import time

import numpy as np

from sim2human.agents.scripted import ScriptedAgent
from sim2human.evaluate import eval_jobs
from sim2human.llm.client import ChatClient
from sim2human.llm.local import local_model
from sim2human.llm.runtime import LLMRuntime, LLMSettings
from sim2human.rollout_async import play_async
from sim2human.scenarios.intake import IntakeScenario
from sim2human.simulators.base import QuirkPool, Traits
from sim2human.simulators.families import get_family
from sim2human.simulators.llm import llm_spec
from sim2human.simulators.llm_prompts import PROMPTS, turn_message

MAX_TOKENS = 24
QUESTIONS = [
    ("What's the main problem you're calling about today?", ("complaint",)),
    ("When did this start? How many days or weeks ago?", ("onset",)),
    ("Are you taking any medicines at the moment?", ("medications",)),
    ("Can I have your date of birth?", ("dob",)),
]


async def direct(client: ChatClient, n: int, concurrency: int, seed: int) -> tuple[int, float]:
    scenario = IntakeScenario()
    rng = np.random.default_rng(seed)
    gate = asyncio.Semaphore(concurrency)

    async def one(i: int) -> int:
        profile = scenario.sample_profile(rng)
        question, asks = QUESTIONS[i % len(QUESTIONS)]
        messages = [
            {
                "role": "system",
                "content": PROMPTS["plain"]("Mary", profile, scenario.fields, Traits()),
            },
            {"role": "user", "content": turn_message(question, asks, profile)},
        ]
        async with gate:
            r = await client.chat(messages, temperature=0.7, max_tokens=MAX_TOKENS, seed=seed + i)
        return r.completion_tokens

    start = time.perf_counter()
    tokens = sum(await asyncio.gather(*(one(i) for i in range(n))))
    return tokens, time.perf_counter() - start


def engine(rt: LLMRuntime, episodes: int, seed: int) -> tuple[int, float]:
    scenario = IntakeScenario()
    pool = QuirkPool.from_acts(scenario.acts)
    spec = llm_spec(get_family("cooperative").sample(seed, pool, temperature=0.7),
                    prompt="plain", max_tokens=MAX_TOKENS, guard_retries=0)  # fmt: skip
    jobs = eval_jobs([spec], "heldout", episodes, f"bench{seed}")
    start = time.perf_counter()
    eps = rt.run(play_async(ScriptedAgent(scenario), jobs, scenario, rt, max_turns=4))
    wall = time.perf_counter() - start
    return int(sum(e.diagnostics.get("completion_tokens", 0) for e in eps)), wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--concurrency", type=int, default=4)
    ap.add_argument("--episodes", type=int, default=8, help="engine episodes per round")
    args = ap.parse_args()
    c = args.concurrency
    with local_model(n_parallel=c, ctx_per_slot=1024) as ep:
        settings = LLMSettings(endpoints={"local": ep}, cache=None, conversations=c)
        with LLMRuntime.open(settings, {"local"}) as rt:
            client = rt.clients["local"]
            rt.run(client.chat([{"role": "user", "content": "Hi"}], temperature=0, max_tokens=4))
            totals = {"direct": [0, 0.0], "engine": [0, 0.0]}
            for r in range(args.rounds):
                tokens, wall = engine(rt, args.episodes, 100 + r)
                totals["engine"][0] += tokens
                totals["engine"][1] += wall
                # As many requests as the engine just made (opening + ~4 replies per episode).
                n = max(c, args.episodes * 5)
                tokens, wall = rt.run(direct(client, n, c, 1000 + r))
                totals["direct"][0] += tokens
                totals["direct"][1] += wall
                print(f"round {r}: " + ", ".join(
                    f"{k} {v[0]} tok / {v[1]:.1f} s" for k, v in totals.items()))  # fmt: skip
    rate = {k: v[0] / v[1] for k, v in totals.items()}
    print(f"concurrency {c}, max_tokens {MAX_TOKENS}, {args.rounds} round(s), alternating")
    print(f"direct calls:   {rate['direct']:.1f} tokens/s")
    print(f"rollout engine: {rate['engine']:.1f} tokens/s")
    print(f"ratio engine/direct: {rate['engine'] / rate['direct']:.2f} (target >= 0.90)")


if __name__ == "__main__":
    main()
