"""The diagnosis, taken once and stored: ``diagnosis.json`` (and ``diversity.json``) in the run.

``sim2human study`` diagnoses its run once, after ``study.json``; ``sim2human diagnose RUN_DIR``
does it again on demand (say, with other thresholds) and rewrites the file, or writes it to
``--out DIR`` for a run it may not write (read-only, or still running). Everything that
replays or plays conversations happens here: the exploit finder's counterfactual replays and,
for a run without a stored diversity measurement, the simulators' sample conversations. The
reports only read these files (``report/``).

A diagnosis of one condition (``--condition``) goes to ``diagnosis.<condition>.json``, beside the
whole run's, never over it.

A stored diagnosis records what it was taken from (``inputs``: the size, modification time and
SHA-256 of every file ``load_run_dir`` reads); one whose run has changed since (episodes cut,
added, edited) is taken again when it is loaded, with the thresholds it was taken with, instead of
being rendered as if it still held. A file with a new time and the same bytes (a run copied,
unpacked or synced without its times) is not a change: hashing it costs a fraction of a second,
taking the diagnosis again most of what a report costs. It records the ``format`` that took it
too: one taken by a version that judges differently (``DIAGNOSIS_FORMAT``) is taken again, so a
report never shows an old rule's verdict as today's. ``inputs`` and ``format`` are kept out of
the ``Diagnosis`` itself, so reports do not show them.
"""

from __future__ import annotations

import hashlib
import os
import stat
import sys
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from sim2human.diagnostics.analyse import Diagnosis, diagnose
from sim2human.diagnostics.rundir import RunDir, SubRun, load_run_dir
from sim2human.diagnostics.verdict import Thresholds
from sim2human.errors import RunDirError, UsageError
from sim2human.experiments.study.diversity import StoredDiversity, diversity_groups, measure_groups
from sim2human.outputs import OutputError
from sim2human.simulators.base import SimulatorSpec
from sim2human.store.layout import (
    CONFIG,
    CONFIG_YAML,
    DIVERSITY_JSON,
    EPISODES,
    MEMBERS,
    METRICS,
    STUDY_JSON,
    SUMMARY,
    RunLayout,
)
from sim2human.store.loading import existing_dir, read_json_object
from sim2human.store.lock import read_lock, run_lock
from sim2human.store.rundir import write_json

INPUTS = "inputs"
"""The key of ``diagnosis.json`` that records what the diagnosis was taken from."""
FORMAT = "format"
"""The key of ``diagnosis.json`` that records which ``DIAGNOSIS_FORMAT`` took it."""
DIAGNOSIS_FORMAT = 2
"""Raised whenever this version would diagnose an unchanged run differently (a new rule, field
or wording): a stored diagnosis of another format is taken again when loaded, like one whose run
changed. 2: language-model conditions judged against their warm start."""
_READ = {EPISODES, METRICS, SUMMARY, MEMBERS, CONFIG}
"""The files of a sub-run that ``load_run_dir`` reads."""


def diagnosis_path(run_dir: Path, condition: str | None = None) -> Path:
    return RunLayout(run_dir).diagnosis(condition)


def diagnose_run(
    run_dir: Path,
    condition: str | None = None,
    thresholds: Thresholds | None = None,
    *,
    on_step: Callable[[str], None] | None = None,
    run: RunDir | None = None,
    out_dir: Path | None = None,
    store: bool = True,
    workers: int = 1,
) -> Diagnosis:
    """Diagnose ``run_dir`` (one ``condition``, or all) and store the result; measure the
    simulators' diversity first when the run has no stored measurement.

    Stored in the run directory, under its lock; in ``out_dir`` instead when given (``--out``:
    the run is only read, ``lock.read_lock``); nowhere with ``store=False`` (a read-only or
    running run whose reader prints the diagnosis). ``run``: ``run_dir`` as
    ``load_run_dir(run_dir, condition)`` read it, by a caller that holds the lock and reuses it
    (a study's finish hands the same one to the report: reading a run's episodes is most of
    what diagnosing it costs). ``workers``: processes the conditions are diagnosed in, side by
    side (``side_by_side``; one for a caller that may share its process, such as the web app)."""
    step = on_step or (lambda _: None)
    existing_dir(run_dir, "run directory")
    folder, inside = (run_dir, run_dir) if out_dir is None else (out_dir, None)
    lock: AbstractContextManager[object] = (
        run_lock(run_dir, "diagnose") if store and out_dir is None else read_lock(run_dir)
    )
    with lock:
        taken_from = inputs_of(run_dir, digests=True)  # before reading: a change while it
        # reads shows later
        run = run or load_run_dir(run_dir, condition)
        if store and not any((f / DIVERSITY_JSON).exists() for f in (run_dir, folder)):
            step("measuring simulator diversity")
            write_json(folder / DIVERSITY_JSON, measure_diversity(run), inside=inside)
        d = diagnose(
            run,
            thresholds,
            on_condition=lambda n: step(f"diagnosing {n} (replaying calls)"),
            workers=workers,
        )
        if store:
            write_json(
                diagnosis_path(folder, condition),
                {**d.model_dump(), INPUTS: taken_from, FORMAT: DIAGNOSIS_FORMAT},
                inside=inside,
            )
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


def _sha256(path: Path) -> str | None:
    """The SHA-256 of a regular file's bytes; None for anything else (a FIFO is never opened:
    that would wait for a writer) or a file that cannot be read."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None
        with path.open("rb") as f:
            return hashlib.file_digest(f, "sha256").hexdigest()
    except OSError:
        return None


def inputs_of(run_dir: Path, *, digests: bool = False) -> dict[str, list[int | str]]:
    """[size, modification time in ns] (and the SHA-256 of the bytes, with ``digests``) of
    every file a diagnosis of ``run_dir`` reads, by its path in the run: a study's
    ``study.json`` and ``config.yaml``, and each sub-run's logs, summaries and configs (or those
    of the run itself, when it is one sub-run)."""
    top = [run_dir / STUDY_JSON, run_dir / CONFIG_YAML, *(run_dir / n for n in sorted(_READ))]
    subs = [*run_dir.glob("conditions/*/*/*"), *run_dir.glob("reference/*/*")]
    out: dict[str, list[int | str]] = {}
    for path in [*top, *sorted(p for p in subs if p.name in _READ)]:
        try:
            st = os.stat(path)
        except OSError:
            continue
        entry: list[int | str] = [st.st_size, st.st_mtime_ns]
        if digests and (digest := _sha256(path)) is not None:
            entry.append(digest)
        out[str(path.relative_to(run_dir))] = entry
    return out


def changed_since(run_dir: Path, stored: Any) -> bool:
    """Whether the run changed since the diagnosis recording ``stored`` inputs was taken: a file
    added, gone, or of other size or bytes (the bytes are hashed only when the times differ and
    ``stored`` has digests; without them a new time is a change). One stored before inputs were
    recorded is taken as current."""
    if not isinstance(stored, dict):
        return False
    now = inputs_of(run_dir)
    if {k: v[:2] if isinstance(v, list) else v for k, v in stored.items()} == now:
        return False
    if stored.keys() != now.keys():
        return True
    for name, entry in stored.items():
        if not (isinstance(entry, list) and len(entry) == 3 and entry[0] == now[name][0]):
            return True
    return any(
        entry[1] != now[k][1] and _sha256(run_dir / k) != entry[2] for k, entry in stored.items()
    )


def _again(
    run_dir: Path,
    condition: str | None,
    stale: Diagnosis,
    folder: Path,
    run: RunDir | None,
    why: str,
) -> Diagnosis:
    """``stale`` (stored in ``folder``: the run, or a reader's ``--out``) taken again from the
    run as it is now (``run``, when the caller has read it already), stored back in ``folder``
    when it can be written; ``why`` it is stale, in words."""
    say = f"note: {diagnosis_path(folder, condition)}: {why}"
    print(f"{say}; diagnosing it again", file=sys.stderr)
    out_dir = None if folder == run_dir else folder
    try:
        return diagnose_run(run_dir, condition, stale.thresholds, out_dir=out_dir, run=run)
    except (UsageError, OutputError):  # a run this user cannot write (lock or file): not stored
        print(f"{say}; diagnosed again, not stored", file=sys.stderr)
        return diagnose(run or load_run_dir(run_dir, condition), stale.thresholds)


def measure_diversity(run: RunDir) -> StoredDiversity:
    """The diversity of the simulators the run's sub-runs trained on and were judged by; for an
    evaluation (nothing trained), of the members it played, split by split: its study file's
    training members are not what it met when it played the held-out split alone."""
    subs = [
        _played(sub) if run.kind == "evaluation" else (name, sub.trained_on, sub.heldout)
        for name, group in run.conditions.items()
        for sub in group
    ]
    if not any(trained or held for _, trained, held in subs):
        return StoredDiversity(
            rows=[], note="No simulator specs recorded (members.json missing): not measured."
        )
    return measure_groups(diversity_groups(subs), run.scenario, run.max_turns)


def _played(sub: SubRun) -> tuple[str, list[SimulatorSpec], list[SimulatorSpec]]:
    """An evaluation's members as it played them: (its name, training split, held-out split)."""
    members = [*sub.trained_on, *sub.heldout]
    train = {e.simulator_id for e in sub.evals if e.split == "train"}
    held = {e.simulator_id for e in sub.evals if e.split != "train"}
    return (
        sub.condition,
        [s for s in members if s.id in train],
        [s for s in members if s.id in held],
    )


def load_diagnosis(
    run_dir: Path,
    condition: str | None = None,
    *,
    folder: Path | None = None,
    run: RunDir | None = None,
) -> Diagnosis:
    """The stored diagnosis of ``run_dir``, read from ``folder`` (default the run; a reader's
    ``--out`` otherwise); for one ``condition``, its own file if ``sim2human diagnose
    --condition`` wrote one, else that condition of the whole run's. ``run``: ``run_dir`` as
    ``load_run_dir(run_dir, condition)`` read it, from a caller that has (the report): a
    diagnosis older than the run is taken again from it, not from a second read."""
    folder = folder or run_dir
    path = diagnosis_path(folder, condition)
    if condition is not None and not path.exists():
        whole = load_diagnosis(run_dir, folder=folder)
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
        raw = read_json_object(path, "diagnosis")
        taken_from = raw.pop(INPUTS, None)
        made_by = raw.pop(FORMAT, 1)
        d = Diagnosis.model_validate(raw)
    except UsageError as err:
        raise RunDirError(str(err)) from None
    except ValidationError as err:
        first = err.errors()[0]
        loc = ".".join(str(p) for p in first["loc"])
        raise RunDirError(
            f"{path}: not a diagnosis ({loc}: {first['msg']}); rewrite it with "
            f"`sim2human diagnose {run_dir}`"
        ) from None
    if made_by != DIAGNOSIS_FORMAT:
        why = "it was taken by another version, which judged runs differently"
        return _again(run_dir, condition, d, folder, run, why)
    if changed_since(run_dir, taken_from):
        return _again(run_dir, condition, d, folder, run, "the run changed since it was taken")
    return d


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
