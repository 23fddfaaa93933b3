"""A table of gold says which record it graded: what the agent submitted, what was heard, or
both (mixed, with counts)."""

from __future__ import annotations

from sim2human.agents.scripted import reference_agent
from sim2human.metrics.record_rule import HEARD, SUBMITTED, record_rule_line
from sim2human.rollout.evaluate import eval_jobs
from sim2human.rollout.play import play
from sim2human.scenarios.catalog import get_scenario
from sim2human.simulators.base import QuirkPool
from sim2human.simulators.families import get_family


def test_the_line_names_the_rule_of_the_episodes_or_both_with_counts() -> None:
    pizza = get_scenario("pizza")
    spec = get_family("cooperative").sample(0, QuirkPool.from_acts(pizza.acts))
    heard = play(reference_agent(pizza), eval_jobs([spec], "heldout", 3, "x"), pizza, max_turns=4)
    submitted = [e.model_copy(update={"record_source": "submitted"}) for e in heard[:1]]
    assert record_rule_line(heard) == HEARD and record_rule_line(submitted) == SUBMITTED
    mixed = record_rule_line([*heard, *submitted])
    assert "mixed" in mixed and "1 episode(s) on what the agent submitted" in mixed
    assert "3 on what the call made heard" in mixed
    assert record_rule_line([]) == ""
