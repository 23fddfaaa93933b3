"""What an evaluation was *of* and *on*: the agent under test and the simulated population.

A gold rate means nothing without the agent that earned it (model, endpoint, system prompt,
sampling) and the users it met: the simulator alone can move a score by half (tau^2-bench names
the user simulator beside every number for that reason). ``AgentRecord`` is stored in an
``eval-agent`` run's ``config.json``; ``population_hash`` is a short content hash of every
member's definition (family, kind, traits and quirks, prompt and model, corpus source), printed
beside every table, so two numbers are compared only when their populations are the same.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from sim2human.simulators.base import SimulatorSpec

HASH_CHARS = 12
"""Characters of a sha256 kept in a short hash: enough to tell definitions apart by eye."""

REAL_KIND = "replay"
"""The kind of member that replays a real caller's recorded turns."""


def short_hash(text: str) -> str:
    """The first ``HASH_CHARS`` hex characters of ``text``'s sha256."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:HASH_CHARS]


class AgentRecord(BaseModel):
    """The agent under test as it ran: everything that defines its replies, and the label the
    user chose for it (what ``compare`` calls it). The base URL is stored without credentials."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    label: str
    model: str
    base_url: str | None
    """``None``: the embedded model, started by the run itself."""
    served_model: str | None = None
    """What the endpoint said it runs (a response's ``model`` field), when it said."""
    system_prompt: str
    system_prompt_sha256: str
    temperature: float
    max_tokens: int
    tools: tuple[str, ...] = ()
    """The names of the tools offered (``agents.llm.tool_specs``); none under ``--no-tools``."""
    record_by: str = "tools"
    """How it handed its record over: ``tools``, ``summary`` (``--no-tools``) or ``heard`` (a
    scenario without a desk)."""
    cached: bool = False
    """Whether its replies could come from the response cache (``--cache-agent``)."""


def describe(record: object) -> str | None:
    """The agent under test in one sentence, from the record its run stored (None when the run
    stored none, or one this version cannot read): what a report says it evaluated."""
    try:
        a = AgentRecord.model_validate(record)
    except ValidationError:
        return None
    served = f" (served as {a.served_model})" if a.served_model not in (None, a.model) else ""
    cache = "replies may come from the cache" if a.cached else "no reply from a cache"
    return (
        f"{a.label}: model {a.model}{served} at {a.base_url or 'the embedded server'}; system "
        f"prompt sha256 {a.system_prompt_sha256}; temperature {a.temperature:g}, at most "
        f"{a.max_tokens} tokens a reply; tools: {', '.join(a.tools) or 'none'} (its record "
        f"read from its {a.record_by}); {cache}."
    )


def member_hash(spec: SimulatorSpec) -> str:
    """A short content hash of one member's whole definition (its id left out: two members
    defined alike are the same user whatever they are called)."""
    data: dict[str, Any] = spec.model_dump(mode="json", exclude={"id"})
    return short_hash(json.dumps(data, sort_keys=True, separators=(",", ":")))


def population_hash(specs: Sequence[SimulatorSpec]) -> str:
    """A short content hash of a population: its members' hashes, order aside."""
    return short_hash(",".join(sorted(member_hash(s) for s in specs)))


def is_real(spec: SimulatorSpec) -> bool:
    return spec.kind == REAL_KIND


def sample_real(specs: Sequence[SimulatorSpec], n: int, seed: int) -> list[SimulatorSpec]:
    """``specs`` with at most ``n`` of its real callers, drawn with ``seed``: stratified by
    family (each real family keeps its share, rounded, at least one where it had any), the
    draw's order the population's own. Simulated members are all kept."""
    real = [s for s in specs if is_real(s)]
    if len(real) <= n:
        return list(specs)
    families = sorted({s.family for s in real})
    rng = random.Random(seed)
    chosen: set[str] = set()
    for i, family in enumerate(families):
        pool = [s.id for s in real if s.family == family]
        left = n - len(chosen)
        share = left if i == len(families) - 1 else max(1, round(n * len(pool) / len(real)))
        chosen.update(rng.sample(pool, min(len(pool), share, left)))
    return [s for s in specs if not is_real(s) or s.id in chosen]
