"""A study's ``summary.json``, typed: what a trained sub-run, a language-model sub-run and the
scripted reference say of themselves, one model instead of three dicts grown key by key.

Every key the study writes there is a field here, with what it means. A writer gives the fields
it knows (the reference trains nothing, so it has no phases; only a language-model sub-run has
a warm start) and the file holds those that are not None, so the keys keep the names and
meanings scripts and dashboards read today. The model refuses a key it does not declare
(``Frozen``, and ``mypy``'s pydantic plugin before it runs): a writer's misspelt key is an
error, not a silent new column.

A reader takes any summary the study ever wrote through ``SubRunSummary.read``: every field is
optional (older files lack the newer ones, and a writer leaves out what it does not know), and
keys this model does not declare (those of ``eval-agent``, the trainer adapters' run logs and
human evaluation, which write summaries of their own shape) are left out of the typed view;
the raw document stays what ``store.rundir.read_json`` returns.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypedDict

from pydantic import ValidationError

from sim2human.errors import RunDirError, first_problem
from sim2human.metrics.outcomes import GroupSummary
from sim2human.store.rundir import read_json, write_json
from sim2human.types import Frozen


class Evaluation(TypedDict):
    """The final evaluation's fields of a summary (``condition.evaluation_fields``)."""

    train: GroupSummary
    heldout: GroupSummary
    heldout_by_family: dict[str, GroupSummary]
    heldout_member_std: float
    exploit_rate: float


class SubRunSummary(Frozen):
    """One sub-run's (or the reference's) ``summary.json``."""

    train: GroupSummary | None = None
    """The final evaluation on the members it trained on (the reference: the training
    families)."""
    heldout: GroupSummary | None = None
    """The final evaluation on the held-out members, real patients included."""
    heldout_by_family: dict[str, GroupSummary] | None = None
    heldout_member_std: float | None = None
    """Spread of gold success across held-out members."""
    exploit_rate: float | None = None
    """Share of held-out agent turns that use a phrasing some training member over-rewards."""
    condition: str | None = None
    seed: int | None = None
    episodes_trained: int | None = None
    wall_seconds: float | None = None
    phase_seconds: dict[str, float] | None = None
    """Seconds by phase (``train.phases``)."""
    phase_work: dict[str, int] | None = None
    """Work by phase: turns played, the policy's decisions, PPO's minibatch steps."""
    selected_update: int | None = None
    """The update whose weights were kept, with ``select`` (checkpoint selection)."""
    validation_gold: float | None = None
    """The kept checkpoint's gold on the validation members, with ``select``."""
    agent: dict[str, str] | None = None
    """A language-model sub-run's agent: kind, model, where its record comes from."""
    warm_start: dict[str, Any] | None = None
    """A language-model sub-run's warm start, as its ``warm-start.json`` says."""
    novel_turn_share: float | None = None
    """A language-model sub-run's share of held-out agent turns that are no line of its warm
    start's corpus (it writes its own words, or it does not)."""
    train_by_family: dict[str, GroupSummary] | None = None
    """The reference's evaluation by training family."""
    llm: dict[str, Any] | None = None
    """Requests, cache hits and spend per endpoint, when any member or judge is an LLM."""
    episodes_logged: int | None = None
    """Episodes ``episodes.jsonl`` holds (``wholeness`` checks the log against it)."""

    def document(self) -> dict[str, Any]:
        """The JSON document: the fields that are not None, in this model's order."""
        out: dict[str, Any] = self.model_dump(mode="json", exclude_none=True)
        return out

    def write(self, path: Path) -> dict[str, Any]:
        """Write ``path`` (atomically, as every run file); returns the document."""
        out = self.document()
        write_json(path, out)
        return out

    @classmethod
    def of(cls, document: dict[str, Any]) -> SubRunSummary:
        """The typed view of a summary document (keys this model does not declare left out)."""
        return cls.model_validate({k: v for k, v in document.items() if k in cls.model_fields})

    @classmethod
    def read(cls, path: Path) -> SubRunSummary:
        """``path``'s typed view; a file that is no summary is one ``RunDirError`` naming it."""
        document = read_json(path)
        if not isinstance(document, dict):
            raise RunDirError(f"{path}: not a JSON object")
        try:
            return cls.of(document)
        except ValidationError as err:
            where, problem = first_problem(err)
            raise RunDirError(f"{path}: {where}: {problem}") from None
