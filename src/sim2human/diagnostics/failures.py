"""Why calls with real people fail: a breakdown of the stored evaluation episodes.

For every agent of a run (each condition, its seeds pooled, and each reference agent), over its
held-out calls with replayed real people (``replay`` members: ACI-Bench patients, MultiWOZ
callers): how its failed calls ended (the agent closed with a field wrong or missing, the user
hung up, the turn limit ...), and per field how often the field ended missing (never recorded)
or recorded wrong. Then the visits (dialogues) that fail for every agent, the ``frozen``
conditions left out (they fail everything): each agent lost more than half of its calls there
(with one call per seed, a visit's outcome for an agent is a vote of its seeds), those it never
won first, each with one short failing exchange: the last time the best agent asked for a field
it got wrong, and what the person said.

A pure function of ``episodes.jsonl``; any scenario with a ``replay`` family.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from sim2human.diagnostics.rundir import RunDir
from sim2human.simulators.kinds import speaks_real_words
from sim2human.types import Episode, Termination

MAX_EXAMPLES = 5
"""Visits that fail for every agent shown with an example exchange (all are listed by id)."""
MAX_CHARS = 160
"""An example turn is cut to this many characters."""


@dataclass(frozen=True)
class AgentFailures:
    """One agent's calls with real people: how many, how the failed ones ended, and per field
    how many calls ended with it missing or recorded wrong."""

    agent: str
    frozen: bool
    calls: int
    failed: int
    endings: dict[str, int]
    """Termination value -> failed calls that ended so (``completed``: the agent closed the
    call with a field missing or wrong)."""
    missing: dict[str, int]
    wrong: dict[str, int]


@dataclass(frozen=True)
class Exchange:
    """One agent turn and the person's reply to it, from a failing call."""

    agent: str
    episode: str
    field: str
    how: str
    """``missing`` or ``wrong``: how the field ended; with no field failed (``field`` empty),
    how the call ended (``ENDINGS``)."""
    asked: str
    reply: str


@dataclass(frozen=True)
class HardVisit:
    """A visit on which every (non-frozen) agent lost more than half of its calls."""

    visit: str
    calls: int
    won: int
    """Calls of any agent won on this visit (0: no agent ever got it right)."""
    fields: dict[str, int]
    """Field -> calls on this visit that ended with it missing or wrong (every agent's)."""
    example: Exchange | None = None


@dataclass(frozen=True)
class RealFailures:
    agents: list[AgentFailures]
    visits: int
    judged_by: list[str]
    """The agents a hard visit fails for (every agent but the frozen ones)."""
    hard: list[HardVisit] = field(default_factory=list)

    def dump(self) -> dict[str, Any]:
        return asdict(self)


def real_episodes(episodes: Sequence[Episode]) -> list[Episode]:
    """The held-out evaluation calls with replayed real people."""
    return [e for e in episodes if e.split == "heldout" and speaks_real_words(e)]


def how_field_ended(e: Episode, name: str) -> str | None:
    """``missing`` (never recorded), ``wrong`` (recorded, not the person's value), or None."""
    if e.gold.fields.get(name, True):
        return None
    return "missing" if e.record.get(name) is None else "wrong"


def agent_failures(agent: str, episodes: Sequence[Episode], frozen: bool) -> AgentFailures:
    failed = [e for e in episodes if not e.gold.success]
    endings: dict[str, int] = defaultdict(int)
    for e in failed:
        endings[str(e.termination)] += 1
    # every field graded in any call (with `when:` fields, calls grade different fields)
    names = list(dict.fromkeys(n for e in episodes for n in e.gold.fields))
    counts = {how: dict.fromkeys(names, 0) for how in ("missing", "wrong")}
    for e in episodes:
        for name in names:
            if (how := how_field_ended(e, name)) is not None:
                counts[how][name] += 1
    return AgentFailures(
        agent, frozen, len(episodes), len(failed), dict(endings), counts["missing"], counts["wrong"]
    )


def exchange(agent: str, e: Episode) -> Exchange | None:
    """The last agent turn of ``e`` that asked for a field ``e`` ended without (an act naming
    the field), and the reply; else the call's last exchange. None for a call with no turns."""
    turns = e.turns
    bad = [(n, how) for n in e.gold.fields if (how := how_field_ended(e, n)) is not None]
    for name, how in bad:
        for k in range(len(turns) - 1, -1, -1):
            t = turns[k]
            if t.speaker == "agent" and t.act is not None and name in t.act.split("."):
                reply = next((u.text for u in turns[k + 1 :] if u.speaker == "user"), "")
                return Exchange(agent, e.id, name, how, _cut(t.text), _cut(reply))
    asked = [k for k, t in enumerate(turns) if t.speaker == "agent"]
    if not asked:
        return None
    k = asked[-1]
    reply = next((u.text for u in turns[k + 1 :] if u.speaker == "user"), "")
    name, how = bad[0] if bad else ("", ENDINGS.get(e.termination, str(e.termination)))
    return Exchange(agent, e.id, name, how, _cut(turns[k].text), _cut(reply))


def _cut(text: str) -> str:
    return text if len(text) <= MAX_CHARS else text[: MAX_CHARS - 3].rstrip() + "..."


def real_failures(
    groups: Mapping[str, Sequence[Episode]], frozen: set[str] | frozenset[str] = frozenset()
) -> RealFailures | None:
    """The breakdown of ``groups`` (agent -> its evaluation episodes; the real-people ones are
    picked out); ``frozen``: agents left out of "fails for every agent". None when no agent
    played a real person."""
    real = {a: eps for a, all_eps in groups.items() if (eps := real_episodes(all_eps))}
    if not real:
        return None
    agents = [agent_failures(a, eps, a in frozen) for a, eps in real.items()]
    judges = [a for a in real if a not in frozen] or list(real)
    by_visit: dict[str, list[tuple[str, Episode]]] = defaultdict(list)
    for a in judges:
        for e in real[a]:
            by_visit[e.simulator_id].append((a, e))
    hard = sorted(
        (v for v, calls in by_visit.items() if _fails_for_all(calls)),
        key=lambda v: (_won(by_visit[v]), v),
    )
    # the example comes from the agent with the most real-people successes
    rank = {a: -sum(e.gold.success for e in real[a]) for a in judges}
    out = []
    for k, visit in enumerate(hard):
        calls = by_visit[visit]
        lost = sorted((ae for ae in calls if not ae[1].gold.success), key=lambda ae: rank[ae[0]])
        fields: dict[str, int] = defaultdict(int)
        for _, e in calls:
            for name in e.gold.fields:
                fields[name] += how_field_ended(e, name) is not None
        example = exchange(*lost[0]) if k < MAX_EXAMPLES else None
        out.append(HardVisit(visit, len(calls), _won(calls), dict(fields), example))
    return RealFailures(
        agents, len({e.simulator_id for es in real.values() for e in es}), judges, out
    )


def _won(calls: Sequence[tuple[str, Episode]]) -> int:
    return sum(e.gold.success for _, e in calls)


def _fails_for_all(calls: Sequence[tuple[str, Episode]]) -> bool:
    """Every agent lost more than half of its calls of the visit."""
    tally: dict[str, list[bool]] = defaultdict(list)
    for a, e in calls:
        tally[a].append(e.gold.success)
    return all(2 * sum(wins) < len(wins) for wins in tally.values())


def run_failures(run: RunDir) -> RealFailures | None:
    """``real_failures`` of a run directory's conditions (seeds pooled) and reference agents."""
    groups: dict[str, list[Episode]] = {}
    frozen: set[str] = set()
    for name, subs in run.conditions.items():
        groups[name] = [e for s in subs for e in s.evals]
        if any(_role(s.config) == "frozen" for s in subs):
            frozen.add(name)
    for name, sub in run.reference.items():
        groups[f"{name} (reference)"] = sub.evals
    return real_failures(groups, frozen)


def _role(config: dict[str, Any] | None) -> object:
    condition = (config or {}).get("condition")
    return condition.get("role") if isinstance(condition, dict) else None


ENDINGS: dict[str, str] = {
    Termination.COMPLETED: "closed with a field missing or wrong",
    Termination.HUNG_UP: "hung up",
    Termination.MAX_TURNS: "turn limit",
    Termination.ERROR: "error",
    Termination.AGREED: "agreed, not a success",
    Termination.WALKED_AWAY: "walked away",
}
"""How a failed call ended, in words (a termination value -> its label)."""
