"""Handle time: agent turns per call, median and p90, by split (training members,
programmatic held-out members, real patients), the first number a call centre watches.

One function for ``study.json`` (``experiments.study.aggregate``) and the reports
(``report.tables``), so both show the same numbers."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from pydantic import BaseModel

from sim2human.types import Episode

SPLITS = ("train", "heldout", "real")


class HandleTime(BaseModel):
    median: float
    p90: float
    n: int


def handle_time(
    episodes: Sequence[Episode], real: Callable[[Episode], bool]
) -> dict[str, HandleTime]:
    """Agent turns per call by split: ``train`` and ``heldout`` leave real patients (``real``:
    ``simulators.kinds.speaks_real_words``, which this layer cannot import) out, ``real`` is them
    alone; a split without episodes is absent."""
    groups = {
        "train": [e.n_turns for e in episodes if e.split == "train" and not real(e)],
        "heldout": [e.n_turns for e in episodes if e.split == "heldout" and not real(e)],
        "real": [e.n_turns for e in episodes if e.split == "heldout" and real(e)],
    }
    return {
        split: HandleTime(
            median=float(np.median(turns)), p90=float(np.percentile(turns, 90)), n=len(turns)
        )
        for split, turns in groups.items()
        if turns
    }
