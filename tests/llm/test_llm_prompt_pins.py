"""Pins what ``llm`` members on slot scenarios send and play: the system prompts of every style
and of a user's own template, the per-turn reminders, and the whole episodes, for intake and
for support (a scenario file). Written before the LLM simulator learned to play any scenario
through the core, so a change in what slot scenarios' LLM users are told or do fails here.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest

from sim2human.agents.scripted import reference_agent
from sim2human.llm.client import EndpointConfig
from sim2human.llm.runtime import LLMRuntime, LLMSettings
from sim2human.rollout.evaluate import evaluate
from sim2human.scenarios.catalog import get_scenario
from sim2human.simulators.base import QuirkPool, SimulatorSpec
from sim2human.simulators.families import get_family
from sim2human.simulators.llm import llm_spec
from sim2human.testing import FakeOpenAI, Reply, completion

TEMPLATE = (
    "You are {{ name }} ({{ scenario }}), talking to the {{ agent_name }}.\n"
    "{{ manner }}\n{{ facts }}\n{% for k, v in profile.items() %}{{ k }}={{ v }};{% endfor %}\n"
    "{% for k, v in values.items() %}{{ k }}:{{ v }};{% endfor %} p={{ traits.patience }}"
)

INTAKE_PLAIN = (
    "You are Mei, a patient phoning a clinic. A nurse asks you questions. You are the patient, "
    "not the nurse. Speak in the first person. Answer in one short sentence. Only answer what "
    "the nurse asks; do not list all your details at once.\nWhat you know about yourself:\n"
)


def model(n: int, body: dict[str, Any]) -> Reply:
    """A deterministic caller: repeats the facts its turn reminds it of, else a fixed line;
    a judge gets a rating."""
    last = str(body["messages"][-1]["content"])
    if "satisfied" in last:
        return Reply(body=completion(f"{len(last) % 11}/10"))
    if "(Relevant facts:" in last:
        return Reply(body=completion("Well, " + last.split("(Relevant facts:")[1].strip(" .)")))
    return Reply(body=completion("Hello, I need some help please."))


def members(scenario: Any, template: str) -> list[SimulatorSpec]:
    pool = QuirkPool.of(scenario)
    out = []
    for k, prompt in enumerate(("plain", "card", "story", "rules", "mine")):
        family = ("cooperative", "anxious", "terse-guarded")[k % 3]
        base = get_family(family).sample(k + 1, pool, temperature=0.3 * (k % 2))
        judge = ("persona", "llm", "llm-turn")[k % 3]
        extra = {"template": template} if prompt == "mine" else {}
        out.append(llm_spec(base, prompt=prompt, judge=judge, endpoint="fake", **extra))
    return out


def play(name: str) -> tuple[list[dict[str, Any]], list[str]]:
    scenario = get_scenario(name)
    with FakeOpenAI(model) as fake:
        endpoint = EndpointConfig(base_url=fake.base_url, model="fake", timeout_s=5.0)
        settings = LLMSettings(endpoints={"fake": endpoint}, cache=None, conversations=1)
        with LLMRuntime.open(settings, {"fake"}, check=False) as rt:
            eps = evaluate(
                reference_agent(scenario),
                members(scenario, TEMPLATE),
                scenario,
                split="heldout",
                per_member=2,
                llm=rt,
                max_turns=12,
            )
        bodies = [s.body for s in fake.seen]
    return bodies, [e.model_dump_json() for e in sorted(eps, key=lambda e: e.id)]


def digest(items: list[Any]) -> str:
    text = json.dumps(items, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def systems(bodies: list[dict[str, Any]]) -> list[str]:
    """The distinct system prompts sent, in order."""
    seen: list[str] = []
    for b in bodies:
        s = b["messages"][0]["content"]
        if s not in seen:
            seen.append(s)
    return seen


@pytest.mark.parametrize(
    ("name", "prompts", "requests", "episodes"),
    [
        ("intake", "eea89e07a87a609d", "51cb1798abd3906e", "c32e7ccfed3102da"),
        ("support", "f4f43b152cdc0f62", "f2d94f37eff48dcd", "6df53d3f81bd2851"),
    ],
)
def test_slot_scenarios_llm_users_send_and_play_what_they_did(
    name: str, prompts: str, requests: str, episodes: str
) -> None:
    bodies, eps = play(name)
    sent = sorted(bodies, key=lambda b: json.dumps(b, sort_keys=True))
    assert (digest(systems(bodies)), digest(sent), digest(eps)) == (prompts, requests, episodes)


def test_intakes_plain_prompt_reads_as_it_did() -> None:
    bodies, _ = play("intake")
    plain = systems(bodies)[0]
    assert plain.startswith(INTAKE_PLAIN), plain
    assert plain.endswith("- date of birth: 3 December 1967"), plain
