"""ChatClient through a fault-injecting proxy: nothing lost, nothing duplicated, retries bounded."""

from __future__ import annotations

import asyncio
import random
from collections import Counter

import pytest
from fake_openai import FakeOpenAI
from pydantic import ValidationError

from sim2human.errors import EndpointError
from sim2human.llm.client import ChatClient, ChatResult, EndpointConfig
from sim2human.llm.faults import FAULTS, FaultProxy, FaultRates

RATES = FaultRates(error_500=0.1, error_429=0.1, stall=0.04, drop=0.08, truncate=0.06, garbage=0.04)
N = 50
MAX_RETRIES = 3
SEED = 99  # its first 50 draws hold every kind of fault, so each is exercised


async def run_through_proxy(upstream: str) -> tuple[list[ChatResult | str], FaultProxy, ChatClient]:
    proxy = FaultProxy(upstream, RATES, seed=SEED, stall_s=5.0)
    async with proxy:
        cfg = EndpointConfig(
            base_url=proxy.base_url,
            model="fake-model",
            timeout_s=1.0,  # generous: a slow "ok" must not look like a fault
            max_retries=MAX_RETRIES,
            max_concurrency=8,
            backoff_s=0.01,
            backoff_max_s=0.05,
        )
        client = ChatClient(cfg)

        async def one(i: int) -> ChatResult | str:
            try:
                return await client.chat(
                    [{"role": "user", "content": f"request {i}"}], temperature=0.7, max_tokens=4
                )
            except EndpointError as exc:
                return f"failed: {exc}"

        async with client:
            outcomes = await asyncio.gather(*(one(i) for i in range(N)))
    return list(outcomes), proxy, client


def test_fifty_requests_through_faults_are_all_accounted_for() -> None:
    with FakeOpenAI() as fake:
        outcomes, proxy, client = asyncio.run(run_through_proxy(fake.base_url))

    assert len(outcomes) == N
    stats = client.stats
    failed = [o for o in outcomes if isinstance(o, str)]
    # Every request either completed with its own answer or failed with a recorded reason.
    for i, outcome in enumerate(outcomes):
        if isinstance(outcome, str):
            assert f"failed after {MAX_RETRIES + 1} attempt(s)" in outcome
        else:
            assert outcome.text == f"echo: request {i}"
            assert 1 <= outcome.attempts <= MAX_RETRIES + 1
    # The proxy's log reconciles exactly with the client's accounting.
    faults = proxy.counts()
    attempts = sum(faults.values())
    assert stats.requests == N and stats.failures == len(failed)
    assert attempts == N + stats.retries
    assert attempts - faults["ok"] == stats.retries + stats.failures
    assert stats.retries <= N * MAX_RETRIES
    assert all(faults[f] > 0 for f in FAULTS)
    # Upstream answered each request at least once; only a truncated answer is ever repeated.
    per_request = Counter(s.body["messages"][-1]["content"] for s in fake.seen)
    assert len(fake.seen) == faults["ok"] + faults["truncate"]
    for i, outcome in enumerate(outcomes):
        if not isinstance(outcome, str):
            assert per_request[f"request {i}"] >= 1


def test_fault_draws_are_seeded() -> None:
    def draws(seed: int) -> list[str]:
        rng = random.Random(seed)
        return [RATES.draw(rng) for _ in range(200)]

    assert draws(5) == draws(5) and draws(5) != draws(6)
    counts = Counter(draws(5))
    assert 0 < counts["error_500"] < 50 and counts["ok"] > 80


def test_rates_must_sum_to_at_most_one() -> None:
    with pytest.raises(ValidationError):
        FaultRates(error_500=0.7, drop=0.5)
