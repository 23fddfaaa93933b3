"""LLM-user conversations per hour against a latency-injected OpenAI-compatible endpoint, at
conversation concurrency 1, 4, 16 and 64, side by side in one run, as ratios to tau2-bench's
272.7 simulations/hour per process.

    .venv/bin/python benchmarks/bench_llm_users.py [--ttft-s 0.5] [--per-token-s 0.015]
        [--waves 3] [--rounds 1] [--levels 1,4,16,64]

The endpoint is ``sim2human.testing.FakeOpenAI`` on 127.0.0.1 (a threaded HTTP server): each
request sleeps ``ttft_s + per_token_s x completion tokens`` before it answers, so the numbers
are bound by that sleep, not by this machine's cores (a busy machine measures them fairly;
the CPU one process spends per conversation is what shows as lost utilisation). The users
are the study's ``llm`` members (the ``plain`` and ``story`` prompts, judged by the LLM),
played by the scripted agent through the async rollout engine exactly as a sub-run's
held-out evaluation plays them (``rollout.evaluate``), one process, one event loop, at most
``c`` conversations and ``c`` requests in flight (``llm.conversations`` and the endpoint's
``max_concurrency``). Each level plays ``waves x c`` fresh conversations.

**The assumption, stated.** tau2-bench's 272.7 sims/hour (one process at ``--max-concurrency``
30; ``docs/designs/parallel-runner.md`` in sierra-research/tau2-bench) was measured against
hosted providers whose latency it does not publish; it is bound by Python compute in the
process (21.6 of 30 slots busy, ~100 ms event-loop overrun), not by the providers. The
default delay here stands for such a provider: 0.5 s to the first token and 15 ms per
completion token (~65 tokens/s, a hosted small model). Two ratios follow:

- ``x tau2 (per token)``: conversations/hour over 272.7, at that per-token latency. Our
  conversations are shorter than a tau2 simulation (fewer, shorter turns), so this ratio is
  what a lab sees per process, not a like-for-like simulation count;
- ``x tau2 (per conv)``: by Little's law a rate is (conversations in flight) / (time per
  conversation), so at *equal time per conversation* the ratio is our mean conversations in
  flight over tau2-bench's 21.6. That is the ratio independent of conversation length.

Endpoint utilisation: the mean number of requests the endpoint held, sampled every 5 ms,
over ``c`` (the cap): how much of the concurrency asked for the process actually used.
"""

from __future__ import annotations

import argparse
import os
import threading
import time
from dataclasses import dataclass
from typing import Any

from sim2human.agents.scripted import ScriptedAgent
from sim2human.experiments.study.config import StudyConfig, parse_study
from sim2human.experiments.study.world import StudyWorld
from sim2human.llm.runtime import LLMRuntime
from sim2human.rollout.conversation import Job
from sim2human.rollout.evaluate import episode_seed
from sim2human.rollout.play import play
from sim2human.testing import FakeOpenAI, Reply, completion

TAU2_PER_PROCESS = 272.7
"""tau2-bench: simulations/hour, one process at concurrency 30."""
TAU2_IN_FLIGHT = 21.6
"""tau2-bench: simulations genuinely in flight in that measurement (of 30 slots)."""
ENDPOINT = "bench"


@dataclass(frozen=True)
class Latency:
    """The injected delay of one request: time to the first token, then per token."""

    ttft_s: float
    per_token_s: float

    def reply(self, n: int, body: dict[str, Any]) -> Reply:
        """An in-role answer (a satisfaction score for the judge, the asked fact otherwise),
        sent after the delay its length calls for."""
        last = body["messages"][-1]["content"]
        if "How satisfied" in last:
            text = str(n % 11)
        elif "(Relevant facts:" in last:
            text = last.split("(Relevant facts:")[1].strip(" .)") + "."
        else:
            text = "Hello, I am calling about my appointment."
        tokens = max(1, len(text.split()))
        delay = self.ttft_s + self.per_token_s * tokens
        return Reply(body=completion(text, completion_tokens=tokens), delay_s=delay)


def study(base_url: str, concurrency: int) -> StudyConfig:
    """A study whose held-out members are ``llm`` users on the latency-injected endpoint."""
    members = {"members": 8, "endpoint": ENDPOINT, "max_tokens": 24, "judge": "llm"}
    return parse_study(
        {
            "name": "bench-llm-users",
            "seeds": [0],
            "ensemble": {
                "train": ["cooperative"],
                "heldout": ["terse-guarded"],
                "members_per_family": 1,
                "llm": {"heldout": {"families": ["chatty"], "prompts": ["story"], **members}},
            },
            "llm": {
                "endpoints": {
                    ENDPOINT: {
                        "base_url": base_url,
                        "model": "fake",
                        "timeout_s": 60,
                        "max_concurrency": concurrency,
                    }
                },
                "cache": None,
                "conversations": concurrency,
            },
            "conditions": [{"name": "ensemble-uniform", "sampler": "uniform"}],
        }
    )


class InFlight:
    """Samples how many requests the endpoint holds, every 5 ms, while it runs."""

    def __init__(self, fake: FakeOpenAI) -> None:
        self.fake, self.samples = fake, [0]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.is_set():
            self.samples.append(self.fake.in_flight)
            time.sleep(0.005)

    def __enter__(self) -> InFlight:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    @property
    def mean(self) -> float:
        return sum(self.samples) / len(self.samples)


@dataclass(frozen=True)
class Level:
    concurrency: int
    conversations: int
    seconds: float
    requests: int
    in_flight: float

    @property
    def per_hour(self) -> float:
        return self.conversations / self.seconds * 3600

    @property
    def utilisation(self) -> float:
        return self.in_flight / self.concurrency


def measure(fake: FakeOpenAI, concurrency: int, waves: int, base: int) -> Level:
    """``waves x concurrency`` fresh conversations at ``concurrency``."""
    cfg = study(fake.base_url, concurrency)
    world = StudyWorld.build(cfg)
    users = [s for s in world.ensemble.heldout if s.kind == "llm"]
    n = waves * concurrency
    jobs = [
        Job(users[k % len(users)], episode_seed(base + k), "heldout", "bench", "eval")
        for k in range(n)
    ]
    agent = ScriptedAgent(world.scenario)
    with LLMRuntime.open(cfg.llm, {ENDPOINT}, check=False) as rt:
        before = len(fake.seen)
        with InFlight(fake) as sampled:
            started = time.perf_counter()
            episodes = play(agent, jobs, world.scenario, llm=rt, max_turns=cfg.train.max_turns)
            seconds = time.perf_counter() - started
        errors = sum(e.error is not None for e in episodes)
        assert errors == 0, f"{errors} conversations failed"
        return Level(concurrency, n, seconds, len(fake.seen) - before, sampled.mean)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--ttft-s", type=float, default=0.5)
    parser.add_argument("--per-token-s", type=float, default=0.015)
    parser.add_argument("--waves", type=int, default=3, help="conversations per level / c")
    parser.add_argument("--rounds", type=int, default=1, help="passes over the levels")
    parser.add_argument("--levels", default="1,4,16,64")
    args = parser.parse_args()
    levels = [int(x) for x in args.levels.split(",")]
    latency = Latency(args.ttft_s, args.per_token_s)
    best: dict[int, Level] = {}
    with FakeOpenAI(latency.reply) as fake:
        for r in range(args.rounds):
            for c in levels:
                got = measure(fake, c, args.waves, 10_000 * (1 + r) + 1_000 * c)
                print(f"round {r + 1}, concurrency {c}: {got.per_hour:,.0f} conversations/hour")
                if c not in best or got.per_hour > best[c].per_hour:
                    best[c] = got
    report(best, latency, args)


def report(best: dict[int, Level], latency: Latency, args: argparse.Namespace) -> None:
    one = min(best.values(), key=lambda lv: lv.concurrency)
    per_conv = one.seconds / one.conversations * one.concurrency  # time per conversation
    print(
        f"\nLLM users vs a latency-injected endpoint ({latency.ttft_s:g} s to first token + "
        f"{latency.per_token_s * 1000:g} ms/token), one process, {os.cpu_count()} cores, "
        f"{args.waves} waves per level, best of {args.rounds} round(s); a conversation takes "
        f"{per_conv:.1f} s and {one.requests / one.conversations:.1f} requests alone"
    )
    head = (
        "c",
        "conv/hour",
        "x c=1",
        "util",
        "in flight",
        "x tau2 (per token)",
        "x tau2 (per conv)",
    )
    print(
        f"{head[0]:>4}{head[1]:>12}{head[2]:>8}{head[3]:>7}{head[4]:>11}{head[5]:>20}{head[6]:>19}"
    )
    for c, lv in sorted(best.items()):
        flight = lv.per_hour / 3600 * per_conv
        print(
            f"{c:>4}{lv.per_hour:>12,.0f}{lv.per_hour / one.per_hour:>7.1f}x"
            f"{lv.utilisation:>6.0%}{flight:>11.1f}{lv.per_hour / TAU2_PER_PROCESS:>19.1f}x"
            f"{flight / TAU2_IN_FLIGHT:>18.2f}x"
        )


if __name__ == "__main__":
    main()
