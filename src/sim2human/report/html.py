"""``report.html`` (self-contained: PNGs embedded, no network), ``report.md`` and ``report.json``.

``write_report(run_dir)`` reads a study or sub-run directory (partial ones too), diagnoses every
condition, measures the simulators' diversity and renders the three files into that directory.
"""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from sim2human.diagnostics.analyse import Diagnosis, diagnose
from sim2human.diagnostics.rundir import RunDir, load_run_dir
from sim2human.diagnostics.verdict import Thresholds
from sim2human.errors import RunDirError
from sim2human.experiments.diversity import (
    DIVERSITY_JSON,
    DiversityRow,
    StoredDiversity,
    diversity_groups,
    measure_groups,
)
from sim2human.inputs import existing_dir
from sim2human.lock import run_lock
from sim2human.report import fidelity
from sim2human.report.diag_markdown import write_markdown
from sim2human.report.format import est, num, pct
from sim2human.report.plots import all_plots
from sim2human.scenarios.intake.scenario import IntakeScenario

REPORT_HTML = "report.html"
REPORT_JSON = "report.json"


@dataclass(frozen=True)
class Written:
    html: Path
    markdown: Path
    json: Path
    diagnosis: Diagnosis


def _diversity(run: RunDir) -> tuple[list[DiversityRow], str]:
    """The study's stored measurement (taken beside training), else measured now."""
    stored = run.root / DIVERSITY_JSON
    if stored.is_file():
        try:
            found = StoredDiversity.model_validate_json(stored.read_text(encoding="utf-8"))
        except ValueError as err:
            raise RunDirError(f"{stored}: not a diversity measurement ({err})") from None
        return found.rows, found.note
    subs = [(name, sub.trained_on, sub.heldout) for name, group in run.conditions.items()
            for sub in group]  # fmt: skip
    if not subs:
        return [], "No simulator specs recorded (members.json missing): diversity not measured."
    measured = measure_groups(diversity_groups(subs), IntakeScenario(), run.max_turns)
    return measured.rows, measured.note


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
