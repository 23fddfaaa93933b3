"""The diagnosis, taken once and stored: ``diagnosis.json`` (and ``diversity.json``) in the run.

``sim2human study`` diagnoses its run once, after ``study.json``; ``sim2human diagnose RUN_DIR``
does it again on demand (say, with other thresholds) and rewrites the file, or writes it to
``--out DIR`` for a run it may not write (read-only, or still running). Everything that
replays or plays conversations happens here: the exploit finder's counterfactual replays and,
for a run without a stored diversity measurement, the simulators' sample conversations. The
reports only read these files (``report/``).

A diagnosis of one condition (``--condition``) goes to ``diagnosis.<condition>.json``, beside the
whole run's, never over it.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path

from pydantic import ValidationError

from sim2human.diagnostics.analyse import Diagnosis, diagnose
from sim2human.diagnostics.rundir import RunDir, load_run_dir
from sim2human.diagnostics.verdict import Thresholds
from sim2human.errors import RunDirError, UsageError
from sim2human.experiments.diversity import (
    DIVERSITY_JSON,
    StoredDiversity,
    diversity_groups,
    measure_groups,
)
from sim2human.inputs import existing_dir, read_json_object
from sim2human.lock import read_lock, run_lock
from sim2human.store import write_json

DIAGNOSIS_JSON = "diagnosis.json"


def diagnosis_path(run_dir: Path, condition: str | None = None) -> Path:
    return run_dir / (DIAGNOSIS_JSON if condition is None else f"diagnosis.{condition}.json")


def diagnose_run(
    run_dir: Path,
    condition: str | None = None,
    thresholds: Thresholds | None = None,
    *,
    on_step: Callable[[str], None] | None = None,
    run: RunDir | None = None,
    out_dir: Path | None = None,
    store: bool = True,
) -> Diagnosis:
    """Diagnose ``run_dir`` (one ``condition``, or all) and store the result; measure the
    simulators' diversity first when the run has no stored measurement.

    Stored in the run directory, under its lock; in ``out_dir`` instead when given (``--out``:
    the run is only read, ``lock.read_lock``); nowhere with ``store=False`` (a read-only or
    running run whose reader prints the diagnosis). ``run``: ``run_dir`` as
    ``load_run_dir(run_dir, condition)`` read it, by a caller that holds the lock and reuses it
    (a study's finish hands the same one to the report: reading a run's episodes is most of
    what diagnosing it costs)."""
    step = on_step or (lambda _: None)
    existing_dir(run_dir, "run directory")
    folder, inside = (run_dir, run_dir) if out_dir is None else (out_dir, None)
    lock: AbstractContextManager[object] = (
        run_lock(run_dir, "diagnose") if store and out_dir is None else read_lock(run_dir)
    )
    with lock:
        run = run or load_run_dir(run_dir, condition)
        if store and not any((f / DIVERSITY_JSON).exists() for f in (run_dir, folder)):
            step("measuring simulator diversity")
            write_json(folder / DIVERSITY_JSON, measure_diversity(run), inside=inside)
        d = diagnose(
            run, thresholds, on_condition=lambda n: step(f"diagnosing {n} (replaying calls)")
        )
        if store:
            write_json(diagnosis_path(folder, condition), d.model_dump(), inside=inside)
    return d


def derived_dir(run_dir: Path, out_dir: Path | None, *names: str) -> Path:
    """The folder to read a file derived from the run (``names``: a diagnosis, diversity.json,
    fidelity.json) from: ``out_dir`` (``--out``) when it holds one at least as new as the run's
    own, else the run directory. So ``report --out DIR`` renders what ``diagnose --out DIR``
    stored there (other thresholds, a read-only run), and a diagnosis the finished study wrote
    later wins over one taken while it ran."""

    def newest(folder: Path) -> float | None:
        times = [(folder / n).stat().st_mtime for n in names if (folder / n).is_file()]
        return max(times, default=None)

    if out_dir is None:
        return run_dir
    mine, theirs = newest(out_dir), newest(run_dir)
    return out_dir if mine is not None and (theirs is None or mine >= theirs) else run_dir


def measure_diversity(run: RunDir) -> StoredDiversity:
    """The diversity of the simulators the run's sub-runs trained on and were judged by."""
    subs = [
        (name, sub.trained_on, sub.heldout)
        for name, group in run.conditions.items()
        for sub in group
    ]
    if not any(trained or held for _, trained, held in subs):
        return StoredDiversity(
            rows=[], note="No simulator specs recorded (members.json missing): not measured."
        )
    return measure_groups(diversity_groups(subs), run.scenario, run.max_turns)


def load_diagnosis(run_dir: Path, condition: str | None = None) -> Diagnosis:
    """The stored diagnosis of ``run_dir``; for one ``condition``, its own file if
    ``sim2human diagnose --condition`` wrote one, else that condition of the whole run's."""
    path = diagnosis_path(run_dir, condition)
    if condition is not None and not path.exists():
        whole = load_diagnosis(run_dir)
        picked = [c for c in whole.conditions if c.name == condition]
        if not picked:
            known = ", ".join(c.name for c in whole.conditions) or "none"
            raise RunDirError(f"{run_dir}: no condition {condition!r} (conditions here: {known})")
        return whole.model_copy(update={"conditions": picked, "reference": []})
    if not path.exists() and not path.is_symlink():
        raise RunDirError(
            f"{path}: missing: this run has not been diagnosed; run `sim2human diagnose "
            f"{run_dir}` first (it replays conversations once and stores the result)"
        )
    try:
        return Diagnosis.model_validate(read_json_object(path, "diagnosis"))
    except UsageError as err:
        raise RunDirError(str(err)) from None
    except ValidationError as err:
        first = err.errors()[0]
        loc = ".".join(str(p) for p in first["loc"])
        raise RunDirError(
            f"{path}: not a diagnosis ({loc}: {first['msg']}); rewrite it with "
            f"`sim2human diagnose {run_dir}`"
        ) from None


def load_diversity(run_dir: Path) -> StoredDiversity:
    """The stored diversity measurement; an empty one with a note when the run has none."""
    path = run_dir / DIVERSITY_JSON
    if not path.exists() and not path.is_symlink():
        return StoredDiversity(
            rows=[], note=f"Simulator diversity not measured (no {DIVERSITY_JSON} in the run)."
        )
    try:
        return StoredDiversity.model_validate(read_json_object(path, "diversity measurement"))
    except UsageError as err:
        raise RunDirError(str(err)) from None
    except ValidationError as err:
        raise RunDirError(f"{path}: not a diversity measurement ({err})") from None
