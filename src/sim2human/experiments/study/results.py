"""``study.json`` as a typed model: ``StudyResult`` holds one ``ConditionRow`` per condition and
per reference agent. ``aggregate`` writes it; the reports, the command's table and the human
evaluation read it through ``load_study_result``.

A study whose workers died (``failed``) is stored over what finished, each failed job named.

A file written before a field existed still loads: optional columns (LLM members, real
patients, adaptive curves) are absent when the study had none, and a row without ``role`` gets it
from the run's stored ``config.yaml`` (else from its sampler, as a condition without one does).
Only the fields a file held are written back (``model_dump(exclude_unset=True)``), so rewriting
an old file adds nothing to it. The same numbers come as rows too (``result_rows``: schema
version 2); ``StudyResult.measures`` gives them for a file of either version.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from sim2human.errors import RunDirError, UsageError
from sim2human.experiments.study.config import Role, default_role, parse_study
from sim2human.experiments.study.result_rows import (
    BY_FAMILY,
    BY_SEED,
    ESTIMATES,
    SCHEMA_VERSION,
    Metric,
    ResultRow,
    Split,
)
from sim2human.metrics.handle_time import HandleTime
from sim2human.metrics.outcomes import Estimate
from sim2human.scenarios.core import GoldMetric
from sim2human.store.layout import CONFIG_YAML, STUDY_JSON
from sim2human.store.loading import read_json_object, read_yaml
from sim2human.store.rundir import write_json


class ConditionRow(BaseModel):
    """One condition (all its seeds), or one reference agent (``episodes_trained`` 0, no role)."""

    model_config = ConfigDict(extra="forbid")

    # held-out results split into persona and LLM members (studies with ``llm`` members)
    heldout_gold_persona: Estimate | None = None
    heldout_gold_llm: Estimate | None = None
    heldout_fields_llm: Estimate | None = None
    heldout_fields_persona: Estimate | None = None
    train_fields: Estimate | None = None
    llm_episodes: int | None = None
    llm_errors: int | None = None
    llm_replies: int | None = None
    llm_role_retries: int | None = None
    llm_role_failures: int | None = None
    llm_judge_failures: int | None = None
    # real patients (studies holding out a ``replay`` family)
    heldout_gold_real: Estimate | None = None
    heldout_fields_real: Estimate | None = None
    heldout_proxy_real: Estimate | None = None
    heldout_gold_programmatic: Estimate | None = None
    real_reply_shares: dict[str, float] | None = None
    heldout_gold_real_by_seed: dict[str, float] | None = None
    """Each seed's mean gold success on real people (the key: the seed)."""
    # gold as the mean Outcome.score (absent from a file written before it was stored)
    train_score: Estimate | None = None
    heldout_score: Estimate | None = None
    heldout_score_real: Estimate | None = None
    heldout_score_real_by_seed: dict[str, float] | None = None
    heldout_score_by_family: dict[str, float] | None = None
    train_score_by_family: dict[str, float] | None = None

    gold_rule: Literal["submitted", "mixed"] | None = None
    """Which record gold graded (``Episode.record_source``): ``submitted``, what the agent
    submitted through tools (a language-model agent); absent: what the call made heard (an
    act-level agent), the rule of every run before tools existed."""

    name: str
    episodes_trained: int
    train_proxy: Estimate
    train_gold: Estimate
    heldout_proxy: Estimate
    heldout_gold: Estimate
    heldout_member_std: float
    exploit_rate: float
    heldout_gold_by_family: dict[str, float] = {}
    train_gold_by_family: dict[str, float] = {}
    heldout_dropped_rate: float = 0.0
    # conditions only (reference agents were not trained)
    sampler: str | None = None
    role: Role | None = None
    compare_to: str | None = None
    heldout_worst_decile: Estimate | None = None
    handle_time: dict[str, HandleTime] | None = None
    """Agent turns per call (median, p90) by split (``metrics.handle_time``); absent from a
    file written before it was stored (the reports then read it from the episodes)."""
    heldout_curve: list[tuple[int, float]] = []
    episodes_to_uniform_final: int | None = None
    """Episodes to reach the study's (first) baseline's final held-out gold on the curve
    (None: never)."""

    def gold(
        self, split: Literal["train", "heldout", "real"], metric: GoldMetric
    ) -> Estimate | None:
        """The gold of ``split`` (``real``: replayed real people) as ``metric`` says: success, or
        the mean score where the row has it (a file written before scores were stored: success,
        which is the score of every scenario that had no other)."""
        success: dict[str, Estimate | None] = {
            "train": self.train_gold,
            "heldout": self.heldout_gold,
            "real": self.heldout_gold_real,
        }
        scores = {"train": self.train_score, "heldout": self.heldout_score}
        scores["real"] = self.heldout_score_real
        if metric == "score" and scores[split] is not None:
            return scores[split]
        return success[split]

    def real_by_seed(self, metric: GoldMetric) -> dict[str, float]:
        """Each seed's mean gold on real people as ``metric`` says (see ``gold``); empty for a
        file written before it was stored."""
        if metric == "score" and self.heldout_score_real_by_seed is not None:
            return self.heldout_score_real_by_seed
        return self.heldout_gold_real_by_seed or {}

    def gold_by_family(
        self, split: Literal["train", "heldout"], metric: GoldMetric
    ) -> dict[str, float]:
        """Mean gold per family of ``split``, as ``metric`` says (see ``gold``)."""
        if split == "train":
            success, score = self.train_gold_by_family, self.train_score_by_family
        else:
            success, score = self.heldout_gold_by_family, self.heldout_score_by_family
        return score if metric == "score" and score is not None else success

    def rows(self) -> list[ResultRow]:
        """Every number of this row as rows (``result_rows``), in the order of its tables; a
        field the row does not have gives none."""

        def row(split: Split, members: str, metric: Metric, mean: float, **more: Any) -> ResultRow:
            return ResultRow(
                agent=self.name, split=split, members=members, metric=metric, mean=mean, **more
            )

        out: list[ResultRow] = []
        for field, (split, members, metric) in ESTIMATES.items():
            if isinstance(est := getattr(self, field), Estimate):
                out.append(row(split, members, metric, est.mean, ci=est.ci, n=est.n))
        for field, (split, metric) in BY_FAMILY.items():
            for family, mean in (getattr(self, field) or {}).items():
                out.append(row(split, f"family:{family}", metric, mean))
        for field, (split, members, metric) in BY_SEED.items():
            for seed, mean in (getattr(self, field) or {}).items():
                out.append(row(split, members, metric, mean, seed=int(seed)))
        return out

    @property
    def is_reference(self) -> bool:
        """A reference agent's row (no sampler, no role, nothing trained)."""
        return self.sampler is None and self.role is None and self.episodes_trained == 0


class FailedRun(BaseModel):
    """A job of the study that did not finish because its worker died (``executors.pool``)."""

    model_config = ConfigDict(extra="forbid")

    job: str
    """What it was: ``<condition> seed <k>``, ``reference <agent>`` or ``diversity``."""
    path: str
    """Its output, relative to the run directory."""
    reason: str
    """Why, in words: ``worker died (signal 9, perhaps out of memory)``."""


class StudyResult(BaseModel):
    """What ``study.json`` holds: every condition's row, the reference agents' rows, what failed."""

    model_config = ConfigDict(extra="forbid")

    study: str
    scenario: str
    seeds: list[int]
    wall_seconds: float
    conditions: list[ConditionRow]
    reference: list[ConditionRow] = []
    llm_accounting: dict[str, int | float] | None = None
    gold_metric: GoldMetric = "success"
    """What the tables lead with: the scenario's headline gold (``scenarios.core.GoldMetric``);
    a file written before it was stored: success."""
    quirks_shared: bool = False
    """The scenario gives held-out families the training members' quirk pool on purpose
    (a scenario file's ``quirks.shared``); otherwise the two pools are disjoint."""
    failed: list[FailedRun] = []
    """Jobs left unfinished (their workers died): rows are over the rest; ``--resume`` reruns
    them. Absent from a study where everything finished."""
    schema_version: int = 1
    """The file's layout (``result_rows.SCHEMA_VERSION``); absent: 1, written before rows."""
    rows: list[ResultRow] = []
    """Every number above as a row (``result_rows``); absent before schema version 2."""

    @model_validator(mode="after")
    def _known_version(self) -> StudyResult:
        if self.schema_version > SCHEMA_VERSION:
            raise ValueError(
                f"schema_version {self.schema_version} is newer than this sim2human reads "
                f"(up to {SCHEMA_VERSION}); upgrade sim2human to read it"
            )
        return self

    @model_validator(mode="after")
    def _compare_to_known(self) -> StudyResult:
        names = {r.name for r in self.conditions}
        for r in self.conditions:
            if r.compare_to is not None and r.compare_to not in names:
                raise ValueError(f"condition {r.name!r}: compare_to {r.compare_to!r} is not a row")
        return self

    def row(self, name: str | None) -> ConditionRow | None:
        """The condition called ``name``, or None."""
        return next((r for r in self.conditions if r.name == name), None)

    @property
    def all_rows(self) -> list[ConditionRow]:
        """The conditions' rows, then the reference agents'."""
        return [*self.conditions, *self.reference]

    def with_role(self, role: Role) -> list[ConditionRow]:
        """The conditions of ``role``, in study order."""
        return [r for r in self.conditions if r.role == role]

    @property
    def baseline(self) -> ConditionRow | None:
        """The study's first ``baseline`` condition: what candidates are compared with."""
        return next(iter(self.with_role("baseline")), None)

    def reference_of(self, row: ConditionRow) -> ConditionRow | None:
        """What ``row`` is judged against: its ``compare_to``, else the study's baseline."""
        found = self.row(row.compare_to) if row.compare_to else self.baseline
        return found if found is not row else None

    @property
    def measures(self) -> list[ResultRow]:
        """Every number of the study as rows: the stored ones, else (a file written before
        rows) derived from the fields."""
        return self.rows or [r for row in self.all_rows for r in row.rows()]

    def with_rows(self) -> StudyResult:
        """This result in the current layout: ``schema_version`` and ``rows`` stored."""
        rows = [r.model_dump() for row in self.all_rows for r in row.rows()]
        return StudyResult.model_validate(
            {**self.dump(), "schema_version": SCHEMA_VERSION, "rows": rows}
        )

    def dump(self) -> dict[str, Any]:
        """The JSON object as stored (only the fields this result was given)."""
        return self.model_dump(mode="python", exclude_unset=True)


def fill_roles(raw: dict[str, Any], roles: dict[str, tuple[Role, str | None]]) -> dict[str, Any]:
    """``raw`` (a study.json object) with ``role``/``compare_to`` set on condition rows that
    lack them: from ``roles`` (the run's config), else from the row's sampler."""
    rows = []
    for row in raw.get("conditions") or []:
        if isinstance(row, dict) and "role" not in row:
            role, compare_to = roles.get(str(row.get("name")), (None, None))
            if role is None:
                if row.get("sampler") is None:
                    raise RunDirError(
                        f"study.json: condition {row.get('name')!r} has neither a role nor a "
                        "sampler (written by a version before either was stored); rerun the "
                        "study with --resume to rewrite it"
                    )
                role = default_role(row["sampler"])
            row = {**row, "role": role, "compare_to": compare_to}
        rows.append(row)
    return {**raw, "conditions": rows}


def parse_study_result(
    raw: Any, where: str, roles: dict[str, tuple[Role, str | None]] | None = None
) -> StudyResult:
    """A study.json object, validated; one clear error naming the file and the field."""
    if not isinstance(raw, dict):
        raise RunDirError(
            f"{where}: must be a JSON object (a study result), got {type(raw).__name__}"
        )
    try:
        return StudyResult.model_validate(fill_roles(raw, roles or {}))
    except ValidationError as err:
        first = err.errors()[0]
        loc = ".".join(str(p) for p in first["loc"])
        raise RunDirError(f"{where}: {loc}: {first['msg']}") from None


def load_study_result(run_dir: Path) -> StudyResult:
    """``run_dir/study.json``; rows written before roles were stored take them from the run's
    ``config.yaml`` (its conditions' roles, explicit or defaulted)."""
    path = run_dir / STUDY_JSON
    try:  # stat-ed and size-bounded first: never a hang on a FIFO, never a huge read
        raw = read_json_object(path, "study result")
    except UsageError as err:
        raise RunDirError(str(err)) from None
    lacking = isinstance(raw, dict) and any(
        isinstance(r, dict) and "role" not in r for r in raw.get("conditions") or []
    )
    return parse_study_result(raw, str(path), stored_roles(run_dir) if lacking else None)


def stored_roles(run_dir: Path) -> dict[str, tuple[Role, str | None]]:
    """Condition name -> (role, compare_to) from the run's ``config.yaml``; empty without one."""
    path = run_dir / CONFIG_YAML
    if not path.is_file():
        return {}
    try:
        raw = read_yaml(path, "stored study config")
        cfg = parse_study(raw if isinstance(raw, dict) else {}, str(path))
    except UsageError as err:
        raise RunDirError(f"{path}: cannot read the conditions' roles ({err})") from None
    return {c.name: (c.role, c.compare_to) for c in cfg.conditions}


def write_study_result(run_dir: Path, result: StudyResult) -> None:
    write_json(run_dir / STUDY_JSON, result.dump())
