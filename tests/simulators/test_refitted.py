"""``refitted-aci``: a family whose traits were fitted with ``retrieved-aci``'s retrieved turns
in the loop (``sim2human fit-family --voice retrieved-aci``), saying those turns: read from
ACI-Bench in place through the same pointers, left out with a note without the corpus."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import pytest

from aci_data import aci_env, needs_aci
from sim2human.agents.scripted import ScriptedAgent
from sim2human.rollout.evaluate import evaluate
from sim2human.scenarios.intake.grounding import fit_family as ff
from sim2human.scenarios.intake.scenario import IntakeScenario
from sim2human.simulators.base import QuirkPool, SimulatorSpec
from sim2human.simulators.families import FAMILIES, get_family
from sim2human.simulators.kinds import build_simulator, is_programmatic
from sim2human.simulators.restyled import (
    CACHES,
    RESTYLED,
    RestyledFamily,
    RestyledPersona,
    read_restyled,
    voice_of,
)
from sim2human.types import Episode

__all__ = ["aci_env"]
SCENARIO = IntakeScenario()
DATA = Path(str(resources.files("sim2human.simulators") / "data"))
SHIPPED = DATA / "refitted-aci.yaml"
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "collapse.yaml"
POOL = QuirkPool.of(SCENARIO)


def test_the_shipped_file_is_a_fit_with_retrieved_acis_pointers_and_its_command() -> None:
    text = SHIPPED.read_text(encoding="utf-8")
    assert "sim2human fit-family --out src/sim2human/simulators/data/refitted-aci.yaml" in text
    assert "--voice retrieved-aci" in text and "round kept:" in text and "CC BY 4.0" in text
    family, lines = read_restyled(text, SHIPPED)
    assert family.name == "refitted-aci" and family.corpus == "aci-bench"
    assert lines == CACHES["retrieved-aci"].lines  # the same pointers, no words of the corpus
    assert "refitted-aci" in RESTYLED and "refitted-aci" in FAMILIES
    spec = get_family("refitted-aci").sample(0, POOL)
    assert spec.kind == "restyled" and is_programmatic(spec)
    for trait in ff.BOX:  # ranges of the fit's width inside the box
        lo, hi = family.noise["disfluency"] if trait == "disfluency" else getattr(family, trait)
        assert ff.BOX[trait][0] <= lo <= hi <= ff.BOX[trait][1]


def _asks(e: Episode) -> list[str]:
    return [t.text for t in e.turns if t.speaker == "agent"]


def _quiet(spec: SimulatorSpec) -> SimulatorSpec:
    """Noise off: it garbles different words differently."""
    return spec.model_copy(update={"traits": spec.traits.model_copy(update={"noise": {}})})


@needs_aci
@pytest.mark.usefixtures("aci_env")
def test_members_play_and_keep_the_gold_of_the_persona_with_their_traits() -> None:
    refitted = get_family("refitted-aci")
    assert isinstance(refitted, RestyledFamily)
    said = [_quiet(refitted.sample(k, POOL)) for k in range(4)]
    plain = [s.model_copy(update={"kind": "persona"}) for s in said]
    assert isinstance(build_simulator(said[0], SCENARIO), RestyledPersona)
    agent = ScriptedAgent(SCENARIO)
    a, b = (
        sorted(  # matched by member and seed: the order they come back in is not fixed
            evaluate(agent, specs, SCENARIO, split="t", per_member=2, max_turns=20),
            key=lambda e: (e.simulator_id, e.seed),
        )
        for specs in (plain, said)
    )
    assert [e.profile for e in a] == [e.profile for e in b]
    assert [e.termination for e in a] == [e.termination for e in b]
    # every line reads as the persona's; a turn of several lines may still read differently as
    # a whole and take the call another way (the agent asks again, a silence falls elsewhere),
    # and then the gold may differ too (1 call of 60 at seeds 0-29: a red flag left unasked)
    path = [_asks(x) == _asks(y) for x, y in zip(a, b, strict=True)]
    assert sum(path) >= len(path) // 2
    assert all(x.gold == y.gold for x, y, same in zip(a, b, path, strict=True) if same)
    words = {t.text for e in a for t in e.turns if t.speaker == "user"}
    other = {t.text for e in b for t in e.turns if t.speaker == "user"}
    assert len(other - words) > len(other) // 3  # retrieved turns, not the templates
    voice = voice_of("refitted-aci")
    assert voice.fixed == voice_of("retrieved-aci").fixed  # retrieved-aci's words
