"""The smallest study that trains and evaluates: shared by the study and CLI tests."""

from __future__ import annotations

import json
from typing import Any

from sim2human.experiments.study.results import StudyResult

TINY: dict[str, Any] = {
    "name": "tiny",
    "seeds": [0],
    "train": {"episodes": 64, "batch_episodes": 32, "epochs": 1},
    "ensemble": {"members_per_family": 1},
    "eval": {"episodes_per_member": 2, "bootstrap": 100},
    "conditions": [
        {
            "name": "frozen-small",
            "sampler": "fixed",
            "simulator": {"family": "standard", "seed": 1, "capacity": 0.1, "temperature": 0},
        },
        {"name": "ensemble-uniform", "sampler": "uniform"},
    ],
}

TINY_LM_AGENT: dict[str, Any] = {
    "kind": "lm",
    "model": "tiny",
    "steps": 2,
    "groups": 2,
    "group_size": 2,
    "max_new_tokens": 16,
    "warm_start": {"episodes": 8, "epochs": 1},
}
"""The smallest language-model agent a study trains: two GRPO steps of 2 groups of 2 calls."""


def study_numbers(study: StudyResult) -> str:
    """A study's numbers as one string: everything but the wall time."""
    return json.dumps(
        {k: v for k, v in study.dump().items() if k != "wall_seconds"}, sort_keys=True
    )
