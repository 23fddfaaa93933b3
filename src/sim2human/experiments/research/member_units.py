"""An LLM agent's evaluation (``eval-agent``) split into one unit per member, for an executor
whose workers sit elsewhere (``--executor ray``).

A unit is one member of one split (id ``<split>/<simulator id>``: deterministic, unique, the
same on every run), played exactly as ``world.evaluate_splits`` plays it: the same episode
seeds, the same episodes per member. Units are listed in the order that evaluation plays its
members (per split, persona members, then ``llm`` ones), and the driver writes their episodes
in that order: the local evaluation's episodes byte for byte (its log is in the order
conversations finish, this one in member order). A worker
parses the config, builds the world and opens the endpoints once (``_Context``), then plays
member after member on them; each unit returns its episodes and what its requests cost
(``ClientStats`` differences), and the driver writes everything (the ledger drops a repeat).

The local executor does not come here: one process with one event loop already keeps every
endpoint busy up to its cap, and worker processes would each open (and probe) the endpoints.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sim2human.agents.llm import LLMAgent
from sim2human.experiments.executors.backends import Choice, open_executor, served_for
from sim2human.experiments.executors.pool import report_progress
from sim2human.experiments.executors.units import Ledger, Note, Unit, Work, env_for_workers
from sim2human.experiments.study.config import StudyConfig
from sim2human.experiments.study.world import StudyWorld, evaluate_members
from sim2human.llm.client import ClientStats, EndpointConfig
from sim2human.llm.runtime import LLMRuntime
from sim2human.simulators.base import SimulatorSpec
from sim2human.simulators.kinds import needs_endpoint
from sim2human.types import Episode

CONDITION = "llm-agent"
RETRIES = 1
"""Times a member whose worker died is played again (as a study's sub-runs)."""
Groups = Sequence[tuple[str, Sequence[SimulatorSpec]]]


@dataclass(frozen=True)
class Agent:
    """The agent under evaluation: its endpoint's name and ``LLMAgent``'s settings."""

    endpoint: str
    settings: dict[str, Any]


class _Context:
    """What a worker builds once: the config, the world, the open endpoints, the agent."""

    def __init__(self, payload: tuple[str, Agent, list[str]]) -> None:
        cfg_json, agent, needed = payload
        self.cfg = StudyConfig.model_validate_json(cfg_json)
        self.world = StudyWorld.build(self.cfg)
        self._stack = ExitStack()  # open for the worker's life: its units share the endpoints
        self.rt = self._stack.enter_context(LLMRuntime.open(self.cfg.llm, set(needed)))
        client = self.rt.clients[agent.endpoint]
        self.agent = LLMAgent(self.world.scenario, client, **agent.settings)
        self.members = {s.id: s for s in [*self.world.ensemble.heldout, *self._train()]}

    def _train(self) -> tuple[SimulatorSpec, ...]:
        return self.world.ensemble.train + self.world.llm_train


def _play(ctx: _Context, split: str, member: str, per: int) -> dict[str, Any]:
    """One member's episodes (as JSON) and what its requests cost, per endpoint."""
    before = ctx.rt.stats()

    def tick(_: Episode) -> None:
        report_progress(1)

    played = evaluate_members(
        ctx.cfg,
        ctx.agent,
        [ctx.members[member]],
        ctx.world,
        per,
        ctx.rt,
        split=split,
        condition=CONDITION,
        on_episode=tick,
    )
    cost = {n: _minus(s, before[n]) for n, s in ctx.rt.stats().items()}
    return {"episodes": [e.model_dump(mode="json") for e in played], "llm": cost}


def _minus(after: ClientStats, before: ClientStats) -> dict[str, float]:
    a, b = after.model_dump(), before.model_dump()
    return {k: a[k] - b[k] for k in a}


def member_units(groups: Groups, per: int) -> list[Unit]:
    """One unit per member, in the order ``evaluate_splits`` plays them."""
    units = []
    for split, members in groups:
        ordered = [s for s in members if not needs_endpoint(s)]
        ordered += [s for s in members if needs_endpoint(s)]
        for s in ordered:
            unit_id = f"{split}/{s.id}"
            units.append(Unit(unit_id, unit_id, (split, s.id, per)))
    return units


def evaluate_on_executor(
    cfg: StudyConfig,
    groups: Groups,
    agent: Agent,
    per: int,
    choice: Choice,
    *,
    workers: int | None,
    advance: Callable[[int], None],
    note: Note,
) -> tuple[list[Episode], dict[str, dict[str, float]]]:
    """Every member of ``groups`` as a unit on ``choice``'s executor: the episodes in the
    order of a local evaluation, and the summed cost per endpoint. An embedded model is
    started once per node by its workers (``backends.served_for``)."""
    specs = [s for _, g in groups for s in g]
    needed = {agent.endpoint} | {s.llm.endpoint for s in specs if s.llm is not None}
    units = member_units(groups, per)
    with served_for(choice, cfg.llm, needed) as live:
        served = cfg.model_copy(update={"llm": live})
        work = Work(_play, _Context, (served.model_dump_json(), agent, sorted(needed)))
        ledger = Ledger.of(Path("."), units)  # nothing written by units: values only
        env = env_for_workers(_key_names(served))
        with open_executor(choice, workers, len(units), env, note) as (executor, _):
            executor.run(work, units, ledger, advance=advance, retries=RETRIES, note=note)
    results = [ledger.values[u.id] for u in units]
    episodes = [Episode.model_validate(e) for r in results for e in r["episodes"]]
    return episodes, _summed([r["llm"] for r in results])


def _summed(costs: Sequence[dict[str, dict[str, float]]]) -> dict[str, dict[str, float]]:
    total: dict[str, dict[str, float]] = {}
    for cost in costs:
        for name, fields in cost.items():
            mine = total.setdefault(name, dict.fromkeys(fields, 0))
            for k, v in fields.items():
                mine[k] += v
    return {n: ClientStats(**_typed(f)).model_dump() for n, f in total.items()}


def _typed(fields: dict[str, float]) -> dict[str, Any]:
    """Counts back to ints (``latency_s`` stays a float)."""
    return {k: v if k == "latency_s" else round(v) for k, v in fields.items()}


def _key_names(cfg: StudyConfig) -> list[str]:
    """The environment variables the endpoints read their keys from (names, never values)."""
    return [
        e.api_key_env
        for e in cfg.llm.endpoints.values()
        if isinstance(e, EndpointConfig) and e.api_key_env
    ]
