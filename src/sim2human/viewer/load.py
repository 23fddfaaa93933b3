"""Reading what the viewer needs from a run directory: its evaluation episodes and the phrasings
the exploit finder flagged (``diagnosis.json``).

The stored diagnosis is read as it is: the viewer never takes it again (that replays thousands
of conversations and writes into the run). One that is missing, unreadable or older than the
run becomes a note, and the page is shown without (or with possibly outdated) highlights.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from sim2human.diagnostics.analyse import Diagnosis
from sim2human.diagnostics.rundir import RunDir, load_run_dir
from sim2human.diagnostics.stored import FORMAT, INPUTS, changed_since, diagnosis_path
from sim2human.errors import RunDirError, UsageError
from sim2human.metrics.collapse import Transfer
from sim2human.store.loading import read_json_object
from sim2human.viewer.data import Group, evaluation_groups

Note = Callable[[str], None]


def _diagnosis(path: Path, note: Note) -> tuple[Diagnosis | None, object]:
    try:
        raw = read_json_object(path, "diagnosis")
        taken_from = raw.pop(INPUTS, None)
        raw.pop(FORMAT, None)  # the viewer shows no verdict: another version's flags still hold
        return Diagnosis.model_validate(raw), taken_from
    except UsageError as err:
        note(f"{err}; no turns are highlighted")
    except ValidationError as err:
        where = ".".join(str(p) for p in err.errors()[0]["loc"])
        note(f"{path}: not a diagnosis ({where}); no turns are highlighted")
    return None, None


@dataclass(frozen=True)
class Stored:
    """What the viewer takes from a stored diagnosis."""

    flags: dict[str, list[str]]
    """Condition -> the phrasings judged exploits there (``ExploitRow.exploit``)."""
    transfers: dict[str, Transfer]
    """Condition -> its proxy and gold with CIs, when the diagnosis is as new as the run (the
    same ``transfer`` the viewer would compute: reusing it saves the bootstrap)."""


def stored_diagnosis(run_dir: Path, condition: str | None, note: Note) -> Stored:
    """The run's stored diagnosis as the viewer uses it; empty (and a note) without one."""
    path = diagnosis_path(run_dir, condition)
    if condition is not None and not path.exists():
        path = diagnosis_path(run_dir)
    if not path.exists() and not path.is_symlink():
        note(f"{path.name} missing: no turns are highlighted (`sim2human diagnose RUN_DIR`)")
        return Stored({}, {})
    d, taken_from = _diagnosis(path, note)
    if d is None:
        return Stored({}, {})
    fresh = not changed_since(run_dir, taken_from)
    if not fresh:
        note(f"{path}: the run changed since it was diagnosed; highlights may be out of date")
    every = [*d.conditions, *d.reference]
    return Stored(
        flags={c.name: [r.phrasing for r in c.exploits if r.exploit] for c in every},
        transfers={c.name: c.transfer for c in every if fresh and c.transfer is not None},
    )


def exploit_flags(run_dir: Path, condition: str | None, note: Note) -> dict[str, list[str]]:
    """Condition -> the phrasings its stored diagnosis judged exploits."""
    return stored_diagnosis(run_dir, condition, note).flags


def load_groups(run_dir: Path, condition: str | None) -> tuple[RunDir, list[Group]]:
    """The run and its evaluation episodes; a run without any is an error."""
    run = load_run_dir(run_dir, condition)
    groups = evaluation_groups(run)
    if not groups:
        raise RunDirError(
            f"{run_dir}: no evaluation episodes (phase 'eval') to show"
            + (f" in condition {condition!r}" if condition else "")
        )
    return run, groups
