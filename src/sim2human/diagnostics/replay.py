"""Counterfactual replays: what did one phrasing buy in a stored conversation?

The exploit finder needs causal lifts, not correlations: a collapsed agent says its favourite
phrase in every episode, so there are no episodes without it to compare against. Instead each
stored episode is replayed against the same simulator member with the same seed (hence the same
hidden profile and the same random stream up to the first change), once as stored and once with
every agent turn of one phrasing replaced by another of the agent's own phrasings: of its other
most used ones, the one the simulator rates highest in that episode (the agent's best
alternative, as its own reward sees it). An agent that writes its own words is counted by
sentence (``phrasings_of``): a language model says a courtesy line before a different question
each time, and the line, not the whole turn, is what a caller reacts to; a turn that says more
than the ablated sentence keeps the rest. Replacing rather than deleting keeps the call's timing:
deleting a phrasing the agent repeats also deletes the turns a user waits through before it acts
on its own (a camper that offers after a few turns), and credits the phrasing with what the
waiting bought. An agent with no other phrasing has the turns deleted. The agent's other turns
are replayed verbatim (an open-loop counterfactual: the agent does not get to react to the
changed replies). Replaying the unchanged script reproduces the stored episode exactly, which
the tests check. An agent that acts through tools is replayed without them, so its replays are
graded on what the call made heard: its tool calls, fixed to what the stored caller said, would
record a value the replayed caller never gave, and credit no phrasing with drawing it out.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass

from sim2human.agents.base import AgentTurn
from sim2human.rollout.conversation import AnyConversation, Conversation, Job
from sim2human.scenarios.core import AnyScenario
from sim2human.simulators.base import SimulatorSpec
from sim2human.types import Episode, Termination, Turn


@dataclass(frozen=True)
class Replayed:
    proxy: float
    success: bool
    field_accuracy: float


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def phrasings_of(turn: Turn) -> list[str]:
    """The phrasings a turn says: its act id for an act-level agent; else each of its sentences,
    in order, once (the whole text when it has none)."""
    if turn.act:
        return [turn.act]
    parts = [p.strip() for p in _SENTENCE_END.split(turn.text) if p.strip()]
    return list(dict.fromkeys(parts)) or [turn.text]


def _without(turn: Turn, drop: Collection[str]) -> Turn:
    """``turn`` with its sentences in ``drop`` taken out (it says others)."""
    kept = [p for p in phrasings_of(turn) if p not in drop]
    return turn.model_copy(update={"text": " ".join(kept)})


def replay(
    episode: Episode,
    spec: SimulatorSpec,
    scenario: AnyScenario,
    *,
    drop: Collection[str] = (),
    instead: Turn | None = None,
    max_turns: int,
) -> Replayed:
    """Replay ``episode``'s agent turns against ``spec``, with turns whose phrasing is in
    ``drop`` replaced by ``instead`` (left out without it). A script that runs out before the
    call ends counts as not closed (max turns)."""
    script: list[Turn] = []
    for t in episode.agent_turns:
        says = phrasings_of(t)
        hit = [p for p in says if p in drop]
        if not hit:
            script.append(t)
        elif len(hit) < len(says):
            script.append(_without(t, hit))
        elif instead is not None:
            script.append(instead)
    out = play_script(episode, script, spec, scenario, max_turns)
    return Replayed(out.proxy, out.gold.success, out.gold.field_accuracy)


def play_script(
    episode: Episode,
    script: Sequence[Turn],
    spec: SimulatorSpec,
    scenario: AnyScenario,
    max_turns: int,
    keep: Callable[[AnyConversation, Turn, str | None], bool] | None = None,
) -> Episode:
    """``script``'s agent turns played open loop against ``spec`` with ``episode``'s seed, as
    far as the call goes; ``keep(conversation, turn, field)`` may leave a turn out as the call
    stands when it comes (``scripts/filled_asks.py``: asks of a field already recorded)."""
    acts = {a.id: a for a in scenario.acts}
    job = Job(spec, episode.seed, episode.split, episode.condition, episode.phase, episode.step)
    conv = Conversation.open(job, scenario, max(max_turns, len(episode.agent_turns)))
    for turn in script:
        if conv.done:
            break
        act = acts.get(turn.act or "")
        field = act.about_in(conv.state) if act is not None else None
        if keep is None or keep(conv, turn, field):
            conv.step(AgentTurn(text=turn.text, act=turn.act, field=field))
    if not conv.done:
        conv.termination = Termination.MAX_TURNS
    return conv.episode()


ALTERNATIVES = 3
"""Other phrasings tried in place of an ablated one (the agent's most used, in order)."""


@dataclass(frozen=True)
class Ablation:
    """One episode, replayed as stored and with one phrasing replaced (``instead``: by which
    phrasing; None when the agent has no other and its turns were deleted)."""

    phrasing: str
    episode: Episode
    base: Replayed
    without: Replayed
    instead: str | None = None


def ablate(
    episodes: Sequence[Episode],
    specs: dict[str, SimulatorSpec],
    scenario: AnyScenario,
    phrasings: Collection[str],
    *,
    max_turns: int,
    per_phrasing: int = 200,
    turns: Mapping[str, Turn] | None = None,
) -> list[Ablation]:
    """For each phrasing, up to ``per_phrasing`` of the episodes that use it, ablated: its
    turns replaced by the best (highest proxy) of up to ``ALTERNATIVES`` of the other
    ``phrasings`` (in the order given: most used first), each said as ``turns`` has it (a
    stored turn of that phrasing; the phrasings ``turns`` lacks are not tried).

    Episodes whose member is not in ``specs`` are skipped (the run directory did not record it).
    """
    out: list[Ablation] = []
    base_cache: dict[int, Replayed] = {}  # by object identity: ids repeat across seeds
    said = dict(turns or {})
    says = {id(e): {q for t in e.agent_turns for q in phrasings_of(t)} for e in episodes}
    for p in phrasings:
        others = [q for q in phrasings if q != p and q in said][:ALTERNATIVES]
        using = [e for e in episodes if e.simulator_id in specs and p in says[id(e)]]
        for e in using[:per_phrasing]:
            spec = specs[e.simulator_id]
            if id(e) not in base_cache:
                base_cache[id(e)] = replay(e, spec, scenario, max_turns=max_turns)
            tried = [
                (replay(e, spec, scenario, drop={p}, instead=said[q], max_turns=max_turns), q)
                for q in others
            ]
            if not tried:
                without = replay(e, spec, scenario, drop={p}, max_turns=max_turns)
                out.append(Ablation(p, e, base_cache[id(e)], without))
                continue
            best, q = max(tried, key=lambda rq: rq[0].proxy)  # the first of equals
            out.append(Ablation(p, e, base_cache[id(e)], best, q))
    return out
