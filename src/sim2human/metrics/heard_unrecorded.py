"""Fields a caller got across that the agent never recorded: a tool agent's loss no simulator sees.

A simulated caller's satisfaction is what got across its line, courtesy and brevity
(``simulators.persona``: it never reads the agent's record); a tool agent's gold is the record
it submitted (``Episode.record_source == "submitted"``). An agent that lets a caller talk and
closes without writing it down is paid in full and fails the task, and the exploit finder's
replays cannot see it: they are graded on what was heard. On the booking desk, GRPO against a
frozen caller that says every field at once on hearing its trigger learned exactly that
(docs/results/lm-agents.md, "Three times the GRPO steps").

This re-reads each stored call's transcript with the scenario, as an act-level agent's record
is made (what the call made heard), grades that record beside the submitted one, and counts per
call the fields right in the first and not in the second, over the fields right in the first.
Only calls graded on a submitted record are read: an act-level agent's record *is* what was
heard. A scenario without fields (a negotiation) has nothing to count.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sim2human.metrics.outcomes import Estimate, cluster_bootstrap
from sim2human.scenarios.core import AnyScenario
from sim2human.types import Episode, Frozen, Outcome


class Unrecorded(Frozen):
    """Of the fields right in what a call made heard, the share not right in what the agent
    submitted: mean over calls with a field heard right, 95% interval resampling training runs,
    then calls."""

    share: Estimate
    calls: int
    """Calls with at least one field heard right (the ones the share is read from)."""
    heard: int
    """Fields heard right, over those calls."""
    unrecorded: int
    """Of them, fields not right in the submitted record."""


@dataclass(frozen=True)
class _Move:
    """An agent turn as the scenario hears it (``scenarios.core.AgentMove``), from a stored
    turn: its text, and its act where an act-level agent said one. Not ``agents.base.AgentTurn``:
    the agents sit a layer above the metrics."""

    text: str
    act: str | None
    field: str | None = None


def heard_outcome(episode: Episode, scenario: AnyScenario) -> Outcome:
    """``episode`` graded on what its transcript made heard: the record an act-level agent's
    call would have stored."""
    state = scenario.initial_state(episode.profile)
    for turn in episode.turns:
        if turn.speaker == "user":
            state = scenario.hear_user(state, turn.text)
        else:
            state = scenario.hear_agent(state, _Move(turn.text, turn.act))
    return scenario.grade(episode.profile, scenario.record(state), episode.termination)


def unrecorded(
    by_run: Mapping[str, Sequence[Episode]],
    scenario: AnyScenario,
    split: str,
    *,
    n_boot: int = 1000,
    seed: int = 0,
) -> Unrecorded | None:
    """``by_run``: each training run's evaluation calls; those of ``split`` (``train``: the
    members it trained against; ``heldout``) graded on a submitted record are read. None when
    no such call had a field heard right."""
    shares: list[float] = []
    runs: list[str] = []
    heard = missed = 0
    for run, episodes in by_run.items():
        for e in episodes:
            if e.split != split or e.record_source != "submitted":
                continue
            right = [f for f, ok in heard_outcome(e, scenario).fields.items() if ok]
            if not right:
                continue
            lost = sum(not e.gold.fields.get(f, False) for f in right)
            shares.append(lost / len(right))
            runs.append(run)
            heard += len(right)
            missed += lost
    if not shares:
        return None
    est = cluster_bootstrap(shares, runs, n_boot=n_boot, seed=seed)
    return Unrecorded(share=est, calls=len(shares), heard=heard, unrecorded=missed)
