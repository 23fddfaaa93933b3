"""The ``llm`` kind on a scenario, against a fake chat model in the process (no network).

The contract checks ask no network, so the model is scripted (``FakeChat``): it says back the
reminder its turn carries (what a well-behaved small model does with "(Relevant facts: ...)"),
a fixed line otherwise, and rates every call 7/10. The member itself is the real
``LLMSimulator``: its prompt is built from the scenario's user side, its replies read by the
scenario, its satisfaction from the scenario's reading, for every prompt style, each judge and
a user's own template that names every variable. Each member goes through ``check_simulator``
behind the sync protocol (``SyncLLM``: the fake answers at once, so each turn runs to its end
on a loop of its own). A scenario that cannot have llm users is skipped with its reason.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import replace
from functools import partial
from typing import cast

import numpy as np

from sim2human.checks.report import CheckReport
from sim2human.checks.simulator import check_simulator
from sim2human.llm.client import ChatClient
from sim2human.llm.endpoint import ChatResult
from sim2human.scenarios.core import AnyScenario
from sim2human.simulators.base import QuirkPool, SimulatorSpec, UserTurn
from sim2human.simulators.families import FAMILIES
from sim2human.simulators.llm import LLMSimulator, llm_spec
from sim2human.simulators.llm_prompts import PROMPT_STYLES
from sim2human.simulators.llm_reading import unsupported
from sim2human.simulators.llm_templates import VARIABLES
from sim2human.types import Episode, Profile

JUDGES = ("persona", "llm-turn", "llm", "persona")
TEMPLATE = "\n".join(f"{name}: {{{{ {name} }}}}" for name in VARIABLES)
"""A user's own template naming every variable a template may use."""


class FakeChat:
    """A scripted chat model (see the module docstring); it counts what it was asked."""

    def __init__(self) -> None:
        self.requests = 0

    async def chat(
        self,
        messages: Sequence[dict[str, str]],
        *,
        temperature: float,
        top_p: float = 1.0,
        max_tokens: int,
        seed: int | None = None,
    ) -> ChatResult:
        self.requests += 1
        last = messages[-1]["content"]
        if "0 (not at all) to 10" in last:
            text = "7/10"
        elif "(Relevant facts:" in last:
            text = last.split("(Relevant facts:")[1].strip(" .)") + "."
        else:
            text = "Okay, go on."
        return ChatResult(
            text=text, prompt_tokens=1, completion_tokens=1, latency_s=0.0, cached=False
        )


class SyncLLM:
    """An ``llm`` member on ``FakeChat`` behind the sync ``Simulator`` protocol."""

    def __init__(self, spec: SimulatorSpec, scenario: AnyScenario) -> None:
        self.spec = spec
        self.inner = LLMSimulator(spec, scenario, cast(ChatClient, FakeChat()))

    def start(self, profile: Profile, rng: np.random.Generator) -> UserTurn:
        return asyncio.run(self.inner.astart(profile, rng))

    def reply(self, agent_text: str) -> UserTurn:
        return asyncio.run(self.inner.areply(agent_text))

    def hear_end(self, agent_text: str) -> None:
        self.inner.hear_end(agent_text)

    def satisfaction(self) -> float:
        return self.inner.satisfaction()

    def judge(self, episode: Episode) -> float:
        return asyncio.run(self.inner.ajudge(episode))


def llm_members(pool: QuirkPool) -> list[SimulatorSpec]:
    """A member per prompt style (each judge in turn) and one with a user's own template."""
    family = FAMILIES["standard"]
    out = [
        llm_spec(family.sample(k, pool, temperature=0.0), prompt=style, judge=JUDGES[k])
        for k, style in enumerate(PROMPT_STYLES)
    ]
    base = family.sample(len(out), pool, temperature=0.5)
    out.append(llm_spec(base, prompt="own", template=TEMPLATE, judge="persona"))
    return out


def check_llm_kind(report: CheckReport, name: str, scenario: AnyScenario, pool: QuirkPool) -> None:
    """The findings of the ``llm`` kind (called ``name``) on ``scenario``, into ``report``."""
    why = unsupported(scenario)
    if why is not None:
        report.skip(name, f"the scenario cannot have llm users: {why}")
        return
    for spec in llm_members(pool):
        sub = check_simulator(partial(SyncLLM, spec, scenario), scenario)
        prefix = f"{name}: {spec.id} on a fake model"
        report.findings += [replace(f, check=f"{prefix}: {f.check}") for f in sub.findings]
