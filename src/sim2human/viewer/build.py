"""``sim2human view`` and ``sim2human compare``: the pages as HTML text (the caller writes them)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from sim2human.diagnostics.rundir import RunDir, SubRun
from sim2human.errors import UsageError
from sim2human.experiments.study.agent_record import population_hash
from sim2human.metrics.outcomes import GOLDS
from sim2human.scenarios.core import headline_metric
from sim2human.viewer.compare import Comparison, Side, comparison_data, side
from sim2human.viewer.data import Group, matrices, page_data
from sim2human.viewer.load import Note, load_groups, stored_diagnosis
from sim2human.viewer.page import compare_html, condition_rows, view_html


def build_view(
    run_dir: Path, note: Note, *, condition: str | None = None, only_failed: bool = False
) -> str:
    """The page of ``run_dir`` (only ``condition`` when given; only failed episodes with
    ``only_failed``, which also starts the page filtered to failures)."""
    run, groups = load_groups(run_dir, condition)
    notes: list[str] = []

    def both(msg: str) -> None:
        note(msg)
        notes.append(msg)

    stored = stored_diagnosis(run_dir, condition, both)
    problems = run.all_problems()
    if problems:
        both(f"{len(problems)} problem(s) reading the run (first: {problems[0]})")
    data = page_data(groups, stored.flags, only_failed=only_failed)
    if only_failed:
        notes.append("only failed episodes are included (--only-failed)")
    title = f"sim2human view: {run.name} ({run_dir})"
    initial = {"outcome": "failures"} if only_failed else {}
    return view_html(
        title,
        data,
        condition_rows(groups, run.n_boot, stored.transfers, GOLDS[headline_metric(run.scenario)]),
        matrices(groups),
        notes,
        initial,
    )


def _label(path: Path, other: Path) -> str:
    return str(path) if path.name == other.name and path != other else path.name


def _pick(label: str, groups: Sequence[Group], name: str, where: Path) -> Side:
    found = side(label, groups, name)
    if found is None:
        known = ", ".join(dict.fromkeys(g.condition for g in groups)) or "none"
        raise UsageError(f"{where}: no evaluation episodes of condition {name!r} (here: {known})")
    return found


def sides_of(
    a: tuple[Path, list[Group]], b: tuple[Path, list[Group]], conditions: Sequence[str]
) -> list[tuple[Side, Side]]:
    """The pairs to compare: the two ``conditions`` given (the first in ``a``, the second in
    ``b``), else every condition both runs have."""
    (pa, ga), (pb, gb) = a, b
    la, lb = (_label(pa, pb), _label(pb, pa)) if pa != pb else (pa.name, pa.name)
    if conditions:
        return [(_pick(la, ga, conditions[0], pa), _pick(lb, gb, conditions[1], pb))]
    names_b = {g.condition for g in gb}
    shared = [n for n in dict.fromkeys(g.condition for g in ga) if n in names_b]
    if not shared:
        raise UsageError(f"{pa} and {pb} have no condition in common: name two with --conditions")
    return [(_pick(la, ga, n, pa), _pick(lb, gb, n, pb)) for n in shared]


def build_compare(
    run_a: Path, run_b: Path | None, conditions: Sequence[str], note: Note
) -> tuple[str, list[Comparison]]:
    """The compare page of two runs (``run_b``), or of two ``conditions`` of one."""
    if run_b is None and len(conditions) != 2:
        raise UsageError("compare: give a second run directory, or --conditions A B")
    if conditions and len(conditions) != 2:
        raise UsageError(f"--conditions takes two condition names, got {len(conditions)}")
    first, groups_a = load_groups(run_a, None)
    second, groups_b = (first, groups_a) if run_b is None else load_groups(run_b, None)
    other = run_b or run_a
    pairs = [
        named(a, b, first, second)
        for a, b in sides_of((run_a, groups_a), (other, groups_b), conditions)
    ]
    comparisons, data, extra = comparison_data(pairs, first.n_boot)
    runs = [first] if second is first else [first, second]
    notes = [f"{len(p)} problem(s) reading {r.root}" for r in runs if (p := r.all_problems())]
    notes += [
        f"two populations: {a.label} played population {a.population}, {b.label} "
        f"{b.population}; their numbers are not comparable (members defined differently)"
        for a, b in pairs
        if a.population and b.population and a.population != b.population
    ]
    if first.scenario_name != second.scenario_name:  # said, not refused: one may mean it
        notes.append(
            f"two scenarios: {first.root} is of {first.scenario_name!r}, {second.root} of "
            f"{second.scenario_name!r}; their gold grades two different tasks"
        )
    for n in notes:
        note(n)
    title = f"sim2human compare: {' | '.join(f'{a.label} vs {b.label}' for a, b in pairs)}"
    return compare_html(title, data, extra, comparisons, notes), comparisons


def _subs(run: RunDir, condition: str) -> list[SubRun]:
    ref = run.reference.get(condition)
    return run.conditions.get(condition) or ([ref] if ref is not None else [])


def agent_label(subs: Sequence[SubRun]) -> str | None:
    """The label of the agent the sub-runs evaluated (``eval-agent``'s ``config.json``
    ``agent.label``), when they record one and the same."""
    found = set()
    for s in subs:
        agent = (s.config or {}).get("agent")
        label = agent.get("label") if isinstance(agent, dict) else None
        found.add(label if isinstance(label, str) and label.strip() else None)
    return found.pop() if len(found) == 1 else None


def population(subs: Sequence[SubRun]) -> str | None:
    """The short content hash of the members the sub-runs played: as ``eval-agent`` recorded
    it, else computed from their ``members.json`` the same way; None when a member played is
    not defined there."""
    recorded = {(s.config or {}).get("population_hash") for s in subs}
    if len(recorded) == 1 and isinstance(only := recorded.pop(), str):
        return only
    specs = {m.id: m for s in subs for m in (*s.trained_on, *s.heldout)}
    played = {e.simulator_id for s in subs for e in s.evals}
    if not played or not played <= specs.keys():
        return None
    return population_hash([specs[i] for i in sorted(played)])


def named(a: Side, b: Side, run_a: RunDir, run_b: RunDir) -> tuple[Side, Side]:
    """``a`` and ``b`` named by their agents' labels where their runs record one (with the
    folder beside it when the two are alike), with their populations' hashes."""
    subs_a, subs_b = (_subs(run_a, a.groups[0].condition), _subs(run_b, b.groups[0].condition))
    la, lb = agent_label(subs_a) or a.label, agent_label(subs_b) or b.label
    if la == lb and a.label != b.label:
        la, lb = f"{la} ({a.label})", f"{lb} ({b.label})"
    return (
        replace(a, label=la, population=population(subs_a)),
        replace(b, label=lb, population=population(subs_b)),
    )
