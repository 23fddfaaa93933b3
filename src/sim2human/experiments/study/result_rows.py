"""A study's results as rows: one number per (agent, split, members, metric, seed).

``ConditionRow`` names each number of a condition by a field of its own (``heldout_gold_real``,
``train_score_by_family``...): what the reports read, and what people's scripts and dashboards
already read in ``study.json``, so those fields keep their names and meaning. Rows are the same
numbers as data: a reader that knows no field's name (a dashboard, ``pandas.DataFrame(
study["rows"])``, a study of a task of a new shape) still finds each one by what it measures.
``study.json`` carries them beside the fields from schema version 2 (``SCHEMA_VERSION``); a file
written before has none, and ``ConditionRow.rows`` derives them from its fields alike.

Which field is which row is one table here (``ESTIMATES``, ``BY_FAMILY``, ``BY_SEED``); a test
binds it to ``ConditionRow``, so a new measured field without a row fails there.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

SCHEMA_VERSION = 2
"""``study.json``'s layout: 1, fields only (every file before rows existed); 2, ``rows`` beside
the fields and ``schema_version`` stored."""

Split = Literal["train", "heldout"]
Metric = Literal["success", "score", "proxy", "fields"]
"""Gold as the share of calls that succeeded, gold as the mean score, the simulator's proxy
(satisfaction), and the share of fields right (a slot-filling task)."""


class ResultRow(BaseModel):
    """One number of a study: ``mean`` with its bootstrap CI and ``n`` where it has them (a
    per-family or per-seed mean has neither)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    agent: str
    """The condition (over all its seeds) or the reference agent."""
    split: Split
    members: str
    """Whom it was measured on: ``all`` of the split, ``persona`` or ``llm`` members, ``real``
    people (replayed), ``programmatic`` (every member but real people), ``worst-decile`` (the
    split's worst tenth of members), or one family (``family:NAME``)."""
    metric: Metric
    seed: int | None = None
    """One seed's number; None: over every seed."""
    mean: float
    ci: tuple[float, float] | None = None
    n: int | None = None


ESTIMATES: dict[str, tuple[Split, str, Metric]] = {
    "train_proxy": ("train", "all", "proxy"),
    "train_gold": ("train", "all", "success"),
    "train_score": ("train", "all", "score"),
    "train_fields": ("train", "all", "fields"),
    "heldout_proxy": ("heldout", "all", "proxy"),
    "heldout_gold": ("heldout", "all", "success"),
    "heldout_score": ("heldout", "all", "score"),
    "heldout_gold_persona": ("heldout", "persona", "success"),
    "heldout_fields_persona": ("heldout", "persona", "fields"),
    "heldout_gold_llm": ("heldout", "llm", "success"),
    "heldout_fields_llm": ("heldout", "llm", "fields"),
    "heldout_gold_real": ("heldout", "real", "success"),
    "heldout_score_real": ("heldout", "real", "score"),
    "heldout_fields_real": ("heldout", "real", "fields"),
    "heldout_proxy_real": ("heldout", "real", "proxy"),
    "heldout_gold_programmatic": ("heldout", "programmatic", "success"),
    "heldout_worst_decile": ("heldout", "worst-decile", "success"),
}
"""``ConditionRow``'s estimates (mean, CI, n) and the row each is."""
BY_FAMILY: dict[str, tuple[Split, Metric]] = {
    "train_gold_by_family": ("train", "success"),
    "train_score_by_family": ("train", "score"),
    "heldout_gold_by_family": ("heldout", "success"),
    "heldout_score_by_family": ("heldout", "score"),
}
"""``ConditionRow``'s means by family (``members``: ``family:NAME``)."""
BY_SEED: dict[str, tuple[Split, str, Metric]] = {
    "heldout_gold_real_by_seed": ("heldout", "real", "success"),
    "heldout_score_real_by_seed": ("heldout", "real", "score"),
}
"""``ConditionRow``'s means by seed."""
