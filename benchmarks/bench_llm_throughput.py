"""Does the rollout engine keep the embedded model as busy as direct calls do?

Side by side in one run, alternating so that load from other processes hits both alike:
  engine  the async rollout engine plays scripted-agent conversations against an ``llm`` member
          with C conversations in flight; every request it sends is recorded;
  direct  the same requests (same messages, sampling parameters and seeds) replayed straight
          through ``ChatClient`` at concurrency C, in the order the engine sent them.
Replaying the engine's own requests keeps prompt lengths alike on both sides, so the ratio
measures the engine's overhead, not a difference in work. Each side gets a freshly started
server: llama.cpp keeps every prompt it has seen in a RAM cache, so a replay on the engine's
server would find all its prompts already processed (that made direct calls look ~1.5x faster
than they are). Prints decode tokens/s of each and their ratio (the issue asks for >= 0.90).
No response cache.

    PYTHONPATH=src python benchmarks/bench_llm_throughput.py [--rounds 2] [--concurrency 4]
"""

from __future__ import annotations

import argparse
import asyncio
import time
from typing import Any

from sim2human.agents.scripted import ScriptedAgent
from sim2human.llm.client import ChatClient, ChatResult
from sim2human.llm.local import local_model
from sim2human.llm.runtime import PROBE, LLMRuntime, LLMSettings
from sim2human.rollout.conversation import MAX_TURNS
from sim2human.rollout.evaluate import eval_jobs
from sim2human.rollout.play_async import play_async
from sim2human.scenarios.intake.scenario import IntakeScenario
from sim2human.simulators.base import QuirkPool
from sim2human.simulators.families import get_family
from sim2human.simulators.llm import llm_spec

MAX_TOKENS = 24
Request = tuple[Any, dict[str, Any]]


def record(client: ChatClient) -> list[Request]:
    """Make ``client`` remember every request it is asked to send."""
    sent: list[Request] = []
    original = client.chat

    async def chat(messages: Any, **kwargs: Any) -> ChatResult:
        sent.append((messages, kwargs))
        return await original(messages, **kwargs)

    client.chat = chat  # type: ignore[method-assign]
    return sent


async def replay(client: ChatClient, requests: list[Request], concurrency: int) -> int:
    gate = asyncio.Semaphore(concurrency)

    async def one(messages: Any, kwargs: dict[str, Any]) -> int:
        async with gate:
            return (await client.chat(messages, **kwargs)).completion_tokens

    return sum(await asyncio.gather(*(one(m, k) for m, k in requests)))


def engine(concurrency: int, episodes: int, seed: int) -> tuple[int, float, list[Request]]:
    """Decode tokens, wall time and the requests it sent (recorded after the start-up probe)."""
    scenario = IntakeScenario()
    pool = QuirkPool.from_acts(scenario.acts)
    spec = llm_spec(
        get_family("cooperative").sample(seed, pool, temperature=0.7),
        prompt="plain",
        max_tokens=MAX_TOKENS,
        guard_retries=0,
    )
    jobs = eval_jobs([spec], "heldout", episodes, f"bench{seed}")
    with local_model(n_parallel=concurrency, ctx_per_slot=1024) as ep:
        settings = LLMSettings(endpoints={"local": ep}, cache=None, conversations=concurrency)
        with LLMRuntime.open(settings, {"local"}) as rt:
            sent = record(rt.clients["local"])
            start = time.perf_counter()
            eps = rt.run(play_async(ScriptedAgent(scenario), jobs, scenario, rt, max_turns=4))
            wall = time.perf_counter() - start
    tokens = int(sum(e.diagnostics.get("completion_tokens", 0) for e in eps))
    return tokens, wall, sent


def direct(concurrency: int, requests: list[Request]) -> tuple[int, float]:
    """The engine's requests replayed on a server of their own."""
    with local_model(n_parallel=concurrency, ctx_per_slot=1024) as ep:

        async def run() -> tuple[int, float]:
            async with ChatClient(ep) as client:
                await client.chat(PROBE, temperature=0, max_tokens=1)  # as LLMRuntime.open does
                start = time.perf_counter()
                tokens = await replay(client, requests, concurrency, max_turns=MAX_TURNS)
                return tokens, time.perf_counter() - start

        return asyncio.run(run())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--concurrency", type=int, default=4)
    ap.add_argument("--episodes", type=int, default=8, help="engine episodes per round")
    args = ap.parse_args()
    c = args.concurrency
    totals = {"direct": [0, 0.0], "engine": [0, 0.0]}
    for r in range(args.rounds):
        tokens, wall, sent = engine(c, args.episodes, 100 + r)
        totals["engine"][0] += tokens
        totals["engine"][1] += wall
        tokens, wall = direct(c, sent)
        totals["direct"][0] += tokens
        totals["direct"][1] += wall
        print(
            f"round {r}: " + ", ".join(f"{k} {v[0]} tok / {v[1]:.1f} s" for k, v in totals.items())
        )
    rate = {k: v[0] / v[1] for k, v in totals.items()}
    print(
        f"concurrency {c}, max_tokens {MAX_TOKENS}, {args.rounds} round(s), alternating, "
        "each side on a freshly started server"
    )
    print(f"direct calls:   {rate['direct']:.1f} tokens/s")
    print(f"rollout engine: {rate['engine']:.1f} tokens/s")
    print(f"ratio engine/direct: {rate['engine'] / rate['direct']:.2f} (target >= 0.90)")


if __name__ == "__main__":
    main()
