"""The ``llm`` simulator and the LLM agent against the real embedded model (SmolLM2 over
llama.cpp), and a 50-episode evaluation through a fault-injecting proxy in front of it.

They start the server themselves and skip, saying why, only when the model extra is missing.
Episodes are kept short (few turns, few tokens): the point is the plumbing, not the quality.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path

import pytest

from embedded_model import serve_model
from sim2human.agents.llm import LLMAgent
from sim2human.agents.scripted import ScriptedAgent
from sim2human.llm.client import ChatClient, ClientStats, EndpointConfig
from sim2human.llm.faults import FaultProxy, FaultRates
from sim2human.llm.runtime import LLMRuntime, LLMSettings
from sim2human.rollout.evaluate import eval_jobs, evaluate
from sim2human.rollout.play_async import play_async
from sim2human.scenarios.intake.scenario import IntakeScenario
from sim2human.simulators.base import QuirkPool, SimulatorSpec
from sim2human.simulators.families import get_family
from sim2human.simulators.llm import llm_spec
from sim2human.types import Episode, Termination

SCENARIO = IntakeScenario()
POOL = QuirkPool.from_acts(SCENARIO.acts)


@pytest.fixture(scope="module")
def embedded() -> Iterator[EndpointConfig]:
    yield from serve_model(n_parallel=4)


def member(temperature: float, max_tokens: int = 16, **kw: object) -> SimulatorSpec:
    base = get_family("cooperative").sample(11, POOL, temperature=temperature)
    return llm_spec(base, prompt="plain", max_tokens=max_tokens, **kw)  # type: ignore[arg-type]


def runtime(ep: EndpointConfig, cache: Path | None) -> AbstractContextManager[LLMRuntime]:
    settings = LLMSettings(endpoints={"local": ep}, cache=cache, conversations=4)
    return LLMRuntime.open(settings, {"local"})


def test_llm_simulator_conversation_with_role_guard(
    embedded: EndpointConfig, tmp_path: Path
) -> None:
    with runtime(embedded, tmp_path / "cache.sqlite") as rt:
        spec = member(0.0, guard_retries=1)
        first = evaluate(
            ScriptedAgent(SCENARIO),
            [spec],
            SCENARIO,
            split="heldout",
            per_member=1,
            llm=rt,
            max_turns=3,
        )
        again = evaluate(
            ScriptedAgent(SCENARIO),
            [spec],
            SCENARIO,
            split="heldout",
            per_member=1,
            llm=rt,
            max_turns=3,
        )
    ep = first[0]
    assert ep.termination in (Termination.COMPLETED, Termination.MAX_TURNS), ep.error
    d = ep.diagnostics
    assert d["replies"] >= 2 and d["completion_tokens"] > 0
    # Every reply either passed the guard or says how it failed; failures are counted.
    user = [t for t in ep.turns if t.speaker == "user"]
    flagged = sum("out_of_role" in t.tags for t in user)
    assert flagged == d.get("role_failures", 0)
    assert all(t.text.strip() for t in user)
    # Temperature 0: the repeat comes from the cache, word for word.
    assert again[0].turns == ep.turns and again[0].diagnostics["cache_hits"] >= d["replies"]


def test_llm_agent_evaluated_on_two_members(embedded: EndpointConfig) -> None:
    with runtime(embedded, None) as rt:
        agent = LLMAgent(SCENARIO, rt.clients["local"], max_tokens=24)
        members = [get_family("cooperative").sample(1, POOL), get_family("chatty").sample(2, POOL)]
        eps = evaluate(agent, members, SCENARIO, split="heldout", per_member=1, llm=rt, max_turns=2)
    assert sorted(e.simulator_id for e in eps) == sorted(m.id for m in members)
    for e in eps:
        assert e.termination in (Termination.COMPLETED, Termination.MAX_TURNS), e.error
        assert e.agent_turns and all(t.text.strip() for t in e.agent_turns)
    assert rt.stats()["local"].completion_tokens > 0


FAULTS = FaultRates(error_500=0.08, error_429=0.08, stall=0.03, drop=0.06, truncate=0.04)
RETRIES = 3


@pytest.mark.slow  # ~30 s on an idle 2-core box, minutes on a busy one; the same bookkeeping
# runs fast against a scripted endpoint in test_llm_simulator.py
def test_fifty_episodes_through_a_faulty_endpoint_are_all_accounted_for(
    embedded: EndpointConfig,
) -> None:
    jobs = eval_jobs([member(0.7, max_tokens=8), member(0.3, max_tokens=8)], "heldout", 25, "f")

    async def run(rt: LLMRuntime) -> tuple[list[Episode], FaultProxy, ClientStats]:
        proxy = FaultProxy(embedded.base_url, FAULTS, seed=3, stall_s=20.0)
        async with proxy:
            flaky = proxy.endpoint(embedded).model_copy(
                update={
                    "timeout_s": 10.0,
                    "max_retries": RETRIES,
                    "backoff_s": 0.05,
                    "backoff_max_s": 0.2,
                }
            )
            rt.clients["local"] = client = ChatClient(flaky)
            eps = await play_async(ScriptedAgent(SCENARIO), jobs, SCENARIO, rt, max_turns=1)
            await client.aclose()
        return eps, proxy, client.stats

    with runtime(embedded, None) as rt:
        eps, proxy, stats = rt.run(run(rt))
    assert len(eps) == 50  # none lost
    assert sorted(e.id for e in eps) == sorted(f"f/eval/{j.spec.id}/{j.seed}" for j in jobs)
    for e in eps:  # each complete, or an error with its reason
        if e.termination == Termination.ERROR:
            assert e.error is not None and "attempt(s)" in e.error
        else:
            assert e.termination == Termination.MAX_TURNS and e.error is None
    faults = sum(n for f, n in proxy.counts().items() if f != "ok")
    assert faults >= 5 and stats.retries >= 1
    # Retries stay within bounds, and every attempt the client made reached the proxy.
    assert stats.retries <= RETRIES * stats.requests
    assert len(proxy.events) == stats.requests + stats.retries


SUPPORT_TEMPLATE = """You are {{ name }}, phoning a booking line ({{ scenario }}).
{% if values.domain == "restaurant" %}You want a table: {{ profile.food }} food,
{{ profile.area }} part of town, {{ profile.pricerange }} prices.
{% else %}You want to book a {{ profile.domain }}.{% endif %}
Everything you know:
{{ facts }}
{{ manner }}
Answer the {{ agent_name }} in one short sentence, as a caller would.
Never speak as the {{ agent_name }}.
"""


def test_a_users_own_prompt_file_plays_a_support_call(
    embedded: EndpointConfig, tmp_path: Path
) -> None:
    """The issue's test: an LLM member with a user's own prompt template file plays a
    ``support`` call against the embedded model (plumbing, not quality: few turns)."""
    from sim2human.agents.scripted import reference_agent
    from sim2human.scenarios.catalog import get_scenario

    support = get_scenario("support")
    (tmp_path / "caller.j2").write_text(SUPPORT_TEMPLATE)
    base = get_family("cooperative").sample(11, QuirkPool.of(support), temperature=0.0)
    spec = llm_spec(base, prompt=str(tmp_path / "caller.j2"), max_tokens=24, guard_retries=0)
    assert spec.llm is not None and spec.llm.prompt == "caller" and spec.llm.template
    with runtime(embedded, None) as rt:
        (ep,) = evaluate(
            reference_agent(support),
            [spec],
            support,
            split="heldout",
            per_member=1,
            llm=rt,
            max_turns=4,
        )
    assert ep.error is None and ep.termination != Termination.ERROR
    users = [t.text for t in ep.turns if t.speaker == "user"]
    assert len(users) >= 2 and all(u.strip() for u in users)
    assert ep.scenario == "support" and "-caller-" in ep.simulator_id


CAMPER_TEMPLATE = """You are {{ name }}, a camper ({{ scenario }}). You and the {{ agent_name }}
split 3 packages each of food, water and firewood.
Food is {{ values.food }} priority for you, water {{ values.water }}, firewood
{{ values.firewood }}. {{ values.reason }}
Without a deal you get {{ values.walk_away }} points.
{{ rules }}
{{ manner }}
Answer in one short sentence."""


@pytest.mark.parametrize("prompt", ["plain", "camper.j2"])
def test_an_llm_camper_negotiates_against_the_embedded_model(
    embedded: EndpointConfig, tmp_path: Path, prompt: str
) -> None:
    """An LLM camper (a built-in prompt, and a user's own template file) plays a
    ``negotiation`` call through the real server, graded by the scenario: plumbing, not
    skill (the 135M model is weak at bargaining)."""
    from sim2human.agents.scripted import reference_agent
    from sim2human.scenarios.catalog import get_scenario

    negotiation = get_scenario("negotiation")
    if prompt.endswith(".j2"):
        (tmp_path / prompt).write_text(CAMPER_TEMPLATE)
        prompt = str(tmp_path / prompt)
    base = get_family("cooperative").sample(11, QuirkPool.of(negotiation), temperature=0.0)
    spec = llm_spec(base, prompt=prompt, max_tokens=40, guard_retries=0)
    with runtime(embedded, None) as rt:
        (ep,) = evaluate(
            reference_agent(negotiation),
            [spec],
            negotiation,
            split="heldout",
            per_member=1,
            llm=rt,
            max_turns=4,
        )
    assert ep.error is None and ep.termination != Termination.ERROR
    assert ep.scenario == "negotiation" and ep.diagnostics["completion_tokens"] > 0
    users = [t.text for t in ep.turns if t.speaker == "user"]
    assert len(users) >= 2 and all(u.strip() for u in users)
    assert ep.gold == negotiation.grade(ep.profile, ep.record, ep.termination)
    assert 0.0 <= ep.gold.score <= 1.0 and 0.0 <= ep.proxy <= 1.0
    if prompt != "plain":
        assert "-camper-" in ep.simulator_id
