"""Dataset rows that name the episode: family, member and seed.

LLM trainers (TRL, verl, ART) sample prompts from a dataset and play every prompt several
times (a GRPO group). Putting the member and the episode seed in the row makes sampling happen
in the dataset, and makes every rollout of a group talk to the same simulated user with the
same hidden profile, so the group's advantage compares the agent's answers, not its luck.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from sim2human import seeding
from sim2human.errors import UsageError
from sim2human.integrations.chat import system_prompt
from sim2human.integrations.population import Population, Split, check_split
from sim2human.rollout.evaluate import episode_seed
from sim2human.simulators.base import SimulatorSpec

TOOL_HINT = (
    " You speak to the caller only through the `reply` tool: call it with what you say; it "
    "returns what the caller says next. The call ends when the caller hangs up or you stop."
)
"""Appended to the scenario's agent system prompt for tool-calling trainers."""


def row(
    pop: Population, spec: SimulatorSpec, seed: int, split: Split, *, tools: bool
) -> dict[str, Any]:
    """``spec`` is the member itself (JSON), so any process (a verl worker) can play the row,
    even a member drawn fresh by a ``randomized`` or perturbing sampler."""
    prompt = system_prompt(pop.scenario.name) + (TOOL_HINT if tools else "")
    return {
        "prompt": [{"role": "system", "content": prompt}, {"role": "user", "content": ""}],
        "member": spec.id,
        "family": spec.family,
        "seed": int(seed),
        "split": split,
        "spec": spec.model_dump_json(),
    }


def iter_rows(
    pop: Population, rng: np.random.Generator, split: Split = "train", *, tools: bool = True
) -> Iterator[dict[str, Any]]:
    """Endless rows: training ones through the population's sampler (so an adaptive sampler fed
    with finished episodes steers what comes next), held-out ones uniformly."""
    check_split(split)
    while True:
        spec, seed = pop.draw(rng, split)
        yield row(pop, spec, seed, split, tools=tools)


def draw_rows(
    pop: Population, n: int, *, split: Split = "train", seed: int = 0, tools: bool = True
) -> list[dict[str, Any]]:
    """``n`` rows drawn now (fixed and uniform samplers; adaptive ones want ``iter_rows``)."""
    if n < 1:
        raise UsageError(f"need at least one row, not {n}")
    rows = iter_rows(pop, seeding.stream(seed, "rows"), split, tools=tools)
    return [next(rows) for _ in range(n)]


def eval_rows(
    pop: Population, split: Split = "heldout", per_member: int = 4, *, tools: bool = True
) -> list[dict[str, Any]]:
    """Every member of ``split`` on the study's evaluation seeds (as ``sim2human study``)."""
    return [
        row(pop, s, episode_seed(k), split, tools=tools)
        for s in pop.members(split)
        for k in range(per_member)
    ]
