"""Fidelity's human corpus is the scenario's own: MultiWOZ callers for ``support``, CaSiNo
campers for ``negotiation``, none for ``pizza`` (no replay corpus declared for it: the section
says so), ACI-Bench for intake (``test_fidelity_report``)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sim2human import corpora
from sim2human.agents.scripted import reference_agent
from sim2human.corpora import casino, multiwoz
from sim2human.report import fidelity
from sim2human.rollout.conversation import MAX_TURNS
from sim2human.rollout.evaluate import evaluate
from sim2human.scenarios.catalog import get_scenario
from sim2human.scenarios.intake.replay import ACI_BENCH
from sim2human.scenarios.negotiation.replay import CASINO
from sim2human.scenarios.support.replay import MULTIWOZ
from sim2human.simulators.base import QuirkPool
from sim2human.simulators.families import get_family
from sim2human.simulators.replay_families import human_corpus
from sim2human.types import Episode

DATA = Path(
    os.environ.get(corpora.ENV) or Path(__file__).resolve().parents[2].parent / "shared" / "data"
)
needs_multiwoz = pytest.mark.skipif(
    not (DATA / multiwoz.FOLDER).is_dir(), reason=f"MultiWOZ corpus not under {DATA}"
)
needs_casino = pytest.mark.skipif(
    not (DATA / casino.FOLDER).is_dir(), reason=f"CaSiNo corpus not under {DATA}"
)


def _episodes(name: str, families: tuple[str, ...]) -> list[Episode]:
    scenario = get_scenario(name)
    pool = QuirkPool.from_acts(scenario.acts)
    specs = [get_family(f).sample(1, pool, temperature=0.0) for f in families]
    return evaluate(
        reference_agent(scenario),
        specs,
        scenario,
        per_member=2,
        split="heldout",
        max_turns=MAX_TURNS,
    )


def test_each_scenario_names_its_own_human_corpus() -> None:
    assert human_corpus(get_scenario("intake")) is ACI_BENCH
    assert human_corpus(get_scenario("support")) is MULTIWOZ
    assert human_corpus(get_scenario("negotiation")) is CASINO
    assert human_corpus(get_scenario("pizza")) is None


@needs_multiwoz
def test_support_is_compared_with_multiwoz_callers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(corpora.ENV, str(DATA))
    eps = _episodes("support", ("noisy-line", "multiwoz-heldout"))
    played = {e.simulator_id.removeprefix("multiwoz-heldout-") for e in eps if e.kind == "replay"}
    assert len(played) == 1
    every = MULTIWOZ.human_turns(None)
    ref, other, n = fidelity.human_halves(MULTIWOZ, played, None)
    assert n == len(every) - 1  # the replayed caller is not compared with their own words
    own = next(turns for d, turns in every if d in played)
    only_theirs = set(own) - {t for d, ts in every if d not in played for t in ts}
    assert only_theirs and not only_theirs & set(ref + other)
    result = fidelity.measure(eps, get_scenario("support"), cap=40, embedder="lexical")
    assert "MultiWOZ" in result.reference and result.human_encounters == n
    assert result.rows[0].family == fidelity.HUMAN
    assert {"noisy-line", "multiwoz-heldout"} <= {r.family for r in result.rows}
    text = "\n".join(fidelity.markdown(result))
    assert "against held-out MultiWOZ 2.1 callers' turns" in text and "ACI-Bench" not in text


@needs_casino
def test_negotiation_is_compared_with_casino_campers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(corpora.ENV, str(DATA))
    eps = _episodes("negotiation", ("noisy-line", "cooperative"))
    result = fidelity.measure(eps, get_scenario("negotiation"), cap=40, embedder="lexical")
    assert "CaSiNo" in result.reference
    assert result.human_encounters == len(CASINO.human_turns(None))
    rows = {r.family: r for r in result.rows}
    assert set(rows) == {fidelity.HUMAN, "noisy-line", "cooperative"}
    # real campers make offers and state priorities: some of their lines carry content
    assert 0 < rows[fidelity.HUMAN].answer < 1
    text = "\n".join(fidelity.markdown(result))
    assert "CaSiNo campers" in text and "ACI-Bench" not in text


def test_a_scenario_without_a_corpus_says_it_has_no_human_corpus() -> None:
    eps = _episodes("pizza", ("noisy-line",))
    result = fidelity.measure_or_note(eps, get_scenario("pizza"), embedder="lexical")
    assert result.rows == []
    assert result.note == fidelity.no_human_corpus("pizza")
    lines = fidelity.markdown(result)
    assert lines[0] == "## Fidelity to human speech"
    assert "no human corpus for the scenario 'pizza'" in lines[2]
    assert "ACI-Bench patient turns" not in "\n".join(lines)
