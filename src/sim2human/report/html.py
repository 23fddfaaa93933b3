"""``report.html`` (self-contained: PNGs embedded, no network), ``report.md`` and ``report.json``.

``write_report(run_dir)`` reads a study or sub-run directory (partial ones too), diagnoses every
condition, measures the simulators' diversity and renders the three files into that directory.
"""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from sim2human.diagnostics.analyse import Diagnosis, diagnose
from sim2human.diagnostics.rundir import RunDir, load_run_dir
from sim2human.diagnostics.simdiversity import DiversityRow, simulator_diversity
from sim2human.diagnostics.verdict import Thresholds
from sim2human.errors import ModelUnavailableError, UsageError
from sim2human.inputs import existing_dir
from sim2human.lock import run_lock
from sim2human.report import fidelity
from sim2human.report.diag_markdown import write_markdown
from sim2human.report.format import est, num, pct
from sim2human.report.plots import all_plots
from sim2human.scenarios.intake.scenario import IntakeScenario
from sim2human.simulators.base import SimulatorSpec

REPORT_HTML = "report.html"
REPORT_JSON = "report.json"


@dataclass(frozen=True)
class Written:
    html: Path
    markdown: Path
    json: Path
    diagnosis: Diagnosis


def diversity_groups(run: RunDir) -> dict[str, Sequence[SimulatorSpec]]:
    """Training ensemble(s), each frozen simulator, and the held-out ensemble, from members.json."""
    groups: dict[str, Sequence[SimulatorSpec]] = {}
    heldout: dict[str, SimulatorSpec] = {}
    for name, subs in run.conditions.items():
        for sub in subs:
            heldout.update({s.id: s for s in sub.heldout})
            seen = {s.id for g in groups.values() for s in g}
            if len(sub.trained_on) == 1 and sub.trained_on[0].id not in seen:
                groups[f"frozen ({name})"] = list(sub.trained_on)
            elif sub.trained_on:
                ids = tuple(s.id for s in sub.trained_on)
                if all(tuple(s.id for s in g) != ids for g in groups.values()):
                    groups[f"training ensemble ({name})"] = list(sub.trained_on)
    if heldout:
        groups["held-out ensemble"] = list(heldout.values())
    return groups


def _diversity(run: RunDir) -> tuple[list[DiversityRow], str]:
    # Persona members only: measuring an LLM member would need its endpoint at report time.
    groups = {
        name: persona
        for name, members in diversity_groups(run).items()
        if (persona := [s for s in members if s.kind == "persona"])
    }
    if not groups:
        return [], "No simulator specs recorded (members.json missing): diversity not measured."
    try:
        return simulator_diversity(groups, IntakeScenario(), max_turns=run.max_turns), ""
    except (UsageError, ModelUnavailableError) as err:
        return [], f"Diversity not measured: {err}"


def render_html(d: Diagnosis, diversity: list[DiversityRow], note: str) -> str:
    env = Environment(
        loader=PackageLoader("sim2human.report", "templates"),
        autoescape=select_autoescape(["html", "j2"]),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    plots = {k: base64.b64encode(v).decode("ascii") for k, v in all_plots(d.conditions).items()}
    texts = {r.phrasing: r.text for c in d.conditions for r in c.exploits}
    return env.get_template("report.html.j2").render(
        d=d, plots=plots, diversity=diversity, diversity_note=note, texts=texts,
        pct=pct, num=num, est=est,
    )  # fmt: skip


def _finite(x: Any) -> Any:
    """NaN (an estimate over no data) becomes null, so report.json is strict JSON."""
    if isinstance(x, float) and math.isnan(x):
        return None
    if isinstance(x, dict):
        return {k: _finite(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_finite(v) for v in x]
    return x


def write_report(
    run_dir: Path,
    *,
    condition: str | None = None,
    thresholds: Thresholds | None = None,
    console: Console | None = None,
) -> Written:
    """Diagnose ``run_dir`` and write report.html, report.md and report.json into it; for one
    ``condition``, ``report.<condition>.html`` (.md, .json) beside them, never over them.
    Holds the run directory's lock while it reads and writes."""
    console = console or Console(stderr=True)
    stem = "report" if condition is None else f"report.{condition}"
    note = lambda msg: console.print(f"note: {run_dir}: {msg}", soft_wrap=True)  # noqa: E731
    with run_lock(existing_dir(run_dir), "report", note=note):
        return _write_report(run_dir, condition, thresholds, console, stem)


def _write_report(
    run_dir: Path, condition: str | None, thresholds: Thresholds | None, console: Console,
    stem: str,
) -> Written:  # fmt: skip
    columns = (SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True) as bar:
        task = bar.add_task("reading the run directory")
        run = load_run_dir(run_dir, condition)
        step: Callable[[str], None] = lambda name: bar.update(  # noqa: E731
            task, description=f"diagnosing {name} (replaying conversations)"
        )
        d = diagnose(run, thresholds, on_condition=step)
        bar.update(task, description="measuring simulator diversity")
        diversity, note = _diversity(run)
        bar.update(task, description="measuring fidelity to human speech")
        fid = fidelity.for_report(run_dir, run)
        bar.update(task, description="writing the report")
        html = run_dir / f"{stem}.html"
        page = render_html(d, diversity, note).replace("</body>", fidelity.html(fid) + "</body>", 1)
        html.write_text(page, encoding="utf-8")
        md = write_markdown(d, diversity, run_dir, f"{stem}.md")
        md.write_text(md.read_text(encoding="utf-8") + "\n" + "\n".join(fidelity.markdown(fid)),
                      encoding="utf-8")  # fmt: skip
        js = run_dir / f"{stem}.json"
        payload: dict[str, Any] = {
            **d.model_dump(mode="json"),
            "diversity": [r.model_dump(mode="json") for r in diversity],
            "fidelity": fid.model_dump(mode="json"),
        }
        js.write_text(json.dumps(_finite(payload), indent=1) + "\n", encoding="utf-8")
    return Written(html=html, markdown=md, json=js, diagnosis=d)
