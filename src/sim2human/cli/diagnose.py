"""``sim2human diagnose RUN_DIR``: judge a run, store the result (``diagnosis.json``, which the
reports render) and print the collapse findings; a gate for a user's CI.

A run it may not write (read-only to this user, or a study still running) is judged all the
same: the findings are printed and the diagnosis stored only with ``--out DIR``
(``cli/reading.py``).

Exit codes: 0 clean (or findings printed without ``--fail-on-collapse``), 1 collapse detected
with ``--fail-on-collapse``, 2 bad usage or a run directory with nothing to judge, 3 "cannot
judge" (too few episodes, or gold too low everywhere) with ``--fail-on-collapse``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from sim2human.cli.options import ScenarioPathOpt, finite
from sim2human.cli.output import JsonOpt, Output, QuietOpt
from sim2human.diagnostics.verdict import GATE_MIN_N, Thresholds
from sim2human.errors import RunDirError
from sim2human.metrics.against_start import GROUPS, Change
from sim2human.metrics.heard_unrecorded import Unrecorded
from sim2human.metrics.outcomes import Estimate, fmt_change
from sim2human.metrics.task_pay import TaskPay

DEFAULTS = Thresholds()


def _share(flag: str, help_text: str) -> Any:
    """A threshold option: a finite share from 0 to 1."""
    return typer.Option(flag, parser=finite(0.0, 1.0), metavar="FLOAT", help=help_text)


RunDirArg = Annotated[Path, typer.Argument(help="A study directory or one sub-run directory.")]
ConditionOpt = Annotated[
    str | None,
    typer.Option("--condition", help="In a study directory: judge this condition (all seeds)."),
]
FailOpt = Annotated[
    bool, typer.Option("--fail-on-collapse", help="Exit 1 when collapse is detected.")
]
GapOpt = Annotated[
    float,
    _share("--max-gap", "Largest allowed (satisfaction - success) on training members, 0-1."),
]
OutOpt = Annotated[
    Path | None,
    typer.Option(
        "--out",
        help="Store the diagnosis in this folder, not in the run (a read-only or running run).",
    ),
]
DropOpt = Annotated[
    float,
    _share("--max-drop", "Largest allowed drop in success from training to held-out members, 0-1."),
]
LossOpt = Annotated[
    float,
    _share(
        "--max-loss",
        "A trained language-model agent: largest allowed fall below its warm start's "
        "success on the same held-out calls (and widening of its drop), 0-1.",
    ),
]
MinNOpt = Annotated[int, typer.Option("--min-n", min=1, help="Fewest episodes per side to judge.")]
MinGoldOpt = Annotated[
    float,
    _share("--min-gold", "Gold one side must reach to judge, 0-1."),
]


def diagnose(
    run_dir: RunDirArg,
    condition: ConditionOpt = None,
    fail_on_collapse: FailOpt = False,
    max_gap: GapOpt = DEFAULTS.max_gap,
    max_drop: DropOpt = DEFAULTS.max_drop,
    max_loss: LossOpt = DEFAULTS.max_loss,
    min_n: MinNOpt = GATE_MIN_N,
    min_gold: MinGoldOpt = DEFAULTS.min_gold,
    out_dir: OutOpt = None,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
    scenario_path: ScenarioPathOpt = None,
) -> None:
    """Judge a run: did the agent learn the task, or its simulator?

    Stores the diagnosis in the run (diagnosis.json, or diagnosis.CONDITION.json with
    --condition) for `sim2human report` to render; in --out DIR instead when given. A run this
    user cannot write, or a study still running, is judged all the same: without --out the
    verdicts are printed and nothing is stored.

    Exit code: 1 when collapse is detected and --fail-on-collapse is given; 3 when a condition
    cannot be judged (under --min-n episodes, or gold under --min-gold everywhere) and
    --fail-on-collapse is given; 0 otherwise; 2 on bad usage or nothing to judge.
    """
    from sim2human.cli.progress import steps
    from sim2human.cli.reading import noter, reading
    from sim2human.diagnostics.stored import diagnose_run

    output = Output(as_json, quiet)
    out, err = output.table_console(Console()), output.progress_console()
    limits = Thresholds(
        max_gap=max_gap, max_drop=max_drop, max_loss=max_loss, min_n=min_n, min_gold=min_gold
    )
    with reading(run_dir, out_dir, "diagnose", noter(err, run_dir)) as r:
        if r.store is None:
            err.print(f"note: {r.unstored('the diagnosis')}", highlight=False, soft_wrap=True)
        first = "replaying conversations to find exploited phrasings"
        with steps(err, run_dir, first, "diagnose") as status:
            d = diagnose_run(
                run_dir,
                condition,
                limits,
                on_step=lambda what: status.update(what),
                out_dir=None if r.store in (None, run_dir) else r.store,
                store=r.store is not None,
                workers=os.cpu_count() or 1,
            )
    for p in d.problems:
        err.print(f"[yellow]warning[/]: {p}", highlight=False)
    judged = [c for c in d.conditions if c.verdict.checked]
    for c in d.conditions:
        _print_verdict(out, c, fail_on_collapse)
    output.emit(_document(run_dir, d.problems, d.conditions))
    thin = [c.name for c in d.conditions if c.verdict.cannot_judge]
    if not judged and not thin:
        raise RunDirError(f"{run_dir}: nothing to judge: no condition has a finished evaluation")
    if fail_on_collapse:
        _gate([c.name for c in judged if c.verdict.collapse], thin)


def _print_verdict(out: Console, c: Any, gate: bool) -> None:
    """A condition's verdict line (red for "cannot judge" under the ``gate``: it fails it), and
    for a language-model agent how much it says in its own words."""
    colour = "red" if c.verdict.collapse else ("green" if c.verdict.checked else "yellow")
    colour = "red" if c.verdict.cannot_judge and gate else colour
    out.print(f"[{colour}]{c.verdict.headline}[/]", highlight=False)
    if c.own_words is not None:
        out.print(
            f"  own words: {c.own_words:.0%} of its held-out turns are no line of its "
            "warm start's corpus",
            highlight=False,
        )
    if c.task_pay is not None:
        out.print(f"  task pay: {task_pay_words(c.task_pay)}", highlight=False)
    if c.unrecorded:
        out.print(f"  heard, not recorded: {unrecorded_words(c.unrecorded)}", highlight=False)
    if c.against_start:
        words = against_start_words(c.against_start)
        out.print(f"  against its warm start: {words}", highlight=False)
    if c.quirk_share_against_start is not None:
        start, own = c.quirk_share_against_start
        out.print(
            f"  quirk phrasings (its training members'): in {share_words(own)} of its held-out "
            f"turns; {share_words(start)} of its warm start's, on the same calls",
            highlight=False,
        )


def task_pay_words(pay: TaskPay) -> str:
    """What the training reward paid for the task within GRPO's groups, in one sentence."""
    seen = (
        f"{pay.groups} of {pay.groups + pay.flat} groups differed in gold; {pay.calls} logged calls"
    )
    if not pay.groups:
        return f"nothing to read: no GRPO group's calls differed in gold ({seen})"
    lo, hi = pay.lift.ci
    return (
        f"{100 * pay.lift.mean:+.1f} points of proxy [{100 * lo:+.1f}, {100 * hi:+.1f}] to the "
        f"calls of a GRPO group that did the task better than the rest ({seen})"
    )


def unrecorded_words(found: Mapping[str, Unrecorded]) -> str:
    """What a tool agent's calls made heard and its submitted record lacks, in one sentence:
    on its training members (its own callers), then held out."""
    cells = {
        split: f"{u.share.mean:.0%} [{u.share.ci[0]:.0%}, {u.share.ci[1]:.0%}] ({u.unrecorded} "
        f"of {u.heard} in {u.calls} calls)"
        for split, u in found.items()
    }
    train = cells.get("train", "none read")
    held = f"; held out {cells['heldout']}" if "heldout" in cells else ""
    return (
        f"{train} of the fields its training members got across were missing from the record "
        f"it submitted{held}"
    )


def against_start_words(found: Mapping[str, Change]) -> str:
    """A trained agent's gold against its warm start's on the same calls, per group, in one
    sentence: ``training members 71 -> 77 (+6 [-6, +19], 48 calls)``..."""
    cells = []
    for group, words in GROUPS.items():
        if (c := found.get(group)) is None:
            continue
        cells.append(
            f"{words} {100 * c.start:.0f} -> {100 * c.trained:.0f} ({fmt_change(c.change)}, "
            f"{c.change.n} calls)"
        )
    return "; ".join(cells) + " (gold on the same calls, change with its 95% interval)"


def share_words(e: Estimate) -> str:
    """A share with its interval and count: ``19% [14%, 25%] of the 1,788``."""
    return f"{e.mean:.0%} [{e.ci[0]:.0%}, {e.ci[1]:.0%}] of the {e.n:,}"


def _gate(collapsed: list[str], thin: list[str]) -> None:
    """``--fail-on-collapse``: exit 1 on a collapse found, whatever else could not be judged (a
    collapse seen is the stronger news), else 3 when a condition could not be judged (a gate does
    not pass what it could not look at). Both lines print under ``--quiet`` too: they say why."""
    err = Console(stderr=True)
    if thin:
        err.print(f"[red]cannot judge[/] {', '.join(thin)}", highlight=False)
    if collapsed:
        err.print(f"[red]collapse detected[/] in {', '.join(collapsed)}", highlight=False)
        raise typer.Exit(1)
    if thin:
        raise typer.Exit(3)


def _document(run_dir: Path, problems: list[str], conditions: list[Any]) -> dict[str, Any]:
    """The verdicts under ``--json``: one entry per condition, as the lines above show them."""
    return {
        "run_dir": str(run_dir),
        "problems": list(problems),
        "conditions": [
            {
                "condition": c.name,
                "checked": c.verdict.checked,
                "cannot_judge": c.verdict.cannot_judge,
                "collapse": c.verdict.collapse,
                "headline": c.verdict.headline,
                "reasons": list(c.verdict.reasons),
                "task_pay": None if c.task_pay is None else c.task_pay.model_dump(mode="json"),
                "heard_unrecorded": {
                    split: u.model_dump(mode="json") for split, u in c.unrecorded.items()
                },
                "quirk_share_against_start": None
                if c.quirk_share_against_start is None
                else [e.model_dump(mode="json") for e in c.quirk_share_against_start],
                "against_start": {
                    group: change.model_dump(mode="json")
                    for group, change in c.against_start.items()
                },
            }
            for c in conditions
        ],
    }
