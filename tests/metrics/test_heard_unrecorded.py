"""``metrics.heard_unrecorded``: the fields a call made heard that the agent's submitted record
lacks, read again from stored transcripts."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from sim2human.agents.base import AgentTurn, Observation
from sim2human.agents.scripted import ScriptedAgent
from sim2human.metrics.heard_unrecorded import heard_outcome, unrecorded
from sim2human.rollout.evaluate import evaluate
from sim2human.scenarios.catalog import get_scenario
from sim2human.scenarios.core import AnyScenario
from sim2human.simulators.base import QuirkPool
from sim2human.simulators.families import get_family
from sim2human.types import Episode

SUPPORT = get_scenario("support")


class SpeakingAgent:
    """The reference agent's words without its acts: the scenario hears only its text, as it
    hears a language model's."""

    name = "speaking"

    def __init__(self, scenario: AnyScenario) -> None:
        self.inner = ScriptedAgent(scenario)

    def act(self, observations: Sequence[Observation]) -> list[AgentTurn]:
        return [AgentTurn(text=t.text) for t in self.inner.act(observations)]


def speaking_calls(scenario: AnyScenario) -> list[Episode]:
    pool = QuirkPool.from_acts(scenario.acts)
    members = [
        get_family(f).sample(i, pool) for f in ("cooperative", "noisy-line", "terse-guarded")
        for i in range(2)
    ]  # fmt: skip
    agent = SpeakingAgent(scenario)
    return evaluate(agent, members, scenario, split="train", per_member=3, max_turns=20)


@pytest.fixture(scope="module")
def calls() -> list[Episode]:
    return speaking_calls(SUPPORT)


@pytest.mark.parametrize("name", ["intake", "support"])
def test_a_transcript_read_again_is_graded_as_the_call_was(name: str) -> None:
    """An agent without tools is graded on what was heard: reading its stored transcript again
    gives the same outcome, field for field, on noisy lines too (intake's answers are numbers
    and names that only the question asked makes a field: the agent's turns are read too)."""
    scenario = get_scenario(name)
    played = speaking_calls(scenario)
    assert all(e.record_source == "heard" for e in played)
    assert sum(e.gold.success for e in played) >= 6  # the reference's words complete calls
    assert sum(not e.gold.success for e in played) >= 1  # and some fail: the fields differ
    for e in played:
        assert heard_outcome(e, scenario) == e.gold, e.id


def submitted(e: Episode, record: dict[str, object]) -> Episode:
    """``e`` as if a tool agent had submitted ``record`` after the same words."""
    gold = SUPPORT.grade(e.profile, record, e.termination)  # type: ignore[arg-type]
    return e.model_copy(update={"record_source": "submitted", "record": record, "gold": gold})


def test_a_submitted_record_is_read_beside_what_was_heard(calls: list[Episode]) -> None:
    empty = SUPPORT.empty_record()  # type: ignore[attr-defined]
    heard = [e for e in calls if any(e.gold.fields.values())]
    nothing = [submitted(e, dict(empty)) for e in heard]
    everything = [submitted(e, dict(e.record)) for e in heard]
    fields = sum(sum(e.gold.fields.values()) for e in heard)

    lost = unrecorded({"run-a": nothing}, SUPPORT, "train")
    assert lost is not None and lost.share.mean == 1.0 and lost.share.ci == (1.0, 1.0)
    assert (lost.calls, lost.heard, lost.unrecorded) == (len(heard), fields, fields)
    kept = unrecorded({"run-a": everything}, SUPPORT, "train")
    assert kept is not None and kept.share.mean == 0.0 and kept.unrecorded == 0
    half = unrecorded({"run-a": nothing, "run-b": everything}, SUPPORT, "train")
    assert half is not None and half.share.mean == pytest.approx(0.5)
    assert half.share.ci[0] < 0.5 < half.share.ci[1]  # two runs: the interval resamples them

    one = heard[0]
    field = next(f for f, ok in one.gold.fields.items() if ok)
    dropped = submitted(one, {**one.record, field: None})
    only = unrecorded({"run-a": [dropped]}, SUPPORT, "train")
    assert only is not None and only.unrecorded == 1
    assert only.share.mean == pytest.approx(1 / sum(one.gold.fields.values()))


def test_only_submitted_records_of_the_split_asked_are_read(calls: list[Episode]) -> None:
    assert unrecorded({"run-a": calls}, SUPPORT, "train") is None  # heard: nothing to compare
    empty = dict(SUPPORT.empty_record())  # type: ignore[attr-defined]
    tools = [submitted(e, empty) for e in calls]
    assert unrecorded({"run-a": tools}, SUPPORT, "heldout") is None
