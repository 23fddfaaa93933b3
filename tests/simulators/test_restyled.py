"""``restyled-aci``: persona members saying cached rewrites of their lines, and
``sim2human restyle-family``, which makes the cache (acceptance rule tested on fake models)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest

from aci_data import aci_env, needs_aci
from embedded_model import serve_model
from sim2human.agents.scripted import ScriptedAgent
from sim2human.cli.app import main
from sim2human.experiments.study.config import parse_study
from sim2human.llm.endpoint import ChatResult
from sim2human.rollout.evaluate import evaluate
from sim2human.scenarios.intake.grounding import restyle_family as rf
from sim2human.scenarios.intake.scenario import IntakeScenario
from sim2human.simulators.base import QuirkPool
from sim2human.simulators.families import get_family
from sim2human.simulators.kinds import build_simulator, is_programmatic
from sim2human.simulators.persona import PersonaSimulator
from sim2human.simulators.restyle_entries import Restyle
from sim2human.simulators.restyled import (
    RestyledFamily,
    RestyledPersona,
    Voice,
    load_restyled,
)
from sim2human.testing import FakeOpenAI, Reply, completion

__all__ = ["aci_env"]
SCENARIO = IntakeScenario()
POOL = QuirkPool.of(SCENARIO)
VOICE = Voice.of(
    (
        Restyle(line="Hmm, I'm not sure.", rewrites=("um, i'm not really sure.",)),
        Restyle(line="I've got {v}.", field="complaint", rewrites=("yeah, so i've got {v}.",)),
        Restyle(line="I'm allergic to {v}.", field="allergies", rewrites=("i take {v}.",)),
        Restyle(line="Okay.", rewrites=("I take aspirin.",)),
    )
)


def test_the_shipped_family_loads_and_plays_an_intake_call_end_to_end() -> None:
    family = get_family("restyled-aci")
    assert isinstance(family, RestyledFamily)
    assert family.cooperativeness == get_family("fitted-aci").cooperativeness
    specs = [family.sample(k, POOL) for k in range(3)]
    assert all(s.kind == "restyled" and is_programmatic(s) for s in specs)
    assert isinstance(build_simulator(specs[0], SCENARIO), RestyledPersona)
    episodes = evaluate(
        ScriptedAgent(SCENARIO), specs, SCENARIO, split="t", per_member=2, max_turns=20
    )
    assert len(episodes) == 6 and all(e.family == "restyled-aci" for e in episodes)
    assert all(any(t.speaker == "user" and t.text for t in e.turns) for e in episodes)
    cfg = parse_study(
        {
            "name": "restyled",
            "seeds": [0],
            "ensemble": {"train": ["cooperative", "restyled-aci"], "heldout": ["noisy-line"]},
            "conditions": [{"name": "u", "sampler": "uniform"}],
        }
    )
    assert "restyled-aci" in cfg.ensemble.train


def test_a_cached_line_is_said_in_its_rewrite_with_the_value_in_place() -> None:
    rng = np.random.default_rng(0)
    said = VOICE.restyle("I've got a headache.", "complaint", rng, SCENARIO)
    assert said == "yeah, so i've got a headache."
    # asked about chest pain, the extractor would read that "yeah" as a yes: the plain line
    asked = VOICE.restyle("I've got a headache.", "complaint", rng, SCENARIO, ("red_flag",))
    assert asked == "I've got a headache."
    assert VOICE.restyle("Hmm, I'm not sure.", None, rng, SCENARIO) == "um, i'm not really sure."
    # a line not in the cache, or a template of another field, is said as it is
    assert VOICE.restyle("Mm-hm.", None, rng, SCENARIO) == "Mm-hm."
    assert VOICE.restyle("I've got a headache.", "history", rng, SCENARIO) == (
        "I've got a headache."
    )


def test_a_rewrite_the_scenario_reads_differently_is_not_said() -> None:
    rng = np.random.default_rng(0)
    # "i take penicillin" reads as a medication, not an allergy: the original is said
    said = VOICE.restyle("I'm allergic to penicillin.", "allergies", rng, SCENARIO)
    assert said == "I'm allergic to penicillin."
    assert VOICE.restyle("Okay.", None, rng, SCENARIO) == "Okay."  # would state a medicine


def test_a_restyled_member_behaves_as_the_persona_with_its_traits() -> None:
    spec = get_family("fitted-aci").sample(5, POOL)  # noise off: it garbles words differently
    spec = spec.model_copy(update={"traits": spec.traits.model_copy(update={"noise": {}})})
    restyled = RestyledPersona(spec.model_copy(update={"kind": "restyled"}), SCENARIO, VOICE)
    plain = PersonaSimulator(spec, SCENARIO)
    profile = SCENARIO.sample_profile(np.random.default_rng(3))
    profile = {**profile, "complaint": "headache"}
    a = [plain.start(profile, np.random.default_rng(9))]
    b = [restyled.start(profile, np.random.default_rng(9))]
    for q in ("What's the main problem?", "Any allergies?", "Are you on any medicines?") * 2:
        a.append(plain.reply(q))
        b.append(restyled.reply(q))
    assert [t.tags for t in a] == [t.tags for t in b]
    assert [t.done for t in a] == [t.done for t in b]


class FakeRewriter:
    """A scripted chat model: the k-th request about a line gets the k-th kind of reply."""

    def __init__(self) -> None:
        self.asked: Counter[str] = Counter()

    async def chat(
        self,
        messages: Sequence[dict[str, str]],
        *,
        temperature: float,
        top_p: float = 1.0,
        max_tokens: int,
        seed: int | None = None,
    ) -> ChatResult:
        line = messages[-1]["content"]
        k = self.asked[line]
        self.asked[line] += 1
        text = (
            f"Patient: um, yeah, {line.lower()}",  # kept (the label is tidied away)
            f"{line} And I'm allergic to penicillin.",  # reads another value: rejected
            "Nurse: what is your date of birth?",  # out of role: rejected
            "I feel bad, honestly.",  # the value is gone: rejected
            f"um, {line} i mean i mean i mean i mean.",  # a run-on loop: rejected
        )[k % 5]
        return ChatResult(
            text=text, prompt_tokens=1, completion_tokens=1, latency_s=0.0, cached=False
        )


@needs_aci
@pytest.mark.usefixtures("aci_env")
def test_generation_keeps_only_rewrites_the_scenario_reads_the_same() -> None:
    lines = (
        rf.Line("I've got {v}.", "complaint", "complaint"),
        rf.Line("Okay.", None, "small_talk"),
    )
    fake = FakeRewriter()
    g = rf.generate(fake, rf.Settings(candidates=5, shots=3), lines=lines)
    template, okay = g.results
    assert template.rewrites == ["um, yeah, i've got {v}."]
    assert template.reasons == {
        "kept": 1,
        "read differently": 1,
        "out of role": 1,
        "value not kept once": 1,
        "long or looping": 1,
    }
    assert okay.rewrites == ["um, yeah, okay.", "I feel bad, honestly."]
    assert okay.reasons["read differently"] == okay.reasons["long or looping"] == 1
    assert sum(fake.asked.values()) == 10
    again = rf.generate(FakeRewriter(), rf.Settings(candidates=5, shots=3), lines=lines[:1])
    assert again.results[0] == template  # a line's requests do not depend on the other lines


def test_every_intake_line_is_enumerated_once() -> None:
    lines = rf.intake_lines()
    assert len(lines) == len(set(lines)) > 50
    assert {x.field for x in rf.intake_lines("answers")} == set(SCENARIO.fields)
    assert all(x.field is None for x in rf.intake_lines("others"))
    assert len(rf.intake_lines("answers")) + len(rf.intake_lines("others")) == len(lines)


def _rewrite(n: int, body: dict[str, object]) -> Reply:
    messages = body["messages"]
    assert isinstance(messages, list)
    return Reply(body=completion(f"um, so, {str(messages[-1]['content']).lower()}"))


@needs_aci
@pytest.mark.usefixtures("aci_env")
def test_the_command_writes_a_cache_a_study_can_play(tmp_path: Path) -> None:
    out = tmp_path / "mine.yaml"
    with FakeOpenAI(_rewrite) as fake:
        args = ["--base-url", fake.base_url, "--model", "fake", "--candidates", "1"]
        assert main(["restyle-family", "--out", str(out), "--name", "mine", *args]) == 0
    text = out.read_text(encoding="utf-8")
    assert "sim2human restyle-family --out" in text and "--name mine" in text
    family, lines = load_restyled(text, out)
    assert family.name == "mine" and len(lines) == len(rf.intake_lines())
    assert "um, so, i've got {v}." in next(r for r in lines if r.line == "I've got {v}.").rewrites
    kept = [r for r in lines if r.rewrites]
    assert len(kept) > len(lines) // 2  # the odd line the prefix changes is read differently


def test_bad_input_to_the_command_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "x.yaml"
    assert main(["restyle-family", "--out", str(out), "--data", str(tmp_path / "none")]) == 2
    err = capsys.readouterr().err.strip()
    assert "ACI-Bench corpus" in err and len(err.splitlines()) == 1
    for bad, why in ((tmp_path / "no" / "x.yaml", "does not exist"), (tmp_path, "directory")):
        assert main(["restyle-family", "--out", str(bad)]) == 2
        err = capsys.readouterr().err.strip()
        assert why in err and len(err.splitlines()) == 1
    assert main(["restyle-family", "--out", str(out), "--lines", "some"]) == 2
    assert main(["restyle-family", "--out", str(out), "--name", "chatty"]) == 2
    assert not out.exists()


@pytest.fixture(scope="module")
def embedded() -> Iterator[object]:
    yield from serve_model(n_parallel=2)


@pytest.mark.slow
@needs_aci
@pytest.mark.usefixtures("aci_env")
def test_the_embedded_model_restyles_a_few_lines(embedded: object) -> None:
    from sim2human.llm.client import ChatClient, EndpointConfig

    assert isinstance(embedded, EndpointConfig)
    lines = (
        rf.Line("I've got {v}.", "complaint", "complaint"),
        rf.Line("Hmm, I'm not sure.", None, "evasive"),
        rf.Line("Okay, sure.", None, "small_talk"),
    )
    g = rf.generate(ChatClient(embedded), rf.Settings(candidates=2, shots=3), lines=lines)
    assert [r.line for r in g.results] == [x.line for x in lines]
    assert all(sum(r.reasons.values()) == 2 for r in g.results)
    for r in g.results:  # whatever the small model said, what was kept reads the same
        for w in r.rewrites:
            assert ("{v}" in w) == ("{v}" in r.line)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("- a list\n", "expected a mapping with 'family' and 'lines'"),
        ("family: {name: x}\nlines: [{line: 'I have {v}.', rewrites: ['i do']}]\n", "drops {v}"),
        ("family: {name: x, cooperativeness: [0.9, 0.1]}\nlines: []\n", "cooperativeness"),
    ],
)
def test_a_bad_cache_file_is_one_error_naming_it(text: str, says: str, tmp_path: Path) -> None:
    from sim2human.errors import ConfigError

    where = tmp_path / "bad.yaml"
    with pytest.raises(ConfigError, match=str(where)) as err:
        load_restyled(text, where)
    assert says in str(err.value) and "\n" not in str(err.value)
