"""The ``llm`` simulator, the LLM agent and the async engine against a scripted fake endpoint.

Fast and exact: each test decides what the "model" says. The same paths against the real
embedded model are in test_llm_live.py.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from sim2human.agents.llm import LLMAgent
from sim2human.agents.scripted import ScriptedAgent
from sim2human.errors import EndpointError, UsageError
from sim2human.llm.client import ChatClient, ClientStats, EndpointConfig
from sim2human.llm.faults import FaultProxy, FaultRates
from sim2human.llm.runtime import LLMRuntime, LLMSettings
from sim2human.rollout.conversation import MAX_TURNS, job_profile
from sim2human.rollout.evaluate import eval_jobs, evaluate
from sim2human.rollout.play_async import play_async
from sim2human.scenarios.intake.scenario import IntakeScenario
from sim2human.scenarios.intake.voice import ROLE_PLAY
from sim2human.simulators.base import QuirkPool, SimulatorSpec
from sim2human.simulators.families import get_family
from sim2human.simulators.llm import JUDGE_FALLBACK, LLMMembers, llm_spec
from sim2human.testing import FakeOpenAI, Reply, completion
from sim2human.types import Episode, Termination

SCENARIO = IntakeScenario()
POOL = QuirkPool.from_acts(SCENARIO.acts)


def member(temperature: float = 0.0, judge: str = "persona", **kw: Any) -> SimulatorSpec:
    base = get_family("cooperative").sample(3, POOL, temperature=temperature)
    return llm_spec(base, prompt="plain", judge=judge, endpoint="fake", **kw)


def say(text: str) -> Reply:
    return Reply(body=completion(text))


def is_judge(body: dict[str, Any]) -> bool:
    return bool(body["messages"][0]["content"] == ROLE_PLAY.judge_system)


@pytest.fixture
def runtime_for() -> Iterator[Callable[[FakeOpenAI], LLMRuntime]]:
    opened: list[Any] = []

    def make(fake: FakeOpenAI, retries: int = 1) -> LLMRuntime:
        """A runtime on ``fake`` without the start-up check (tests script every request)."""
        endpoint = EndpointConfig(
            base_url=fake.base_url,
            model="fake",
            timeout_s=5.0,
            max_retries=retries,
            backoff_s=0.01,
            backoff_max_s=0.02,
        )
        settings = LLMSettings(endpoints={"fake": endpoint}, cache=None)
        ctx = LLMRuntime.open(settings, {"fake"}, check=False)
        opened.append(ctx)
        return ctx.__enter__()

    yield make
    for ctx in opened:
        ctx.__exit__(None, None, None)


def answer_from_facts(n: int, body: dict[str, Any]) -> Reply:
    """A well-behaved caller: answers with the facts the turn reminds it of."""
    last = body["messages"][-1]["content"]
    if is_judge(body):
        return say("I'd rate it 7/10.")
    if "(Relevant facts:" in last:
        return say("Well, " + last.split("(Relevant facts:")[1].strip(" .)") + ".")
    return say("Hello, I'd like to see a doctor.")


def test_a_cooperative_llm_caller_lets_the_scripted_agent_succeed(runtime_for: Any) -> None:
    with FakeOpenAI(answer_from_facts) as fake:
        rt = runtime_for(fake)
        eps = evaluate(
            ScriptedAgent(SCENARIO),
            [member()],
            SCENARIO,
            split="heldout",
            per_member=3,
            llm=rt,
            max_turns=MAX_TURNS,
        )
    assert len(eps) == 3 and {e.termination for e in eps} == {Termination.COMPLETED}
    # The facts reach the record through the same extractor as any user's text.
    assert sum(e.gold.field_accuracy for e in eps) / 3 > 0.7
    assert all(e.family == "llm:cooperative" and e.diagnostics["replies"] >= 8 for e in eps)
    assert all(0 < e.proxy <= 1 for e in eps)  # the persona rule scores it


def test_role_guard_retries_hotter_and_counts(runtime_for: Any) -> None:
    def script(n: int, body: dict[str, Any]) -> Reply:
        if body["temperature"] == 0:  # the frozen member always starts as the nurse
            return say("Nurse: Can I have your date of birth?")
        return say("It's 14 March 1962.")

    with FakeOpenAI(script) as fake:
        rt = runtime_for(fake)
        eps = evaluate(
            ScriptedAgent(SCENARIO),
            [member(guard_retries=2)],
            SCENARIO,
            split="heldout",
            per_member=1,
            llm=rt,
            max_turns=3,
        )
        retried = [s.body for s in fake.seen if s.body["temperature"] > 0]
    d = eps[0].diagnostics
    assert d["role_retries"] == d["replies"] and d["out_of_role.spoke_as_agent"] == d["replies"]
    assert "role_failures" not in d
    assert all(b["temperature"] == 0.7 and "seed" in b for b in retried)
    user_turns = [t for t in eps[0].turns if t.speaker == "user"][:-1]  # the last is the close
    assert all("retried:1" in t.tags and "Nurse" not in t.text for t in user_turns)


def test_a_reply_that_stays_out_of_role_is_passed_on_and_counted(runtime_for: Any) -> None:
    with FakeOpenAI(lambda n, body: say("(the patient sighs)")) as fake:
        rt = runtime_for(fake)
        eps = evaluate(
            ScriptedAgent(SCENARIO),
            [member(guard_retries=1)],
            SCENARIO,
            split="heldout",
            per_member=1,
            llm=rt,
            max_turns=2,
        )
    d = eps[0].diagnostics
    # The opening line and the answer to the greeting (the agent then closes): 2 replies,
    # each tried twice.
    assert d["role_failures"] == d["replies"] == 2 and d["role_retries"] == 2
    assert d["out_of_role.narrated"] == 4
    assert any("out_of_role" in t.tags for t in eps[0].turns)


def test_llm_judge_scores_once_the_call_ends(runtime_for: Any) -> None:
    with FakeOpenAI(answer_from_facts) as fake:
        rt = runtime_for(fake)
        eps = evaluate(
            ScriptedAgent(SCENARIO),
            [member(judge="llm")],
            SCENARIO,
            split="heldout",
            per_member=2,
            llm=rt,
            max_turns=MAX_TURNS,
        )
        judged = [s for s in fake.seen if is_judge(s.body)]
    assert [e.proxy for e in eps] == [0.7, 0.7] and len(judged) == 2


def test_judge_without_a_number_falls_back_and_counts(runtime_for: Any) -> None:
    def script(n: int, body: dict[str, Any]) -> Reply:
        return say("Very nice call!") if is_judge(body) else answer_from_facts(n, body)

    with FakeOpenAI(script) as fake:
        rt = runtime_for(fake)
        (ep,) = evaluate(
            ScriptedAgent(SCENARIO),
            [member(judge="llm", guard_retries=2)],
            SCENARIO,
            split="heldout",
            per_member=1,
            llm=rt,
            max_turns=MAX_TURNS,
        )
        judged = [s for s in fake.seen if is_judge(s.body)]
    assert ep.proxy == JUDGE_FALLBACK and ep.diagnostics["judge_failures"] == 1
    assert len(judged) == 3  # one try and two retries


def test_turn_judge_rates_each_exchange_and_satisfaction_is_their_mean(runtime_for: Any) -> None:
    ratings = iter([10, 4] * 100)

    def script(n: int, body: dict[str, Any]) -> Reply:
        if is_judge(body):
            assert "Nurse:" in body["messages"][1]["content"]  # one exchange, not the call
            return say(f"{next(ratings)}")
        return answer_from_facts(n, body)

    with FakeOpenAI(script) as fake:
        rt = runtime_for(fake)
        (ep,) = evaluate(
            ScriptedAgent(SCENARIO),
            [member(judge="llm-turn")],
            SCENARIO,
            split="heldout",
            per_member=1,
            llm=rt,
            max_turns=4,
        )
        judged = [s for s in fake.seen if is_judge(s.body)]
    d = ep.diagnostics
    # Every reply but the opening line is rated; the closing line is not a reply.
    assert len(judged) == d["judge_requests"] == d["replies"] - 1 == 3
    assert ep.proxy == pytest.approx((1.0 + 0.4 + 1.0) / 3)


def test_cards_fix_the_patients_and_the_cache_answers_the_repeats(
    runtime_for: Any, tmp_path: Path
) -> None:
    frozen = member(judge="llm-turn", guard_retries=0, cards=2)
    jobs = eval_jobs([frozen], "train", 6, "c")
    fresh = eval_jobs([member()], "train", 6, "c")
    assert len({str(job_profile(j, SCENARIO)) for j in jobs}) == 2
    assert len({str(job_profile(j, SCENARIO)) for j in fresh}) == 6
    with FakeOpenAI(answer_from_facts) as fake:
        endpoint = EndpointConfig(base_url=fake.base_url, model="fake", timeout_s=5.0)
        settings = LLMSettings(endpoints={"fake": endpoint}, cache=tmp_path / "c.sqlite")
        with LLMRuntime.open(settings, {"fake"}, check=False) as rt:
            first = rt.run(
                play_async(ScriptedAgent(SCENARIO), jobs, SCENARIO, rt, max_turns=MAX_TURNS)
            )
            sent = len(fake.seen)
            again = rt.run(
                play_async(ScriptedAgent(SCENARIO), jobs, SCENARIO, rt, max_turns=MAX_TURNS)
            )
            assert len(fake.seen) == sent  # a temperature-0 member on fixed cards: all cached
            stats = rt.stats()["fake"]
    assert [e.turns for e in first] == [e.turns for e in again]
    # Six calls to two patients by a deterministic agent: two distinct calls, so most of the
    # first pass is answered by the cache already.
    assert stats.cache_hits > stats.requests / 2


def test_seeded_members_replay_identically(runtime_for: Any) -> None:
    with FakeOpenAI(answer_from_facts) as fake:
        rt = runtime_for(fake)
        spec = member(temperature=0.8)
        first = evaluate(
            ScriptedAgent(SCENARIO),
            [spec],
            SCENARIO,
            split="heldout",
            per_member=1,
            llm=rt,
            max_turns=MAX_TURNS,
        )
        seeds = [s.body.get("seed") for s in fake.seen]
        second = evaluate(
            ScriptedAgent(SCENARIO),
            [spec],
            SCENARIO,
            split="heldout",
            per_member=1,
            llm=rt,
            max_turns=MAX_TURNS,
        )
        again = [s.body.get("seed") for s in fake.seen[len(seeds) :]]
    assert seeds == again and None not in seeds
    assert first[0].turns == second[0].turns


def test_dead_endpoint_gives_error_episodes_with_reasons(runtime_for: Any) -> None:
    with FakeOpenAI(lambda n, body: Reply(status=503, body={"error": "down"})) as fake:
        rt = runtime_for(fake, retries=1)
        eps = evaluate(
            ScriptedAgent(SCENARIO),
            [member(), member(temperature=0.5)],
            SCENARIO,
            split="heldout",
            per_member=2,
            llm=rt,
            max_turns=MAX_TURNS,
        )
    assert len(eps) == 4 and len({e.id for e in eps}) == 4
    for e in eps:
        assert e.termination == Termination.ERROR and e.error is not None
        assert "HTTP 503" in e.error and "2 attempt(s)" in e.error
    assert rt.stats()["fake"].retries == 4  # one retry per request, bounded


def test_llm_agent_is_evaluated_like_any_agent(runtime_for: Any) -> None:
    script_lines = iter(
        ["Hello, what's the main problem you're calling about today?"]
        + ["Can I have your date of birth?"] * 2
        + ["Thank you, that's everything. Goodbye."] * 50
    )

    def script(n: int, body: dict[str, Any]) -> Reply:
        assert body["messages"][0]["role"] == "system"
        return say("Nurse: " + next(script_lines))

    with FakeOpenAI(script) as fake:
        rt = runtime_for(fake)
        agent = LLMAgent(SCENARIO, rt.clients["fake"])
        members = [get_family("cooperative").sample(1, POOL), get_family("chatty").sample(2, POOL)]
        eps = evaluate(
            agent, members, SCENARIO, split="heldout", per_member=2, llm=rt, max_turns=MAX_TURNS
        )
        transcripts = [s.body["messages"] for s in fake.seen]
    assert len(eps) == 4 and all(e.termination == Termination.COMPLETED for e in eps)
    assert all(not t.text.startswith("Nurse:") for e in eps for t in e.agent_turns)
    # The agent reads the call as a chat: the caller's turns are user messages.
    assert any(
        len(m) >= 4 and m[1]["role"] == "user" and m[2]["role"] == "assistant" for m in transcripts
    )


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        (Reply(status=404, body={"error": {"message": "model 'nope' not found"}}), "model name"),
        (Reply(status=401, body={"error": {"message": "bad key"}}), "rejected the API key"),
    ],
)
def test_misconfigured_endpoint_is_one_clear_error_at_start(reply: Reply, message: str) -> None:
    with FakeOpenAI(lambda n, body: reply) as fake:
        endpoint = EndpointConfig(base_url=fake.base_url, model="nope", max_retries=0)
        settings = LLMSettings(endpoints={"mine": endpoint}, cache=None)
        with pytest.raises(EndpointError, match=message) as err:
            LLMRuntime.open(settings, {"mine"}).__enter__()
    assert "endpoint 'mine' is not usable" in str(err.value)


def test_unreachable_endpoint_is_one_clear_error_at_start() -> None:
    endpoint = EndpointConfig(
        base_url="http://127.0.0.1:9/v1", model="m", max_retries=1, backoff_s=0.01, timeout_s=2.0
    )
    with pytest.raises(EndpointError, match="cannot connect"):
        LLMRuntime.open(LLMSettings(endpoints={"x": endpoint}, cache=None), {"x"}).__enter__()


def test_llm_members_without_endpoints_are_a_usage_error() -> None:
    with pytest.raises(UsageError, match="endpoints"):
        evaluate(
            ScriptedAgent(SCENARIO),
            [member()],
            SCENARIO,
            split="heldout",
            per_member=1,
            max_turns=MAX_TURNS,
        )
    with pytest.raises(UsageError, match="not configured"):
        LLMRuntime.open(LLMSettings(cache=None), {"nowhere"}).__enter__()


def test_llm_members_draw_is_seeded_and_spread() -> None:
    cfg = LLMMembers(
        families=("chatty", "anxious"),
        members=4,
        prompts=("story", "rules"),
        temperature=(0.2, 1.0),
        top_p=(0.8, 1.0),
    )
    a, b = cfg.draw(5, POOL, "train"), cfg.draw(5, POOL, "train")
    assert a == b and len({s.id for s in a}) == 4
    assert {s.family for s in a} == {"llm:chatty", "llm:anxious"}
    assert {s.llm.prompt for s in a if s.llm} == {"story", "rules"}
    assert all(0.2 <= s.traits.temperature <= 1.0 and s.kind == "llm" for s in a)
    with pytest.raises(ValueError, match="unknown prompt"):
        LLMMembers(families=("chatty",), prompts=("sonnet",))


def test_a_signed_zero_range_is_a_point_not_a_crash() -> None:
    """Found by the config property: [0.0, -0.0] passed low <= high, then numpy's uniform
    refused it (``high - low < 0``) in the worker."""
    cfg = LLMMembers(families=("chatty",), temperature=(0.0, -0.0), top_p=(1.0, 1.0))
    assert cfg.temperature == (0.0, 0.0)
    assert all(s.traits.temperature == 0.0 for s in cfg.draw(0, POOL, "train"))
    with pytest.raises(ValueError, match=r"low end 0\.5 is above high end 0\.1"):
        LLMMembers(families=("chatty",), temperature=(0.5, 0.1))


def test_fifty_episodes_through_a_faulty_proxy_are_all_accounted_for() -> None:
    rates = FaultRates(
        error_500=0.08, error_429=0.08, stall=0.03, drop=0.06, truncate=0.04, garbage=0.03
    )
    jobs = eval_jobs([member(0.7), member(0.3)], "heldout", 25, "f")

    async def run(rt: LLMRuntime) -> tuple[list[Episode], FaultProxy, ClientStats]:
        async with FaultProxy(fake.base_url, rates, seed=3, stall_s=3.0) as proxy:
            cfg = EndpointConfig(
                base_url=proxy.base_url,
                model="fake",
                timeout_s=1.0,
                max_retries=3,
                backoff_s=0.01,
                backoff_max_s=0.02,
            )
            rt.clients["fake"] = client = ChatClient(cfg)
            eps = await play_async(ScriptedAgent(SCENARIO), jobs, SCENARIO, rt, max_turns=2)
            await client.aclose()
        return eps, proxy, client.stats

    with FakeOpenAI(answer_from_facts) as fake:
        upstream = EndpointConfig(base_url=fake.base_url, model="fake")
        settings = LLMSettings(endpoints={"fake": upstream}, cache=None)
        with LLMRuntime.open(settings, {"fake"}, check=False) as rt:
            eps, proxy, stats = rt.run(run(rt))
    assert sorted(e.id for e in eps) == sorted(f"f/eval/{j.spec.id}/{j.seed}" for j in jobs)
    assert {e.termination for e in eps} <= {Termination.COMPLETED, Termination.ERROR}
    assert all((e.error is None) == (e.termination != Termination.ERROR) for e in eps)
    assert all("attempt(s)" in (e.error or "attempt(s)") for e in eps)
    assert sum(n for f, n in proxy.counts().items() if f != "ok") >= 10 and stats.retries >= 10
    assert stats.retries <= 3 * stats.requests
    assert len(proxy.events) == stats.requests + stats.retries


def test_each_conversation_stays_on_one_server_of_an_endpoint() -> None:
    """An endpoint with two servers (``base_urls``): every request of one conversation goes to
    one of them (its system prompt names its caller), the conversations are spread over both,
    and the start-up check probes each server."""
    jobs = eval_jobs([member()], "train", 16, "c")
    with FakeOpenAI(answer_from_facts) as a, FakeOpenAI(answer_from_facts) as b:
        endpoint = EndpointConfig(
            base_url=a.base_url, base_urls=(b.base_url,), model="fake", timeout_s=5.0
        )
        settings = LLMSettings(endpoints={"fake": endpoint}, cache=None)
        with LLMRuntime.open(settings, {"fake"}) as rt:
            probed = (len(a.seen), len(b.seen))
            rt.run(play_async(ScriptedAgent(SCENARIO), jobs, SCENARIO, rt, max_turns=MAX_TURNS))
        callers = [
            {s.body["messages"][0]["content"] for s in f.seen[n:]}
            for f, n in zip((a, b), probed, strict=True)
        ]
    assert probed == (1, 1)
    assert callers[0] and callers[1] and not callers[0] & callers[1]
    assert len(callers[0] | callers[1]) == len({str(job_profile(j, SCENARIO)) for j in jobs})
