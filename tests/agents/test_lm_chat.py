"""A language-model agent trains and plays on the text its server would send it: every context
the policy reads is, token for token, the chat template's rendering of the endpoint agent's
messages (tools, tool calls, their results, words), and a turn is played in the endpoint
agent's rounds."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from sim2human.agents.base import Observation
from sim2human.agents.llm import LLMAgent
from sim2human.agents.lm_chat import calls_text, chat_template
from sim2human.agents.lm_models import load, save, tiny
from sim2human.agents.lm_policy import LMPolicy
from sim2human.experiments.study.config import parse_study
from sim2human.experiments.study.world import StudyWorld
from sim2human.llm.client import EndpointConfig
from sim2human.llm.runtime import LLMRuntime, LLMSettings
from sim2human.rollout.evaluate import evaluate
from sim2human.testing import FakeOpenAI, Reply, completion
from sim2human.train.config import WarmStartConfig
from sim2human.train.warm_start import corpus_texts, reference_calls
from sim2human.types import Episode, ToolCall
from tool_calls import SEVERITY_RECORDED

SMALL = {"hidden": 16, "layers": 1, "heads": 2, "vocab": 600}


def _calls(scenario: str, n: int) -> tuple[Any, list[Episode]]:
    cfg = {
        "name": "chat",
        "seeds": [0],
        "scenario": scenario,
        "agent": {"kind": "lm", "model": "tiny"},
        "conditions": [{"name": "e", "sampler": "uniform"}],
    }
    world = StudyWorld.build(parse_study(cfg))
    ws = WarmStartConfig(episodes=n)
    return world.scenario, reference_calls(world.scenario, world.ensemble.train, ws, 0, 20)


def _served(scenario: Any, obs: Observation, tok: Any, *, prompt: bool = True) -> str:
    """What a server renders for the endpoint agent's request at ``obs`` (tool arguments as
    objects, as llama.cpp and vLLM hand them to the template)."""
    agent = LLMAgent(scenario, client=None)  # type: ignore[arg-type]
    messages = agent.messages(obs)
    for message in messages:
        for call in message.get("tool_calls") or []:
            call["function"]["arguments"] = json.loads(call["function"]["arguments"])
    return str(
        tok.apply_chat_template(
            messages, tools=agent.tools, tokenize=False, add_generation_prompt=prompt
        )
    )


def _observation(episode: Episode, upto: int) -> Observation:
    """The observation before the agent turn at ``episode.turns[upto]``."""
    turns = episode.turns[:upto]
    return Observation(
        user_text=turns[-1].text if turns else "",
        turn=sum(t.speaker == "agent" for t in turns),
        max_turns=20,
        history=(),
        view=SimpleNamespace(brief=""),  # type: ignore[arg-type]
        transcript=tuple((t.speaker, t.text) for t in turns),
        tool_calls=tuple(t.tool_calls for t in turns if t.speaker == "agent"),
        call=episode.id,
    )


@pytest.mark.parametrize("name", ["intake", "support", "negotiation"])
def test_every_context_the_policy_reads_is_the_chat_its_server_sends(name: str) -> None:
    scenario, calls = _calls(name, 4)
    model, tok = tiny(corpus_texts(calls, scenario), seed=0, sizes=SMALL)
    policy = LMPolicy(model, tok, scenario)
    checked = 0
    for episode in calls:
        for i, turn in enumerate(episode.turns):
            if turn.speaker != "agent":
                continue
            obs = _observation(episode, i)
            served = _served(scenario, obs, tok)
            context = policy._context(obs)
            assert tok.decode(context.ids) == served
            assert context.ids == tok.encode(served, add_special_tokens=False)
            checked += 1
        whole = policy.written_trace(episode.turns)  # what the warm start trains on
        assert tok.decode(whole.ids) == _served(
            scenario, _observation(episode, len(episode.turns)), tok, prompt=False
        )
    assert checked > 10
    if name != "negotiation":  # a desk: its tools are offered and called
        assert any(t.tool_calls for e in calls for t in e.turns)
        assert "# Tools" in tok.decode(policy.written_trace([]).ids)


class _Scripted:
    """``LMPolicy.sample`` replaced: each round writes the next of ``said``."""

    def __init__(self, policy: LMPolicy, said: Sequence[str]) -> None:
        self.policy, self.said, self.contexts = policy, list(said), []  # type: list[Any]

    def __call__(self, contexts: Any, rngs: Any, calls: Any = None, **_: Any) -> list[list[int]]:
        self.contexts.append([list(c) for c in contexts])
        text = self.said.pop(0)
        return [[*self.policy._encode(text), self.policy.stop] for _ in contexts]


def test_a_turn_that_calls_tools_reads_their_results_and_then_speaks() -> None:
    scenario, calls = _calls("intake", 2)
    model, tok = tiny(corpus_texts(calls, scenario), seed=0, sizes=SMALL)
    policy = LMPolicy(model, tok, scenario, keep_traces=True)
    record = ToolCall(name="record", arguments={"field": "severity", "value": "7"})
    script = _Scripted(policy, [calls_text([record]), "Thank you. Anything else?"])
    policy.sample = script  # type: ignore[method-assign]
    episode = calls[0]
    obs = _observation(episode, 2)  # after the caller's first answer
    (turn,) = policy.act([obs])
    assert turn.text == "Thank you. Anything else?" and turn.tool_calls == (record,)
    second = tok.decode(script.contexts[1][0])
    assert second.endswith(
        f"<|im_start|>user\n<tool_response>\n{SEVERITY_RECORDED}\n</tool_response>"
        "<|im_end|>\n<|im_start|>assistant\n"
    )
    # its next turn reads, token for token, what its server would send after that turn
    later = _observation(episode, 2)
    later = Observation(
        user_text="Nothing else.",
        turn=obs.turn + 1,
        max_turns=20,
        history=(),
        view=later.view,
        transcript=(*obs.transcript, ("agent", turn.text), ("user", "Nothing else.")),
        tool_calls=(*obs.tool_calls, turn.tool_calls),
        call=episode.id,
    )
    assert tok.decode(policy._context(later).ids) == _served(scenario, later, tok)
    trace = policy.take_trace(episode.id)
    assert trace is not None
    own = tok.decode([t for t, m in zip(trace.ids, trace.mask, strict=True) if m])
    assert "<tool_call>" in own and "Thank you." in own and "recorded" not in own


def test_a_round_that_speaks_and_calls_ends_the_turn_as_the_endpoint_agent_does() -> None:
    scenario, calls = _calls("intake", 2)
    model, tok = tiny(corpus_texts(calls, scenario), seed=0, sizes=SMALL)
    policy = LMPolicy(model, tok, scenario)
    record = ToolCall(name="record", arguments={"field": "severity", "value": "7"})
    script = _Scripted(policy, [calls_text([record]) + " Got it."])
    policy.sample = script  # type: ignore[method-assign]
    (turn,) = policy.act_each([_observation(calls[0], 2)], [np.random.default_rng(0)])
    assert turn.text == "Got it." and turn.tool_calls == (record,) and len(script.contexts) == 1


def test_a_saved_policy_carries_the_template_it_was_trained_in(tmp_path: Path) -> None:
    scenario, calls = _calls("intake", 2)
    model, tok = tiny(corpus_texts(calls, scenario), seed=0, sizes=SMALL)
    save(model, tok, tmp_path / "policy")
    _, loaded = load(tmp_path / "policy")
    assert loaded.chat_template == chat_template()
    obs = _observation(calls[0], len(calls[0].turns) - 1)
    assert _served(scenario, obs, loaded) == _served(scenario, obs, tok)


def test_behind_an_endpoint_the_policy_plays_the_calls_it_plays_in_process() -> None:
    """The end-to-end check: a stand-in model whose reply is a function of the whole text it
    reads plays the same members in process (``LMPolicy``) and behind an HTTP endpoint
    (``LLMAgent``, as ``eval-agent`` plays it; the fake server renders each request with the
    saved template, tool arguments parsed as llama.cpp and vLLM do). Any difference in what the
    two read at any round of any turn gives another reply, and other calls."""
    scenario, calls = _calls("intake", 4)
    model, tok = tiny(corpus_texts(calls, scenario), seed=0, sizes=SMALL)
    replies = [
        calls_text([ToolCall(name="record", arguments={"field": "severity", "value": "7"})]),
        "How bad is it, out of 10?",
        calls_text([ToolCall(name="submit")]) + " Thank you, goodbye.",
        "When did it start?",
        calls_text([ToolCall(name="record", arguments={"field": "dob", "value": "x"})]),
    ]

    def respond(text: str) -> str:
        return replies[int(hashlib.sha256(text.encode()).hexdigest(), 16) % len(replies)]

    policy = LMPolicy(model, tok, scenario, temperature=0)

    def sample(contexts: Any, rngs: Any, calls: Any = None, **_: Any) -> list[list[int]]:
        return [[*policy._encode(respond(tok.decode(c))), policy.stop] for c in contexts]

    policy.sample = sample  # type: ignore[method-assign]

    def serve(n: int, body: dict[str, Any]) -> Reply:
        for message in body["messages"]:
            for call in message.get("tool_calls") or []:
                call["function"]["arguments"] = json.loads(call["function"]["arguments"])
        text = tok.apply_chat_template(
            body["messages"], tools=body.get("tools"), tokenize=False, add_generation_prompt=True
        )
        return Reply(body=completion(respond(str(text))))

    world_members = _members()
    in_process = evaluate(policy, world_members, scenario, split="train", per_member=1, max_turns=8)
    with FakeOpenAI(serve) as fake:
        config = EndpointConfig(base_url=fake.base_url, model="fake", timeout_s=5.0)
        settings = LLMSettings(endpoints={"fake": config}, cache=None)
        with LLMRuntime.open(settings, {"fake"}, check=False) as rt:
            agent = LLMAgent(scenario, rt.clients["fake"])
            served = evaluate(
                agent, world_members, scenario, split="train", per_member=1, llm=rt, max_turns=8
            )

    def said(episodes: list[Episode]) -> list[Any]:
        ordered = sorted(episodes, key=lambda e: e.id)  # served calls end in any order
        return [[(t.speaker, t.text, t.tool_calls) for t in e.turns] for e in ordered]

    assert said(served) == said(in_process)
    assert sorted(str(e.record) for e in served) == sorted(str(e.record) for e in in_process)
    rounds = [t for e in in_process for t in e.agent_turns if t.tool_calls and t.text != "..."]
    assert rounds and len(fake.seen) > sum(len(e.agent_turns) for e in served)  # rounds played


def _members() -> list[Any]:
    cfg = {
        "name": "chat",
        "seeds": [0],
        "agent": {"kind": "lm", "model": "tiny"},
        "conditions": [{"name": "e", "sampler": "uniform"}],
    }
    return list(StudyWorld.build(parse_study(cfg)).ensemble.train[:3])
