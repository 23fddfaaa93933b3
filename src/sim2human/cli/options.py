"""Number options that are finite and inside stated bounds, or one clear usage error (exit 2);
``--data``, the corpus folder, checked and handed to worker processes; ``--max-concurrency``,
which ``study`` and ``eval-agent`` share; ``study --seeds`` and ``--log-to``; and the readers'
``--scenario-path``, the only folders a run's stored ``module:Name`` is imported from.

Hand-written because click's ``FloatRange`` lets ``inf`` through any open upper end (``--timeout-s
inf`` then waits forever) and refuses NaN with a misleading "should be greater than the minimum".
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer

from sim2human import corpora
from sim2human.corpora import aci_bench
from sim2human.errors import UsageError
from sim2human.scenarios.refs import allow

CapOpt = Annotated[
    int | None,
    typer.Option(
        "--max-concurrency",
        min=1,
        max=1024,
        help="Requests in flight per endpoint server and conversations in flight, in each "
        "process (default: the study file's max_concurrency and llm.conversations); an "
        "embedded model keeps its own parallel slots.",
    ),
]
"""``--max-concurrency`` of ``study`` and ``eval-agent`` (``LLMSettings.capped``)."""
LogToOpt = Annotated[
    str | None,
    typer.Option(
        "--log-to",
        help="Also log each sub-run's training curves to tensorboard, wandb and/or mlflow "
        "(comma-separated; offline, inside the run; each needs its extra).",
    ),
]
"""``study --log-to``."""


def _scenario_path(folders: list[Path] | None) -> list[Path] | None:
    """``--scenario-path``: each a folder, then allowed (``scenarios.refs.allow``) for the
    rest of the verb, its workers included."""
    for folder in folders or []:
        if not folder.is_dir():
            raise typer.BadParameter(f"{folder}: not a folder")
    allow(*(folders or []))
    return folders


ScenarioPathOpt = Annotated[
    list[Path] | None,
    typer.Option(
        "--scenario-path",
        metavar="DIR",
        callback=_scenario_path,
        help="A folder the run's stored `scenario: module:Name` may be imported from "
        "(repeatable). Without it only installed packages are: a run directory never runs "
        "code from itself or the working directory.",
    ),
]
"""The readers' ``--scenario-path`` (``view``, ``compare``, ``report``, ``diagnose``,
``export``, ``fidelity``, ``stress``, ``predictivity``), and ``study``'s (a module kept beside
the code it serves rather than beside the study file)."""
ExecutorOption = Annotated[
    str,
    typer.Option(
        "--executor",
        help="Where sub-runs run: local (processes on this machine) or ray (Ray actors; "
        "needs the ray extra). A study resumes on either.",
    ),
]
AddressOption = Annotated[
    str | None,
    typer.Option(
        "--address",
        help="With --executor ray: the cluster to join (auto, or ray://HOST:PORT); "
        "default: a local Ray cluster on this machine.",
    ),
]
OnRayLossOpt = Annotated[
    str,
    typer.Option(
        "--on-ray-loss",
        metavar="fail|local",
        help="With --executor ray, when the Ray cluster is lost: fail the sub-runs it held "
        "(exit 1; --resume later), or run them and the rest on this machine (local).",
    ),
]
SeedsOpt = Annotated[
    str | None,
    typer.Option(
        "--seeds",
        help="Comma-separated seeds to run instead of the study file's (after --quick's): "
        "`--quick --seeds 0,1,2` is the quick study over three seeds.",
    ),
]


def parse_seeds(text: str | None) -> tuple[int, ...] | None:
    """``--seeds 0,1,2`` as seeds (the study file checks them: distinct, in range)."""
    if text is None:
        return None
    parts = [p.strip() for p in text.split(",")]
    if not all(p.isdigit() for p in parts):
        raise UsageError(f"--seeds {text!r}: give comma-separated non-negative integers (0,1,2)")
    return tuple(int(p) for p in parts)


def finite(low: float, high: float, *, low_open: bool = False) -> Callable[[str], float]:
    """A typer ``parser``: the text as a float in ``[low, high]`` (``(low, high]`` if open)."""
    span = f"{'(' if low_open else '['}{low:g}, {high:g}]"

    def parse(text: str | float) -> float:
        try:
            value = float(text)
        except ValueError:
            raise typer.BadParameter(f"{text!r} is not a number in {span}") from None
        if not math.isfinite(value):
            raise typer.BadParameter(f"{text} is not a finite number; give one in {span}")
        if value < low or (low_open and value == low) or value > high:
            raise typer.BadParameter(f"{text} is outside {span}")
        return value

    return parse


def use_corpus(data: Path) -> None:
    """Point sub-runs (and worker processes) at ``--data`` through the environment."""
    if why := aci_bench.missing(data):
        raise UsageError(f"--data {data}: {why}")
    os.environ[corpora.ENV] = str(data.resolve())
