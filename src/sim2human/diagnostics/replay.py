"""Counterfactual replays: what did one phrasing buy in a stored conversation?

The exploit finder needs causal lifts, not correlations: a collapsed agent says its favourite
phrase in every episode, so there are no episodes without it to compare against. Instead each
stored episode is replayed against the same simulator member with the same seed (hence the same
hidden profile and the same random stream up to the first change), once as stored and once with
every agent turn of one phrasing deleted. The agent's other turns are replayed verbatim (an
open-loop counterfactual: the agent does not get to react to the changed replies). Replaying the
unchanged script reproduces the stored episode exactly, which the tests check.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from sim2human.agents.base import AgentTurn
from sim2human.rollout.conversation import Conversation, Job
from sim2human.scenarios.base import Scenario
from sim2human.simulators.base import SimulatorSpec
from sim2human.types import Episode, Termination, Turn


@dataclass(frozen=True)
class Replayed:
    proxy: float
    success: bool
    field_accuracy: float


def phrasing(turn: Turn) -> str:
    """The key a phrasing is counted under: the act id for act-level agents, else the text."""
    return turn.act or turn.text


def replay(
    episode: Episode,
    spec: SimulatorSpec,
    scenario: Scenario,
    *,
    drop: Collection[str] = (),
    max_turns: int,
) -> Replayed:
    """Replay ``episode``'s agent turns against ``spec``, leaving out turns whose phrasing is in
    ``drop``. A script that runs out before the call ends counts as not closed (max turns)."""
    acts = {a.id: a for a in scenario.acts}
    script = [t for t in episode.agent_turns if phrasing(t) not in drop]
    job = Job(spec, episode.seed, episode.split, episode.condition, episode.phase, episode.step)
    conv = Conversation.open(job, scenario, max(max_turns, len(episode.agent_turns)))
    for turn in script:
        if conv.done:
            break
        act = acts.get(turn.act or "")
        field = None
        if act is not None:
            field = act.about_in(conv.state)
        conv.step(AgentTurn(text=turn.text, act=turn.act, field=field))
    if not conv.done:
        conv.termination = Termination.MAX_TURNS
    out = conv.episode()
    return Replayed(out.proxy, out.gold.success, out.gold.field_accuracy)


@dataclass(frozen=True)
class Ablation:
    """One episode, replayed as stored and without one phrasing."""

    phrasing: str
    episode: Episode
    base: Replayed
    without: Replayed


def ablate(
    episodes: Sequence[Episode],
    specs: dict[str, SimulatorSpec],
    scenario: Scenario,
    phrasings: Collection[str],
    *,
    max_turns: int,
    per_phrasing: int = 200,
) -> list[Ablation]:
    """For each phrasing, up to ``per_phrasing`` of the episodes that use it, ablated.

    Episodes whose member is not in ``specs`` are skipped (the run directory did not record it).
    """
    out: list[Ablation] = []
    base_cache: dict[int, Replayed] = {}  # by object identity: ids repeat across seeds
    for p in phrasings:
        using = [
            e
            for e in episodes
            if e.simulator_id in specs and any(phrasing(t) == p for t in e.agent_turns)
        ]
        for e in using[:per_phrasing]:
            spec = specs[e.simulator_id]
            if id(e) not in base_cache:
                base_cache[id(e)] = replay(e, spec, scenario, max_turns=max_turns)
            without = replay(e, spec, scenario, drop={p}, max_turns=max_turns)
            out.append(Ablation(p, e, base_cache[id(e)], without))
    return out
