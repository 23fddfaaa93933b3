"""Reading a run directory for ``report`` and ``diagnose``, tolerant of partial and broken runs.

A run directory is either a study (``conditions/<name>/seed-<k>/`` sub-runs, maybe
``reference/<agent>/`` and ``study.json``) or one sub-run (``episodes.jsonl``, ``metrics.jsonl``,
``config.json``, ``members.json``, ``summary.json``). Whatever can be read is read; whatever is
missing or broken becomes a line in ``problems`` (file and line named), so the report can be
partial instead of absent. Only a directory with nothing usable in it is an error, and one
that mixes in another scenario's episodes (named by file: judging them as this scenario's would
be wrong, not partial).

A finished sub-run whose log falls short of what its ``summary.json`` counts (cut, or edited
after it finished: ``experiments.study.wholeness``) reads as unfinished: a problem names it and the
counts, and its evaluation is left out rather than judged as a smaller one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from sim2human.errors import RunDirError, UsageError
from sim2human.experiments.study.config import EvalConfig
from sim2human.experiments.study.results import StudyResult, load_study_result
from sim2human.experiments.study.wholeness import foreign, shortfall
from sim2human.scenarios.catalog import DEFAULT_SCENARIO, get_scenario
from sim2human.scenarios.core import AnyScenario
from sim2human.simulators.base import SimulatorSpec
from sim2human.store import collector
from sim2human.store.layout import (
    CHECKS_LOG,
    CONFIG,
    CONFIG_YAML,
    EPISODES,
    MEMBERS,
    METRICS,
    STUDY_JSON,
    SUMMARY,
    RunLayout,
)
from sim2human.store.loading import (
    MAX_JSON_BYTES,
    existing_dir,
    read_bytes,
    read_json_object,
    read_yaml,
)
from sim2human.store.rundir import BadLine, check_unique, episode_lines, json_lines, log_lines
from sim2human.train.config import PPOConfig
from sim2human.types import Episode


@dataclass
class SubRun:
    path: Path
    condition: str
    run: str
    """The training run's name within its condition (``seed-0``...)."""
    config: dict[str, Any] | None = None
    summary: dict[str, Any] | None = None
    trained_on: list[SimulatorSpec] = field(default_factory=list)
    heldout: list[SimulatorSpec] = field(default_factory=list)
    quirk_phrasings: list[str] = field(default_factory=list)
    metrics: list[dict[str, Any]] = field(default_factory=list)
    episodes: list[Episode] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    torn: str = ""
    """How its log falls short of what its summary records (``experiments.study.wholeness``); a
    torn sub-run reads as unfinished, its evaluation left out."""

    @property
    def evals(self) -> list[Episode]:
        return [e for e in self.episodes if e.phase == "eval"]

    @property
    def specs(self) -> dict[str, SimulatorSpec]:
        return {s.id: s for s in [*self.trained_on, *self.heldout]}

    @property
    def max_turns(self) -> int:
        """The turn limit the run played with (``train.max_turns`` in its config; a sub-run
        without one, such as the scripted reference, played with the default)."""
        limit = ((self.config or {}).get("train") or {}).get("max_turns")
        return limit if isinstance(limit, int) else int(PPOConfig().max_turns)

    @property
    def finished(self) -> bool:
        return self.summary is not None and not self.torn


@dataclass
class RunDir:
    root: Path
    kind: str
    """``study``, ``sub-run``, or ``evaluation`` (a sub-run that trained nothing: ``eval-agent``,
    an adapter's evaluation), so a report of it never reads as one of training."""
    name: str
    conditions: dict[str, list[SubRun]]
    reference: dict[str, SubRun] = field(default_factory=dict)
    study: StudyResult | None = None
    problems: list[str] = field(default_factory=list)
    n_boot: int = EvalConfig().bootstrap
    """Bootstrap replicates: the study's ``eval.bootstrap`` (its config.yaml), as study.json's."""
    scenario_name: str = DEFAULT_SCENARIO
    """The study's scenario (``_scenario_name``); every episode read is of it."""

    @property
    def scenario(self) -> AnyScenario:
        """The study's scenario from the catalog."""
        return get_scenario(self.scenario_name)

    @property
    def sub_runs(self) -> list[SubRun]:
        """Every sub-run read: each condition's, then the reference agents'."""
        return [*(s for runs in self.conditions.values() for s in runs), *self.reference.values()]

    @property
    def max_turns(self) -> int:
        """The turn limit the study played with (its sub-runs' ``train.max_turns``)."""
        subs = [s for runs in self.conditions.values() for s in runs if s.config is not None]
        return subs[0].max_turns if subs else int(PPOConfig().max_turns)

    def all_problems(self) -> list[str]:
        return [*self.problems, *(p for s in self.sub_runs for p in s.problems)]


def _json(path: Path, problems: list[str], required: bool = True) -> dict[str, Any] | None:
    """A JSON object from ``path``; anything else (missing, unreadable, not an object) is a
    line in ``problems`` and None."""
    if not path.exists() and not path.is_symlink():
        if required:
            problems.append(f"{path}: missing")
        return None
    try:
        return read_json_object(path)
    except UsageError as err:
        problems.append(str(err))
    return None


def _lines(path: Path, problems: list[str]) -> tuple[list[str], list[str]]:
    """The lines of a log, and what is wrong with those that are not UTF-8 text (each is blank
    in the lines, so the others keep their numbers; a torn last line is skipped silently, as
    one of JSON is); no lines (and a line in ``problems``) when the file cannot be read."""
    if not path.exists() and not path.is_symlink():
        problems.append(f"{path}: missing")
        return [], []
    try:  # stat-ed first: a directory, FIFO or device here is a problem, never a hang
        data = read_bytes(path, "log", MAX_JSON_BYTES)
    except UsageError as err:
        problems.append(str(err))
        return [], []
    try:
        return log_lines(data.decode("utf-8")), []
    except UnicodeDecodeError:
        return _undecodable(data)


def _undecodable(data: bytes) -> tuple[list[str], list[str]]:
    """``_lines`` of a log with bytes that are not UTF-8: decoded with ``surrogateescape`` (bad
    bytes become lone surrogates, never line breaks, so lines split as the text's would)."""
    text = data.decode("utf-8", "surrogateescape")
    lines = log_lines(text)
    bad: list[str] = []
    for i, line in enumerate(lines):
        try:
            line.encode("utf-8")
        except UnicodeEncodeError as err:
            lines[i] = ""
            if i < len(lines) - 1 or text.endswith(("\n", "\r")):
                bad.append(f"line {i + 1}: not UTF-8 text (at character {err.start + 1})")
    return lines, bad


def _corrupted(path: Path, bad: list[str], problems: list[str]) -> None:
    if bad:
        problems.append(f"{path}: {len(bad)} corrupted line(s) skipped (first: {bad[0]})")


def _jsonl(path: Path, problems: list[str]) -> list[tuple[int, Any]]:
    """(line number, object) of every readable line; unreadable lines are counted, not fatal."""
    out: list[tuple[int, Any]] = []
    lines, bad = _lines(path, problems)
    for number, row in json_lines(lines):
        if isinstance(row, BadLine):
            bad.append(f"line {number}: {row.detail}")
        else:
            out.append((number, row))
    _corrupted(path, sorted(bad, key=_line_number), problems)
    return out


def _line_number(described: str) -> int:
    return int(described.split(":", 1)[0].removeprefix("line "))


def _episodes(path: Path, problems: list[str]) -> tuple[list[Episode], int]:
    """Every episode of a log (``store.episode_lines``), and how many lines were skipped: those
    that are not UTF-8, not JSON, or not episodes, counted in ``problems``."""
    episodes: list[Episode] = []
    numbers: list[int] = []
    lines, corrupted = _lines(path, problems)
    bad: list[str] = []
    with collector.paused():
        for number, episode in episode_lines(lines):
            if isinstance(episode, BadLine):
                not_json = episode.what == "not valid JSON"
                (corrupted if not_json else bad).append(f"line {number}: {episode.detail}")
                continue
            episodes.append(episode)
            numbers.append(number)
    _corrupted(path, sorted(corrupted, key=_line_number), problems)
    if bad:
        problems.append(f"{path}: {len(bad)} line(s) are not episodes (first: {bad[0]})")
    check_unique(zip(numbers, (e.id for e in episodes), strict=True), path)  # never count twice
    return episodes, len(corrupted) + len(bad)


def _specs(rows: Any, where: str, problems: list[str]) -> list[SimulatorSpec]:
    try:
        return [SimulatorSpec.model_validate(r) for r in rows or []]
    except ValidationError as err:
        problems.append(f"{where}: not a list of simulator specs ({err.errors()[0]['msg']})")
        return []


def load_sub_run(
    path: Path, condition: str | None = None, run: str | None = None, *, reference: bool = False
) -> SubRun:
    """One sub-run; a ``reference`` agent's directory has only episodes and a summary."""
    problems: list[str] = []
    config = _json(path / CONFIG, problems, required=not reference)
    if condition is None:
        cond = (config or {}).get("condition")
        condition = cond.get("name", path.parent.name) if isinstance(cond, dict) else path.name
    sub = SubRun(
        path=path, condition=condition, run=run or path.name, config=config, problems=problems
    )
    sub.summary = _json(path / SUMMARY, [], required=False)
    members = _json(path / MEMBERS, [], required=False)
    if sub.summary is None or (members is None and not reference):
        problems.append(
            f"{path}: training or evaluation did not finish (no {SUMMARY} / {MEMBERS}); "
            "showing what was logged"
        )
    if isinstance(members, dict):
        sub.trained_on = _specs(members.get("trained_on"), str(path / MEMBERS), problems)
        sub.heldout = _specs(members.get("heldout"), str(path / MEMBERS), problems)
        sub.quirk_phrasings = [str(p) for p in members.get("trained_quirk_phrasings", [])]
    if not reference:
        sub.metrics = [r for _, r in _jsonl(path / METRICS, problems) if isinstance(r, dict)]
    sub.episodes, skipped = _episodes(path / EPISODES, problems)
    if sub.summary is not None and (torn := shortfall(sub.summary, sub.episodes, skipped)):
        sub.torn = torn
        sub.episodes = [e for e in sub.episodes if e.phase != "eval"]
        problems.append(
            f"{path}: torn: its {torn}; its evaluation is left out (`sim2human study CONFIG "
            "--resume --out RUN_DIR` runs it again)"
        )
    return sub


def load_run_dir(path: Path, condition: str | None = None) -> RunDir:
    """A study directory or one sub-run; ``condition`` keeps only that condition's runs."""
    existing_dir(path, "run directory")
    if RunLayout(path).conditions.is_dir() or (path / STUDY_JSON).exists():
        run = _load_study(path)
    elif (path / EPISODES).exists() or (path / METRICS).exists() or (path / CONFIG).exists():
        sub = load_sub_run(path)
        trained = any(e.phase != "eval" for e in sub.episodes) or bool(sub.metrics)
        run = RunDir(
            root=path,
            kind="sub-run" if trained else "evaluation",
            name=sub.condition,
            conditions={sub.condition: [sub]},
        )
    else:
        raise RunDirError(
            f"{path}: not a run directory (expected a study with conditions/ or study.json, "
            f"or a sub-run with {EPISODES}, {METRICS} and {CONFIG})"
        )
    run.scenario_name, whose = _scenario_name(run)
    for sub in run.sub_runs:  # another study's episodes are refused, not judged as this one's
        if wrong := foreign(sub.episodes, run.scenario_name, sub.path / EPISODES, whose):
            raise wrong
    if condition is not None:
        if condition not in run.conditions:
            known = ", ".join(run.conditions) or "none"
            raise UsageError(f"{path}: no condition {condition!r} (conditions here: {known})")
        run.conditions = {condition: run.conditions[condition]}
    if not any(s.episodes or s.metrics for runs in run.conditions.values() for s in runs):
        raise RunDirError(
            f"{path}: nothing to read: no episodes or metrics were logged"
            + "".join(f"\n  {p}" for p in run.all_problems()[:8])
        )
    return run


def _load_study(path: Path) -> RunDir:
    problems: list[str] = []
    study: StudyResult | None = None
    if (path / STUDY_JSON).exists() or (path / STUDY_JSON).is_symlink():
        try:
            study = load_study_result(path)
        except RunDirError as err:
            problems.append(str(err))
    elif not (path / CHECKS_LOG).is_file():  # a trainer's collapse checks have no study.json
        problems.append(
            f"{path / STUDY_JSON}: missing (the study did not finish: table rebuilt from the "
            "sub-runs found)"
        )
    conditions: dict[str, list[SubRun]] = {}
    root = RunLayout(path).conditions
    for cond_dir in sorted(root.iterdir()) if root.is_dir() else []:
        if cond_dir.is_dir():
            runs = sorted((d for d in cond_dir.iterdir() if d.is_dir()), key=_seed_order)
            conditions[cond_dir.name] = [load_sub_run(d, cond_dir.name, d.name) for d in runs]
    order = [r.name for r in study.conditions] if study is not None else []
    conditions = dict(sorted(conditions.items(), key=lambda kv: _rank(order, kv[0])))
    reference = {}
    ref_root = RunLayout(path).references
    for ref in sorted(ref_root.iterdir()) if ref_root.is_dir() else []:
        if ref.is_dir():
            reference[ref.name] = load_sub_run(ref, ref.name, "reference", reference=True)
    return RunDir(
        root=path,
        kind="study",
        name=study.study if study is not None else path.name,
        conditions=conditions,
        reference=reference,
        study=study,
        problems=problems,
        n_boot=_n_boot(path / CONFIG_YAML),
    )


def _scenario_name(run: RunDir) -> tuple[str, str]:
    """The run's scenario and where it comes from: its study.json, else its stored config, else
    (a lone sub-run, a directory of human calls) its first episode; ``intake`` by default, the
    scenario of every study.json from before scenarios had names."""
    if run.study is not None:
        return run.study.scenario, "the study's scenario"
    config = run.root / CONFIG_YAML
    try:
        raw = read_yaml(config, "stored study config") if config.is_file() else {}
    except UsageError:
        raw = {}
    if isinstance(raw, dict) and isinstance(raw.get("scenario"), str):
        return raw["scenario"], f"the scenario of {config}"
    first = next((s for s in run.sub_runs if s.episodes), None)
    if first is not None:
        return first.episodes[0].scenario, f"that of the first log read ({first.path / EPISODES})"
    return DEFAULT_SCENARIO, "the default scenario"


def _n_boot(config: Path) -> int:
    """``eval.bootstrap`` of a stored study config; the default when it has none."""
    try:
        raw = read_yaml(config, "stored study config") if config.is_file() else {}
    except UsageError:
        raw = {}
    ev = raw.get("eval") if isinstance(raw, dict) else None
    value = ev.get("bootstrap") if isinstance(ev, dict) else None
    return value if isinstance(value, int) and value > 0 else EvalConfig().bootstrap


def _seed_order(d: Path) -> tuple[int, str]:
    tail = d.name.rsplit("-", 1)[-1]
    return (int(tail), d.name) if tail.isdigit() else (1 << 30, d.name)


def _rank(order: list[str], name: str) -> tuple[int, str]:
    return (order.index(name), name) if name in order else (len(order), name)
