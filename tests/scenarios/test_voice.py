"""A scenario's voice: simulator kinds and agents speak only its words."""

from __future__ import annotations

import ast
import dataclasses
import re
from pathlib import Path

import numpy as np
import pytest

import sim2human
from sim2human.agents.llm import LLMAgent
from sim2human.checks import check_scenario
from sim2human.errors import UsageError
from sim2human.rollout.conversation import Job
from sim2human.rollout.play import play
from sim2human.scenarios.catalog import get_scenario
from sim2human.scenarios.voice import PromptWords, Voice, standard_prompts
from sim2human.simulators.base import QuirkPool
from sim2human.simulators.families import get_family
from sim2human.simulators.kinds import build_simulator
from sim2human.simulators.llm import LLMSimulator, llm_spec
from sim2human.simulators.llm_prompts import PROMPT_STYLES
from sim2human.testing import PIZZA_VOICE, TinyScenario

SRC = Path(sim2human.__file__).parent
NEUTRAL = [
    "simulators/persona.py",
    "simulators/llm.py",
    "simulators/llm_prompts.py",
    "simulators/llm_guard.py",
    "agents/llm.py",
]
TINY_POOL = QuirkPool(liked=("thanks for calling",), triggers=("tiny pizza",))
INTAKE_WORDS = re.compile(r"\b(?:nurse|clinic|doctor|patient|caller|medic\w*)\b", re.I)


def _strings(path: Path) -> list[str]:
    """Every string constant of a module that is not a docstring (a bare string statement)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr)}
    return [
        n.value
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs
    ]


@pytest.mark.parametrize("module", NEUTRAL)
def test_simulators_and_agents_say_no_intake_words(module: str) -> None:
    said = [s for s in _strings(SRC / module) if INTAKE_WORDS.search(s)]
    assert not said, f"{module} speaks intake's words: {said}"


def test_persona_users_speak_the_scenario_s_lines() -> None:
    tiny = TinyScenario()
    spec = get_family("standard").sample(0, TINY_POOL)
    sim = build_simulator(spec, tiny)
    assert sim.start(tiny.sample_profile(np.random.default_rng(0)), np.random.default_rng(0)).text
    assert sim.reply("Thank you, goodbye!").text == PIZZA_VOICE.user.closing
    hang = build_simulator(
        spec.model_copy(update={"traits": spec.traits.model_copy(update={"patience": 0})}), tiny
    )
    hang.start(tiny.sample_profile(np.random.default_rng(0)), np.random.default_rng(0))
    assert hang.reply("What size would you like?").text == PIZZA_VOICE.user.hang_up


def test_a_voice_without_role_play_refuses_llm_users_clearly() -> None:
    tiny = TinyScenario()
    spec = llm_spec(get_family("standard").sample(0, TINY_POOL))
    with pytest.raises(UsageError, match="no voice for llm users"):
        LLMSimulator(spec, tiny, client=None)  # type: ignore[arg-type]


def test_the_llm_agent_takes_the_scenario_s_prompt_or_the_user_s() -> None:
    tiny = TinyScenario()
    assert PIZZA_VOICE.agent is not None
    heard = LLMAgent(tiny, client=None, record_by="heard")  # type: ignore[arg-type]
    assert heard.system_prompt == PIZZA_VOICE.agent.system_prompt
    tools = LLMAgent(tiny, client=None)  # type: ignore[arg-type]  # tools: a sentence more
    assert tools.system_prompt.startswith(PIZZA_VOICE.agent.system_prompt + " Record each")
    own = LLMAgent(tiny, client=None, system_prompt="Sell pizza.", record_by="heard")  # type: ignore[arg-type]
    assert own.system_prompt == "Sell pizza." and own.voice.own_labels == ("agent", "assistant")


class Mute(TinyScenario):
    voice = Voice(user=dataclasses.replace(PIZZA_VOICE.user, tangents=()))


def test_the_scenario_check_catches_a_missing_line() -> None:
    report = check_scenario(Mute())  # type: ignore[arg-type]
    assert [f.check for f in report.violations()] == [
        "voice: user lines said, every llm prompt style written"
    ]
    assert "tangents" in report.violations()[0].detail


def test_persona_users_play_the_tiny_scenario_to_the_end() -> None:
    from sim2human.checks import InOrderAgent

    tiny = TinyScenario()
    pool = TINY_POOL
    jobs = [Job(spec=get_family("cooperative").sample(s, pool), seed=s) for s in range(4)]
    episodes = play(InOrderAgent(tiny), jobs, tiny, max_turns=12)  # type: ignore[arg-type]
    assert len(episodes) == 4 and all(e.kind == "persona" for e in episodes)


@pytest.mark.parametrize("name", ["intake", "negotiation", "support"])
def test_the_built_in_scenarios_write_the_prompt_styles_once(name: str) -> None:
    """Each built-in scenario gives its words (``PromptWords``); the four styles' shape is
    ``standard_prompts``' alone (it was written three times, each copy drifting on its own)."""
    role_play = get_scenario(name).voice.role_play
    assert role_play is not None
    shared = standard_prompts(PromptWords("", "", "", "", "", "", ("", "")))
    assert role_play.prompts.keys() == shared.keys() == set(PROMPT_STYLES)
    for style, template in role_play.prompts.items():
        assert template.__code__ is shared[style].__code__, style
